package sizing

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

func extraOf(t *testing.T, members string) stacclient.Extra {
	t.Helper()
	var e stacclient.Extra
	if err := json.Unmarshal([]byte(members), &e); err != nil {
		t.Fatalf("bad test extra %s: %v", members, err)
	}
	return e
}

func TestMetadataSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name       string
		extra      string
		itemProps  map[string]any
		wantBytes  int64
		wantMethod string
	}{
		{"file:size wins", `{"file:size": 1234, "proj:shape": [10, 10], "raster:bands": [{"data_type": "uint8"}]}`, nil, 1234, MethodFileSize},
		{"bands × shape", `{"proj:shape": [100, 200], "raster:bands": [{"data_type": "uint16"}, {"data_type": "float32"}]}`, nil, 100 * 200 * 6, MethodDtypeShape},
		{"item-level shape", `{"raster:bands": [{"data_type": "int8"}]}`, map[string]any{"proj:shape": []any{json.Number("50"), json.Number("40")}}, 2000, MethodDtypeShape},
		{"STAC 1.1 bands with asset data_type", `{"proj:shape": [10, 10], "data_type": "uint16", "bands": [{"name": "r"}, {"name": "g"}, {"name": "b"}]}`, nil, 600, MethodDtypeShape},
		{"unknown data type", `{"proj:shape": [10, 10], "raster:bands": [{"data_type": "other"}]}`, nil, 0, ""},
		{"band without data type", `{"proj:shape": [10, 10], "raster:bands": [{"nodata": 0}]}`, nil, 0, ""},
		{"shape without bands", `{"proj:shape": [10, 10]}`, nil, 0, ""},
		{"nothing", `{}`, nil, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, method, ok := MetadataSize(stacclient.Asset{Extra: extraOf(t, c.extra)}, c.itemProps)
			if ok != (c.wantMethod != "") || n != c.wantBytes || method != c.wantMethod {
				t.Errorf("MetadataSize = %d, %q, %v; want %d, %q", n, method, ok, c.wantBytes, c.wantMethod)
			}
		})
	}
}

// TestMarkCopies: a band in two formats is counted once, the copy sized
// from metadata or the GeoTIFF kept; two resolutions of one format are not
// copies; a key suffix marks a copy without band metadata.
func TestMarkCopies(t *testing.T) {
	t.Parallel()
	const cog, jp2 = "image/tiff; application=geotiff; profile=cloud-optimized", "image/jp2"
	for _, c := range []struct {
		name   string
		assets []Candidate
		want   []string
	}{
		{"suffix", []Candidate{{Key: "red", MediaType: cog}, {Key: "red-jp2", MediaType: jp2}}, []string{"", "red"}},
		{"suffix, the sized one kept", []Candidate{{Key: "red", MediaType: cog, Sizability: Unsizable}, {Key: "red-jp2", MediaType: jp2, Sizability: SizedByMetadata}},
			[]string{"red-jp2", ""}},
		{"same bands, two formats", []Candidate{{Key: "B04", MediaType: jp2, Bands: "b04", Raster: true}, {Key: "red", MediaType: cog, Bands: "b04", Raster: true}},
			[]string{"red", ""}},
		{"same bands, one format: two resolutions", []Candidate{{Key: "B04_10m", MediaType: jp2, Bands: "b04", Raster: true}, {Key: "B04_20m", MediaType: jp2, Bands: "b04", Raster: true}},
			[]string{"", ""}},
		{"unknown bands are not copies", []Candidate{{Key: "a", MediaType: jp2, Raster: true}, {Key: "b", MediaType: cog, Raster: true}}, []string{"", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := MarkCopies(c.assets); !slices.Equal(got, c.want) {
				t.Errorf("MarkCopies = %q, want %q", got, c.want)
			}
		})
	}
}

func TestNonDataRoleAndRenderedHref(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		asset stacclient.Asset
		want  string
	}{
		{stacclient.Asset{Href: "https://x/a.tif", Roles: []string{"data"}}, ""},
		{stacclient.Asset{Href: "https://x/t.png", Roles: []string{"thumbnail"}}, "thumbnail"},
		{stacclient.Asset{Href: "https://x/o.tif", Roles: []string{"overview", "data"}}, ""},
		{stacclient.Asset{Href: "https://planetarycomputer.microsoft.com/api/data/v1/item/preview.png?x=1", Roles: []string{"data"}}, RoleRendered},
		{stacclient.Asset{Href: "s3://sentinel-cogs/tiles/20/E/PT/B04.tif"}, ""},
	} {
		if got := NonDataRole(c.asset); got != c.want {
			t.Errorf("NonDataRole(%s %v) = %q, want %q", c.asset.Href, c.asset.Roles, got, c.want)
		}
	}
	for href, want := range map[string]bool{"https://x/a.tif": true, "http://x:8080/a": true, "s3://b/a.tif": false, "/local/a.tif": false} {
		if got := Headable(href); got != want {
			t.Errorf("Headable(%s) = %v, want %v", href, got, want)
		}
	}
}
