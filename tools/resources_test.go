package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func readJSONResource(t *testing.T, cs *mcp.ClientSession, uri string) (map[string]any, *mcp.ResourceContents) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents, want 1", uri, len(res.Contents))
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(res.Contents[0].Text), &doc); err != nil {
		t.Fatalf("read %s: not JSON: %v\n%s", uri, err, res.Contents[0].Text)
	}
	return doc, res.Contents[0]
}

func TestResourcesAreListedWithMIMETypes(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	ctx := context.Background()
	got := map[string]string{}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[r.URI] = r.MIMEType
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[r.URITemplate] = r.MIMEType
	}
	want := map[string]string{
		ResourceCatalog: mimeJSON, ResourceConformance: mimeJSON, ResourceCollections: mimeJSON,
		ResourceCollectionTmpl: mimeJSON, ResourceQueryablesTmpl: mimeJSONSchema,
		ResourcePlaceTmpl:        mimeGeoJSON,                 // a place's area, offline (places.go)
		MapViewURI:               "text/html;profile=mcp-app", // the map view (mapview.go)
		ExportURIPrefix + "{id}": "",                          // the export tool's files (export.go): each its own type
	}
	for uri, mime := range want {
		if got[uri] != mime {
			t.Errorf("%s: MIME type %q (listed: %v), want %q", uri, got[uri], got, mime)
		}
	}
	if len(got) != len(want) {
		t.Errorf("listed %v, want exactly %v", got, want)
	}
}

func TestReadingEachResourceFromTheDefaultCatalog(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})

	root, c := readJSONResource(t, cs, ResourceCatalog)
	if root["type"] != "Catalog" || c.MIMEType != mimeJSON || c.URI != ResourceCatalog {
		t.Errorf("catalog resource: type %v, MIME %q, URI %q", root["type"], c.MIMEType, c.URI)
	}
	conf, _ := readJSONResource(t, cs, ResourceConformance)
	classes, _ := conf["conformsTo"].([]any)
	if !containsSubstring(classes, "item-search") {
		t.Errorf("conformance resource lacks item-search: %v", classes)
	}
	list, _ := readJSONResource(t, cs, ResourceCollections)
	entries, _ := list["collections"].([]any)
	if len(entries) == 0 || list["count"] != float64(len(entries)) {
		t.Fatalf("collections resource: count %v with %d entries", list["count"], len(entries))
	}
	if !hasEntryID(entries, "joplin") {
		t.Errorf("collections resource lacks the demo collection joplin: %v", entries)
	}
	coll, _ := readJSONResource(t, cs, "stac://collections/joplin")
	if coll["id"] != "joplin" || coll["extent"] == nil {
		t.Errorf("collection resource: id %v, extent %v", coll["id"], coll["extent"])
	}
	q, qc := readJSONResource(t, cs, "stac://collections/joplin/queryables")
	if q["properties"] == nil || qc.MIMEType != mimeJSONSchema {
		t.Errorf("queryables resource: properties %v, MIME %q", q["properties"], qc.MIMEType)
	}
}

func TestMissingCollectionResourceIsNotFound(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	for _, uri := range []string{"stac://collections/no-such-collection", "stac://collections/no-such-collection/queryables"} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(string(rpcErr.Data), uri) {
			t.Errorf("read %s: err %#v, want code %d with the URI in its data", uri, err, jsonrpc.CodeInvalidParams)
		}
	}
}

// TestMissingCollectionResourceSuggestsTheClosest: a near miss names the
// resources of the closest collections.
func TestMissingCollectionResourceSuggestsTheClosest(t *testing.T) {
	t.Parallel()
	cs := newTestSession(t, testSessionOptions{})
	for uri, want := range map[string]string{
		"stac://collections/Joplin":                   "did you mean stac://collections/joplin?",
		"stac://collections/nope":                     "no collection has an id close to it; read stac://collections (or call search_collections) for the collection ids",
		"stac://collections/sentinel-2-l2/queryables": "did you mean stac://collections/sentinel-2-l2a/queryables or stac://collections/sentinel-2-l1c/queryables?",
	} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(rpcErr.Message, want) ||
			!strings.Contains(string(rpcErr.Data), uri) {
			t.Errorf("read %s: err %#v, want not found with %q", uri, err, want)
		}
	}
}

func TestResourceReadsGoThroughTheReliabilityLayer(t *testing.T) {
	t.Parallel()
	rec := &callRecorder{}
	cs := newTestSession(t, testSessionOptions{Transport: rec})
	readJSONResource(t, cs, "stac://collections/joplin")
	calls := rec.snapshot()
	if len(calls) == 0 {
		t.Fatal("no upstream request recorded")
	}
	for _, c := range calls {
		if !c.insideRun || c.tool != "resource:collection" {
			t.Errorf("upstream %s made as tool %q (inside Run: %v), want resource:collection inside Run", c.path, c.tool, c.insideRun)
		}
	}
}

func TestCollectionIDFromURIRefusesOtherShapes(t *testing.T) {
	t.Parallel()
	for _, uri := range []string{"stac://collections/", "stac://collections/a/b", "stac://elsewhere/a"} {
		if _, err := collectionIDFromURI(uri, ""); err == nil || !strings.Contains(err.Error(), ResourceCollectionTmpl) {
			t.Errorf("%s: err %v, want a refusal naming the accepted form", uri, err)
		}
	}
	if id, err := collectionIDFromURI("stac://collections/naip/queryables", queryablesURISuffix); err != nil || id != "naip" {
		t.Errorf("queryables URI: id %q, err %v", id, err)
	}
}

func containsSubstring(list []any, sub string) bool {
	for _, v := range list {
		if s, ok := v.(string); ok && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func hasEntryID(entries []any, id string) bool {
	for _, e := range entries {
		if m, ok := e.(map[string]any); ok && m["id"] == id {
			return true
		}
	}
	return false
}
