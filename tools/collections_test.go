package tools

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// allCollectionIDs pages search_collections with a cursor until the end.
func allCollectionIDs(t *testing.T, url string, args map[string]any) ([]string, SearchCollectionsOut) {
	t.Helper()
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	var ids []string
	var first SearchCollectionsOut
	for call := 0; ; call++ {
		if call > 20 {
			t.Fatalf("still paging after %d calls", call)
		}
		out := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", args))
		if call == 0 {
			first = out
		}
		for _, c := range out.Collections {
			ids = append(ids, c.ID)
		}
		if !out.HasMore {
			break
		}
		args = map[string]any{"cursor": out.Cursor}
	}
	return ids, first
}

func TestSearchCollectionsPagesThroughEveryCollection(t *testing.T) {
	t.Parallel()
	ids, first := allCollectionIDs(t, "", map[string]any{"limit": 4})
	if len(first.Collections) != 4 || first.Matched == nil || *first.Matched != 16 {
		t.Fatalf("first page: %d collections, matched %v; want 4 of 16", len(first.Collections), first.Matched)
	}
	sorted := slices.Clone(ids)
	sort.Strings(sorted)
	if len(ids) != 16 || len(slices.Compact(sorted)) != 16 {
		t.Fatalf("paged %d ids (%v), want the 16 demo collections once each", len(ids), ids)
	}
}

func TestSearchCollectionsServerSideFreeText(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	out := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"q": "landsat", "limit": 20}))
	if out.FilteredClientSide || out.Returned == 0 {
		t.Fatalf("filtered_client_side %v, returned %d; want a server-side match", out.FilteredClientSide, out.Returned)
	}
	for _, c := range out.Collections {
		if !strings.Contains(strings.ToLower(c.ID+c.Title+c.Description), "landsat") {
			t.Errorf("%s does not mention landsat", c.ID)
		}
	}
}

func TestSearchCollectionsFiltersClientSideWithoutCollectionSearch(t *testing.T) {
	t.Parallel()
	url := demoServer(t, stacserver.Options{ConformsTo: conformanceWithout("collection-search")})
	cs := newTestSession(t, testSessionOptions{CatalogURL: url})
	out := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{
		// Joplin, Missouri, in February 2000: only the joplin collection.
		"bbox": "-94.7,37.0,-94.4,37.2", "datetime": "2000-02"}))
	if !out.FilteredClientSide || len(out.Notes) == 0 {
		t.Errorf("filtered_client_side %v, notes %q: the output must say the filter ran here", out.FilteredClientSide, out.Notes)
	}
	var ids []string
	for _, c := range out.Collections {
		ids = append(ids, c.ID)
	}
	// Collections with a global extent and an open or long interval (such as
	// landsat-c2-l2, since 1982) rightly match too; the ones elsewhere or later do not.
	if !slices.Contains(ids, "joplin") || out.Matched == nil || *out.Matched != len(ids) {
		t.Errorf("ids %v matched %v; want joplin among them and matched = returned", ids, out.Matched)
	}
	for _, excluded := range []string{"cs3", "sentinel-2-l2a", "naip", "cop-dem-glo-30"} {
		if slices.Contains(ids, excluded) {
			t.Errorf("%s kept although its extent is elsewhere or later: %v", excluded, ids)
		}
	}
	text := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"q": "sentinel-2 l2a"}))
	if text.Returned == 0 || !strings.Contains(text.Collections[0].ID, "sentinel") {
		t.Errorf("client-side q found %+v, want sentinel collections first", text.Collections)
	}
	empty := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"q": "zzzz-no-such-mission"}))
	if empty.Returned != 0 || !strings.Contains(strings.Join(empty.Notes, " "), "q") {
		t.Errorf("no-match listing: returned %d, notes %q", empty.Returned, empty.Notes)
	}
}

func TestSearchCollectionsBadArguments(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	for _, c := range []struct {
		args  map[string]any
		param string
	}{
		{map[string]any{"limit": 0}, "limit"},
		{map[string]any{"limit": 500}, "limit"},
		{map[string]any{"bbox": "1,2,3"}, "bbox"},
		{map[string]any{"datetime": "yesterday"}, "datetime"},
		{map[string]any{"cursor": "nonsense"}, "cursor"},
	} {
		if msg := callErr(t, cs, "search_collections", c.args); !strings.Contains(msg, c.param) {
			t.Errorf("%v: error %q does not name %s", c.args, msg, c.param)
		}
	}
}

func TestGetCollectionIsCompact(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	res := callOK(t, cs, "get_collection", map[string]any{"collection_id": "sentinel-2-l2a"})
	out := structured[GetCollectionOut](t, res)
	if out.ID != "sentinel-2-l2a" || out.License == "" || len(out.Extent.BBox) == 0 || len(out.Extent.Intervals) == 0 {
		t.Errorf("collection = %+v, want id, license and extent", out)
	}
	if len(out.ItemAssets) != 35 {
		t.Errorf("item_assets has %d entries, want the collection's 35", len(out.ItemAssets))
	}
	for _, a := range out.ItemAssets {
		if a.Key == "red" && (a.Type == "" || !slices.Contains(a.Roles, "data")) {
			t.Errorf("item asset red = %+v, want its type and data role", a)
		}
	}
	if !strings.Contains(resultText(res), "Item assets (35)") {
		t.Errorf("text lacks the item assets:\n%s", resultText(res))
	}
}

func TestGetCollectionNotFound(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	msg := callErr(t, cs, "get_collection", map[string]any{"collection_id": "sentinel-9"})
	if !strings.Contains(msg, "collection 'sentinel-9' not found") || !strings.Contains(msg, "search_collections") {
		t.Errorf("error %q should say the collection is missing and to call search_collections", msg)
	}
	if msg := callErr(t, cs, "get_collection", map[string]any{"collection_id": " "}); !strings.Contains(msg, "collection_id") {
		t.Errorf("blank id error %q does not name collection_id", msg)
	}
}

// TestSearchCollectionsFreeTextMatchesWords: q "DEM" names the Copernicus
// DEM, not the Astraea "Earth OnDemand" recordings nor anything "demo",
// whether the catalog searches (the in-process stacserver) or this server
// filters the list itself; both use package freetext.
func TestSearchCollectionsFreeTextMatchesWords(t *testing.T) {
	t.Parallel()
	clientSide := demoServer(t, stacserver.Options{ConformsTo: conformanceWithout("collection-search")})
	for _, c := range []struct {
		name, url  string
		clientSide bool
	}{{"server-side", "", false}, {"client-side", clientSide, true}} {
		t.Run(c.name, func(t *testing.T) {
			cs := newTestSession(t, testSessionOptions{CatalogURL: c.url})
			out := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"q": "DEM", "limit": 20}))
			if out.FilteredClientSide != c.clientSide {
				t.Fatalf("filtered_client_side = %v, want %v", out.FilteredClientSide, c.clientSide)
			}
			var ids []string
			for _, col := range out.Collections {
				ids = append(ids, col.ID)
			}
			if !slices.Contains(ids, "cop-dem-glo-30") {
				t.Errorf("q=DEM found %v, want cop-dem-glo-30", ids)
			}
			for _, substringOnly := range []string{"sentinel2_l1c", "sentinel2_l2a"} {
				if slices.Contains(ids, substringOnly) {
					t.Errorf("q=DEM matched %s (\"OnDemand\"): %v", substringOnly, ids)
				}
			}
			excluded := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"q": "sentinel -l1c", "limit": 20}))
			for _, col := range excluded.Collections {
				if strings.Contains(col.ID, "l1c") {
					t.Errorf("q=\"sentinel -l1c\" kept %s", col.ID)
				}
			}
			if excluded.Returned == 0 {
				t.Error("q=\"sentinel -l1c\" found nothing")
			}
		})
	}
}
