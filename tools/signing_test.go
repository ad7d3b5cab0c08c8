package tools

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// configureSigning sets d's signing options. Call it before the server
// serves its first call; later calls do not replace a Signer already built.
func configureSigning(d *Deps, opts signingOptions) {
	d.signing.opts = opts
}

// A stand-in for Planetary Computer: a loopback STAC API whose items keep
// their assets on Azure Blob Storage, and a fake SAS token endpoint. The
// real IsPlanetaryComputer check cannot accept a loopback URL, so the tests
// inject theirs through configureSigning.

const (
	fakeBlobHref    = "https://naipeuwest.blob.core.windows.net/naip/v002/ks/2021/ks_060cm_2021/37094/m_3709401_ne_15_060_20210719.tif"
	fakePreviewHref = "https://planetarycomputer.microsoft.com/api/data/v1/item/preview.png?collection=naip&item=%s"
	fakeTokenSig    = "sig=fakeSignature"
)

func fakePCItem(id, datetime string) string {
	return fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":%q,"collection":"naip",
		"geometry":{"type":"Polygon","coordinates":[[[-94.6,37.0],[-94.5,37.0],[-94.5,37.1],[-94.6,37.1],[-94.6,37.0]]]},
		"bbox":[-94.6,37.0,-94.5,37.1],"properties":{"datetime":%q,"gsd":0.6},"links":[],
		"assets":{"image":{"href":%q,"type":"image/tiff; application=geotiff; profile=cloud-optimized","roles":["data"]},
		"rendered_preview":{"href":%q,"type":"image/png","roles":["overview"]}}}`, id, datetime, fakeBlobHref, fmt.Sprintf(fakePreviewHref, id))
}

// fakeTokenEndpoint answers GET /token/{collection}; fail makes it refuse.
type fakeTokenEndpoint struct {
	mu       sync.Mutex
	requests int
	fail     bool
}

func (f *fakeTokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	fail := f.fail
	f.mu.Unlock()
	if fail {
		// 403 is not retried, so the failure case stays fast.
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"detail":"token service refused"}`)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"msft:expiry": %q, "token": "st=2026-11-21T05%%3A00%%3A00Z&se=2026-11-21T07%%3A00%%3A00Z&sp=rl&sr=c&%s"}`,
		time.Now().Add(time.Hour).UTC().Format(time.RFC3339), fakeTokenSig)
}

func (f *fakeTokenEndpoint) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

type fakePC struct {
	tokens     *fakeTokenEndpoint
	recorder   *callRecorder
	catalogURL string
	deps       *Deps
}

func newFakePC(t *testing.T) *fakePC {
	t.Helper()
	store := stacserver.NewStore()
	if err := store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"naip","description":"NAIP","license":"proprietary",
		"extent":{"spatial":{"bbox":[[-125,24,-66,50]]},"temporal":{"interval":[["2010-01-01T00:00:00Z",null]]}},"links":[]}`)); err != nil {
		t.Fatal(err)
	}
	for i, dt := range []string{"2021-07-19T16:00:00Z", "2021-07-20T16:00:00Z"} {
		if err := store.AddItem([]byte(fakePCItem(fmt.Sprintf("item-%d", i+1), dt))); err != nil {
			t.Fatal(err)
		}
	}
	catalog := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
	t.Cleanup(catalog.Close)
	tokens := &fakeTokenEndpoint{}
	tokenSrv := httptest.NewServer(tokens)
	t.Cleanup(tokenSrv.Close)

	pc := &fakePC{tokens: tokens, recorder: &callRecorder{}, catalogURL: catalog.URL}
	pc.deps = newTestDeps(t, testSessionOptions{CatalogURL: catalog.URL, Transport: pc.recorder})
	configureSigning(pc.deps, signingOptions{
		TokenURL:            tokenSrv.URL + "/token",
		IsPlanetaryComputer: func(u string) bool { return u == catalog.URL },
	})
	return pc
}

func TestGetItemSignsPlanetaryComputerAssetsThroughTheLayer(t *testing.T) {
	t.Parallel()
	pc := newFakePC(t)
	cs := newClientSession(t, pc.deps, nil)
	res := callOK(t, cs, "get_item", map[string]any{"collection_id": "naip", "item_id": "item-1", "sign_assets": true})
	out := structured[GetItemOut](t, res)
	assets := out.Item["assets"].(map[string]any)
	image := assets["image"].(map[string]any)["href"].(string)
	if image != fakeBlobHref+"?st=2026-11-21T05%3A00%3A00Z&se=2026-11-21T07%3A00%3A00Z&sp=rl&sr=c&"+fakeTokenSig {
		t.Errorf("signed image href = %q", image)
	}
	if preview := assets["rendered_preview"].(map[string]any)["href"].(string); preview != fmt.Sprintf(fakePreviewHref, "item-1") {
		t.Errorf("the preview (not on blob storage) was changed: %q", preview)
	}
	if !strings.Contains(resultText(res), fakeTokenSig) || len(out.Warnings) != 0 || !strings.Contains(strings.Join(out.Notes, " "), "SAS token") {
		t.Errorf("text/warnings/notes: %q %v %v", resultText(res), out.Warnings, out.Notes)
	}
	// The token request went through the reliability layer, inside the call.
	tokenCalls := 0
	for _, c := range pc.recorder.snapshot() {
		if strings.Contains(c.path, "/token/naip") {
			tokenCalls++
			if !c.insideRun || c.tool != "get_item" {
				t.Errorf("token request as tool %q inside Run %v, want get_item inside Run", c.tool, c.insideRun)
			}
		}
	}
	if tokenCalls != 1 || pc.tokens.count() != 1 {
		t.Errorf("token requests: %d recorded, %d at the endpoint, want 1", tokenCalls, pc.tokens.count())
	}
}

func TestSearchItemsSignsWithOneTokenPerCollection(t *testing.T) {
	t.Parallel()
	pc := newFakePC(t)
	cs := newClientSession(t, pc.deps, nil)
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": []string{"naip"}, "sign_assets": true}))
	if out.Returned != 2 {
		t.Fatalf("returned %d items, want 2", out.Returned)
	}
	for _, it := range out.Items {
		for _, a := range it.Assets {
			if a.Key == "image" && !strings.HasSuffix(a.Href, fakeTokenSig) {
				t.Errorf("%s image href unsigned: %s", it.ID, a.Href)
			}
		}
	}
	// Again, in a new call: the process-wide Signer still holds the token.
	callOK(t, cs, "get_item", map[string]any{"collection_id": "naip", "item_id": "item-2", "sign_assets": true})
	if n := pc.tokens.count(); n != 1 {
		t.Errorf("token endpoint asked %d times for 3 signed items of one collection, want 1", n)
	}
}

func TestUnsignedPlanetaryComputerHrefsCarryANote(t *testing.T) {
	t.Parallel()
	pc := newFakePC(t)
	cs := newClientSession(t, pc.deps, nil)
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": []string{"naip"}}))
	if !strings.Contains(strings.Join(out.Notes, " "), "need a SAS token to download: call again with sign_assets=true") {
		t.Errorf("notes %v lack the signing hint", out.Notes)
	}
	if pc.tokens.count() != 0 {
		t.Errorf("a token was fetched without sign_assets")
	}
}

func TestSigningFailureReturnsUnsignedItemsWithAWarning(t *testing.T) {
	t.Parallel()
	pc := newFakePC(t)
	pc.tokens.fail = true
	cs := newClientSession(t, pc.deps, nil)
	res := callOK(t, cs, "search_items", map[string]any{"collections": []string{"naip"}, "sign_assets": true})
	out := structured[SearchItemsOut](t, res)
	if out.Returned != 2 {
		t.Fatalf("returned %d items, want both, unsigned", out.Returned)
	}
	w := strings.Join(out.Warnings, " ")
	if !strings.Contains(w, "assets of 2 item(s) are unsigned") || !strings.Contains(w, "403") || !strings.Contains(w, "naip") {
		t.Errorf("warnings %q: want how many items are unsigned and why (status 403, collection naip)", w)
	}
	for _, it := range out.Items {
		for _, a := range it.Assets {
			if strings.Contains(a.Href, "sig=") {
				t.Errorf("%s: half-signed href %s", it.ID, a.Href)
			}
		}
	}
	if n := pc.tokens.count(); n != 1 {
		t.Errorf("token endpoint asked %d times, want 1 (a failed collection is not retried item after item)", n)
	}
	got := structured[GetItemOut](t, callOK(t, cs, "get_item", map[string]any{"collection_id": "naip", "item_id": "item-1", "sign_assets": true}))
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "unsigned") {
		t.Errorf("get_item warnings %v, want one saying the assets are unsigned", got.Warnings)
	}
}

func TestSignAssetsIsRefusedForOtherCatalogs(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{}) // the demo catalog
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"search_items", map[string]any{"collections": []string{"joplin"}, "sign_assets": true}},
		{"get_item", map[string]any{"collection_id": "joplin", "item_id": joplinItemID, "sign_assets": true}},
	} {
		msg := callErr(t, cs, call.tool, call.args)
		for _, want := range []string{`"sign_assets"`, "only for Microsoft Planetary Computer", `catalog_url "planetary-computer"`} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q lacks %q", call.tool, msg, want)
			}
		}
	}
	// Without the flag nothing changes for other catalogs: no signing note.
	out := structured[SearchItemsOut](t, callOK(t, cs, "search_items", map[string]any{"collections": []string{"joplin"}, "max_items": 1}))
	if strings.Contains(strings.Join(out.Notes, " "), "SAS") {
		t.Errorf("signing note on a non-Planetary Computer catalog: %v", out.Notes)
	}
}
