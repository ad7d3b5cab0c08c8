package pcsign

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// planetaryComputerItem is shaped like a Planetary Computer sentinel-2-l2a
// item (ids and paths follow its conventions; trimmed to what signing
// touches): band files on Azure Blob Storage, a preview served by the
// Planetary Computer data API, one href already signed, and one asset with
// alternate locations.
const planetaryComputerItem = `{
  "type": "Feature",
  "stac_version": "1.0.0",
  "id": "S2A_MSIL2A_20231008T184321_R070_T10SEG_20231008T233000",
  "collection": "sentinel-2-l2a",
  "geometry": {"type": "Point", "coordinates": [-122.4, 37.8]},
  "bbox": [-122.4, 37.8, -122.4, 37.8],
  "properties": {"datetime": "2023-10-08T18:43:21.024000Z"},
  "links": [],
  "assets": {
    "B02": {"href": "` + azureHref + `", "type": "image/tiff; application=geotiff; profile=cloud-optimized", "roles": ["data"]},
    "visual": {"href": "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/10/S/EG/2023/10/08/TCI_10m.tif?versionid=1", "roles": ["visual"]},
    "presigned": {"href": "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/10/S/EG/2023/10/08/SCL_20m.tif?se=a&sig=old", "roles": ["data"]},
    "rendered_preview": {"href": "` + pcDataHref + `", "roles": ["overview"], "rel": "preview"},
    "safe-manifest": {
      "href": "https://sentinel2l2a01.blob.core.windows.net/sentinel2-l2/10/S/EG/2023/10/08/manifest.safe",
      "roles": ["metadata"],
      "alternate": {
        "mirror": {"href": "https://mirror01.blob.core.windows.net/sentinel2-l2/manifest.safe", "title": "Mirror & backup"},
        "s3": {"href": "` + s3Href + `"},
        "note": {"title": "no href here"}
      }
    }
  }
}`

func decodeItem(t *testing.T, text string) *stacclient.Item {
	t.Helper()
	var item stacclient.Item
	if err := json.Unmarshal([]byte(text), &item); err != nil {
		t.Fatalf("decoding the test item: %v", err)
	}
	return &item
}

func alternates(t *testing.T, asset stacclient.Asset) map[string]map[string]any {
	t.Helper()
	var alt map[string]map[string]any
	if err := json.Unmarshal(asset.Extra["alternate"], &alt); err != nil {
		t.Fatalf("decoding alternate: %v", err)
	}
	return alt
}

func TestSignItemSignsAzureAssetsAndAlternates(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{})
	item := decodeItem(t, planetaryComputerItem)
	original := *item // a shallow copy, as a cache would hand out
	originalAssets := map[string]string{}
	for key, asset := range item.Assets {
		originalAssets[key] = asset.Href
	}
	originalAlternate := string(item.Assets["safe-manifest"].Extra["alternate"])

	signed, err := signer.SignItem(context.Background(), item)
	if err != nil {
		t.Fatalf("SignItem: %v", err)
	}
	token := tokenValue("sentinel-2-l2a", 1)
	// B02, visual, safe-manifest and its mirror alternate.
	if signed != 4 {
		t.Errorf("signed = %d, want 4", signed)
	}
	want := map[string]string{
		"B02":              originalAssets["B02"] + "?" + token,
		"visual":           originalAssets["visual"] + "&" + token,
		"presigned":        originalAssets["presigned"],
		"rendered_preview": originalAssets["rendered_preview"],
		"safe-manifest":    originalAssets["safe-manifest"] + "?" + token,
	}
	for key, href := range want {
		if got := item.Assets[key].Href; got != href {
			t.Errorf("asset %s href\n got %s\nwant %s", key, got, href)
		}
	}
	alt := alternates(t, item.Assets["safe-manifest"])
	if got, want := alt["mirror"]["href"], "https://mirror01.blob.core.windows.net/sentinel2-l2/manifest.safe?"+token; got != want {
		t.Errorf("mirror alternate href\n got %v\nwant %s", got, want)
	}
	if alt["mirror"]["title"] != "Mirror & backup" || alt["s3"]["href"] != s3Href || alt["note"]["title"] != "no href here" {
		t.Errorf("alternate members other than the Azure href changed: %v", alt)
	}
	if raw := string(item.Assets["safe-manifest"].Extra["alternate"]); strings.Contains(raw, `\u0026`) {
		t.Errorf("signed alternate hrefs are HTML-escaped: %s", raw)
	}
	if item.Assets["B02"].Type != "image/tiff; application=geotiff; profile=cloud-optimized" ||
		string(item.Assets["rendered_preview"].Extra["rel"]) != `"preview"` {
		t.Errorf("asset members other than href changed: %+v", item.Assets)
	}
	if n := endpoint.count("sentinel-2-l2a"); n != 1 {
		t.Errorf("token requests = %d, want 1 for the whole item", n)
	}

	// The shallow copy taken before signing still sees the unsigned item.
	for key, href := range originalAssets {
		if got := original.Assets[key].Href; got != href {
			t.Errorf("the caller's earlier copy changed: asset %s is now %s", key, got)
		}
	}
	if got := string(original.Assets["safe-manifest"].Extra["alternate"]); got != originalAlternate {
		t.Errorf("the caller's earlier copy of alternate changed:\n%s", got)
	}

	// Signing again changes nothing: every href now has a signature.
	again, err := signer.SignItem(context.Background(), item)
	if err != nil || again != 0 {
		t.Errorf("second SignItem = %d, %v; want 0, nil", again, err)
	}
}

func TestSignItemRoundTripsAsJSON(t *testing.T) {
	clock := newFakeClock()
	signer := startSigner(t, newFakeEndpoint(clock), clock, Options{})
	item := decodeItem(t, planetaryComputerItem)
	if _, err := signer.SignItem(context.Background(), item); err != nil {
		t.Fatal(err)
	}
	encoded, err := json.Marshal(item)
	if err != nil {
		t.Fatalf("encoding the signed item: %v", err)
	}
	decoded := decodeItem(t, string(encoded))
	for key, asset := range item.Assets {
		if decoded.Assets[key].Href != asset.Href {
			t.Errorf("asset %s: href after a JSON round trip %q, want %q", key, decoded.Assets[key].Href, asset.Href)
		}
	}
	if got := alternates(t, decoded.Assets["safe-manifest"])["mirror"]["href"]; !strings.HasSuffix(got.(string), "&sig=sig1") {
		t.Errorf("alternate href after a JSON round trip = %v; want it signed", got)
	}
}

func TestSignItemWithoutAzureAssetsFetchesNothing(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{})
	item := &stacclient.Item{ID: "x", Assets: map[string]stacclient.Asset{
		"B02":     {Href: s3Href},
		"preview": {Href: pcDataHref},
	}}
	signed, err := signer.SignItem(context.Background(), item)
	if err != nil || signed != 0 {
		t.Errorf("SignItem = %d, %v; want 0, nil (no collection is needed when nothing is signed)", signed, err)
	}
	if item.Assets["B02"].Href != s3Href || item.Assets["preview"].Href != pcDataHref {
		t.Errorf("hrefs changed: %+v", item.Assets)
	}
	if n := endpoint.total(); n != 0 {
		t.Errorf("%d token requests for an item with nothing to sign", n)
	}
}

func TestSignItemFailuresLeaveItemUnchanged(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	endpoint.setRespond(func(string, int) answer { return answer{500, `{"detail":"boom"}`} })
	signer := startSigner(t, endpoint, clock, Options{})

	cases := []struct {
		name   string
		item   *stacclient.Item
		wantIn string
	}{
		{"token endpoint fails", decodeItem(t, planetaryComputerItem), "HTTP 500"},
		{"item has no collection", &stacclient.Item{ID: "orphan", Assets: map[string]stacclient.Asset{"B02": {Href: azureHref}}},
			`item "orphan" has no "collection" member`},
		{"alternate is not an object", decodeItem(t, strings.Replace(planetaryComputerItem,
			`"alternate": {`, `"alternate": ["https://x.blob.core.windows.net/c/f"], "was": {`, 1)),
			`asset "safe-manifest": "alternate" is not an object`},
		{"nil item", nil, "no item to sign"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before []byte
			if c.item != nil {
				before, _ = json.Marshal(c.item)
			}
			signed, err := signer.SignItem(context.Background(), c.item)
			if signed != 0 || !errors.Is(err, ErrSigningFailed) || !strings.Contains(err.Error(), c.wantIn) {
				t.Fatalf("SignItem = %d, %v; want 0 and a signing error containing %q", signed, err, c.wantIn)
			}
			if c.item != nil {
				if after, _ := json.Marshal(c.item); string(after) != string(before) {
					t.Errorf("item changed by a failed SignItem:\nbefore %s\nafter  %s", before, after)
				}
			}
		})
	}
}
