package tools

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

func TestGetRootDescribesTheDemoCatalog(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "get_root", map[string]any{})
	out := structured[GetRootOut](t, res)
	if out.ID != "stac-mcp-demo" || out.Type != "Catalog" || out.StacVersion == "" {
		t.Errorf("root = %+v, want the demo catalog with a STAC version", out)
	}
	if out.ConformanceCount != len(stacserver.DefaultConformance()) || out.ChildCount != 16 {
		t.Errorf("conformance %d, children %d; want %d and 16", out.ConformanceCount, out.ChildCount, len(stacserver.DefaultConformance()))
	}
	rels := map[string]bool{}
	for _, l := range out.KeyLinks {
		rels[l.Rel] = true
	}
	for _, rel := range []string{"search", "conformance", "data"} {
		if !rels[rel] {
			t.Errorf("key links lack rel=%s: %+v", rel, out.KeyLinks)
		}
	}
	if !strings.Contains(resultText(res), "stac-mcp-demo") {
		t.Errorf("text lacks the catalog id:\n%s", resultText(res))
	}
}

func TestGetRootUnreachableCatalogIsAnError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close() // nothing listens there any more
	cs := newTestSession(t, testSessionOptions{})
	msg := callErr(t, cs, "get_root", map[string]any{"catalog_url": url})
	if !strings.Contains(msg, "get_root") || !strings.Contains(msg, "catalog_url") {
		t.Errorf("error %q should name the tool and say to check catalog_url", msg)
	}
}

func TestGetConformanceChecksAreVersionTolerant(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[GetConformanceOut](t, callOK(t, cs, "get_conformance", map[string]any{
		// A JSON-encoded list, as some clients send it; v1.1.0 must match the server's v1.0.0.
		"check": `["https://api.stacspec.org/v1.1.0/item-search", "https://api.stacspec.org/v1.0.0/transaction"]`,
	}))
	if out.Count != len(out.ConformsTo) || out.Count == 0 {
		t.Fatalf("count %d for %d classes", out.Count, len(out.ConformsTo))
	}
	want := []ConformanceCheck{
		{URI: "https://api.stacspec.org/v1.1.0/item-search", Satisfied: true},
		{URI: "https://api.stacspec.org/v1.0.0/transaction", Satisfied: false},
	}
	if !slices.Equal(out.Checks, want) || out.AllSatisfied {
		t.Errorf("checks %+v all_satisfied %v; want %+v and false", out.Checks, out.AllSatisfied, want)
	}
}

func TestGetConformanceAnswersCapabilityNames(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{CatalogURL: demoServer(t, stacserver.Options{DisableAggregation: true})})
	out := structured[GetConformanceOut](t, callOK(t, cs, "get_conformance", map[string]any{"check": "sort,aggregation"}))
	if len(out.Checks) != 2 || !out.Checks[0].Satisfied || !strings.Contains(out.Checks[0].Evidence, "sort") || out.Checks[1].Satisfied || out.AllSatisfied {
		t.Errorf("checks = %+v, want sort satisfied with evidence and aggregation not", out.Checks)
	}
}

func TestGetConformanceRejectsABadCheck(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	msg := callErr(t, cs, "get_conformance", map[string]any{"check": `["unterminated`})
	if !strings.Contains(msg, `"check"`) {
		t.Errorf("error %q does not name check", msg)
	}
	msg = callErr(t, cs, "get_conformance", map[string]any{"check": "searchability"})
	if !strings.Contains(msg, `"check"`) || !strings.Contains(msg, "item-search") {
		t.Errorf("error %q should name check and list the capability names", msg)
	}
}

func TestGetCapabilitiesGivesEvidenceAndMeaning(t *testing.T) {
	t.Parallel()
	url := demoServer(t, stacserver.Options{ConformsTo: conformanceWithout("filter", "cql2"),
		DisableQueryables: true, DisableAggregation: true})
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	out := structured[GetCapabilitiesOut](t, callOK(t, cs, "get_capabilities", map[string]any{}))
	byName := map[string]CapabilityInfo{}
	for _, c := range out.Capabilities {
		byName[c.Name] = c
	}
	search := byName["item-search"]
	if !search.Supported || search.EvidenceSource != "conformance" || !strings.Contains(search.Evidence, "item-search") {
		t.Errorf("item-search = %+v, want supported with its conformance URI", search)
	}
	filter := byName["filter"]
	if filter.Supported || !strings.Contains(filter.Meaning, "filter is not supported") {
		t.Errorf("filter = %+v, want unsupported with what that means for search_items", filter)
	}
	if byName["aggregation"].Supported {
		t.Error("aggregation reported supported although the catalog does not declare it")
	}
	if !slices.Contains(out.Supported, "sort") || slices.Contains(out.Supported, "filter") {
		t.Errorf("supported list %v", out.Supported)
	}
}
