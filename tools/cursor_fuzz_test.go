package tools

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
)

// scopeWatch is a demo stacserver that records every request outside what
// a cursor may cause: another method than GET or POST.
type scopeWatch struct {
	url string
	mu  sync.Mutex
	bad []string
}

func newScopeWatch(t testing.TB) *scopeWatch {
	w := &scopeWatch{}
	w.url = demoServer(t, stacserver.Options{OnRequest: func(r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			w.mu.Lock()
			w.bad = append(w.bad, r.Method+" "+r.URL.String())
			w.mu.Unlock()
		}
	}})
	return w
}

func (w *scopeWatch) violations() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.bad...)
}

// A cursor signed with the server's key is still checked when it is used:
// its request is rebuilt on the catalog's base URL, and its listing
// bounds are those of the arguments.
func TestSignedButHostileCursorsAreRefused(t *testing.T) {
	watch := newScopeWatch(t)
	evil := newHitRecorder(t)
	evilHost := strings.TrimPrefix(evil.URL, "http://")
	cs := newTestSession(t, testSessionOptions{CatalogURL: watch.url, CursorKey: testCursorKey})
	items := func(edit func(*cursor.Cursor)) string {
		pos := stacclient.RequestDiff{Method: "GET", Path: "/search", Query: []stacclient.QueryPart{{Base: 0}}}
		c := cursor.Cursor{Kind: cursor.Items, Catalog: watch.url, Params: []byte(`{"collections":["joplin"]}`), PageSize: 2,
			First: stacclient.RequestDiff{Method: "POST", Path: "/search"}, Pos: &pos}
		edit(&c)
		return cursor.Encode(testCursorKey, c)
	}
	listing := func(edit func(*cursor.Cursor)) string {
		c := cursor.Cursor{Kind: cursor.Collections, Catalog: watch.url, Params: []byte(`{}`), PageSize: 2, Listed: 2}
		edit(&c)
		return cursor.Encode(testCursorKey, c)
	}
	for name, c := range map[string]struct {
		tool, token, want string
	}{
		"network-path reference": {"search_items", items(func(c *cursor.Cursor) { c.Pos.Path = "//" + evilHost + "/search" }), "not a path below the catalog root"},
		"userinfo":               {"search_items", items(func(c *cursor.Cursor) { c.Pos.Path = "@" + evilHost + "/search" }), "not a path below the catalog root"},
		"dot segments":           {"search_items", items(func(c *cursor.Cursor) { c.Pos.Path = "/../../admin" }), "outside the catalog"},
		"fragment in the query":  {"search_items", items(func(c *cursor.Cursor) { c.Pos.Query = []stacclient.QueryPart{{Base: -1, Literal: "a=1#x"}} }), "not a key=value pair"},
		"query index":            {"search_items", items(func(c *cursor.Cursor) { c.Pos.Query = []stacclient.QueryPart{{Base: 40}} }), "refers to parameter"},
		"patch not an object":    {"search_items", items(func(c *cursor.Cursor) { c.Pos.Method, c.Pos.Query, c.Pos.Patch = "POST", nil, []byte(`[1]`) }), "not a JSON object"},
		"invalid parameters":     {"search_items", items(func(c *cursor.Cursor) { c.Params = []byte(`{"bbox":[1,2,3]}`) }), "invalid"},
		"params of another type": {"search_items", items(func(c *cursor.Cursor) { c.Params = []byte(`{"collections":7}`) }), "unreadable"},
		"listing over the limit": {"search_collections", listing(func(c *cursor.Cursor) { c.PageSize = 5000 }), "over 100"},
		"listing bad bbox":       {"search_collections", listing(func(c *cursor.Cursor) { c.Params = []byte(`{"bbox":[1,2,3]}`) }), "bbox"},
	} {
		t.Run(name, func(t *testing.T) {
			msg := callErr(t, cs, c.tool, map[string]any{"cursor": c.token})
			if !strings.Contains(msg, `"cursor"`) || !strings.Contains(msg, c.want) {
				t.Errorf("error %q should name the cursor and say %q", msg, c.want)
			}
		})
	}
	if got := evil.requests(); len(got) > 0 {
		t.Errorf("the other host received %v", got)
	}
	if got := watch.violations(); len(got) > 0 {
		t.Errorf("the catalog received %v", got)
	}
	// A listing far past the end is simply exhausted.
	out := structured[SearchCollectionsOut](t, callOK(t, cs, "search_collections", map[string]any{"cursor": listing(func(c *cursor.Cursor) { c.Listed = 1 << 20 })}))
	if out.Returned != 0 || out.HasMore {
		t.Errorf("listing past the end: %+v", out)
	}
}

// FuzzCursor feeds random tokens, and signed cursors of random payloads,
// through real search_items and search_collections calls against a demo
// stacserver (the codec's own properties, that decoding never panics and a
// payload that decodes re-encodes to the same cursor, are FuzzRead's in
// tools/internal/cursor). Properties: no call panics
// (which would now be an "internal error" result) or fails at the
// protocol level; the catalog never receives another method than GET or
// POST. Payloads that decode are pointed at the test catalog, so the
// fuzzer never resolves random catalog references (paths, hosts).
//
//	go test -run '^$' -fuzz FuzzCursor -fuzztime 60s ./tools/
func FuzzCursor(f *testing.F) {
	watch := newScopeWatch(f)
	cs := newTestSession(f, testSessionOptions{CatalogURL: watch.url, CursorKey: testCursorKey, Silent: true})
	polygon := bigPolygon(60)
	for _, seed := range []struct {
		tool string
		args map[string]any
	}{
		{"search_items", map[string]any{"collections": "joplin", "max_items": 2}},
		{"search_items", map[string]any{"intersects": polygon, "datetime": "2018/2025", "sortby": "-properties.datetime", "max_items": 3, "limit": 2}},
		{"search_items", map[string]any{"bbox": []float64{-95, 37, -94, 38}, "query": map[string]any{"gsd": map[string]any{"gt": 0}}, "max_items": 1}},
		{"search_collections", map[string]any{"limit": 2}},
		{"search_collections", map[string]any{"q": "sentinel", "bbox": []float64{-180, -90, 180, 90}, "limit": 1}},
	} {
		res := callOK(f, cs, seed.tool, seed.args)
		token, _ := res.StructuredContent.(map[string]any)["cursor"].(string)
		if token == "" {
			f.Fatalf("%s %v gave no cursor", seed.tool, seed.args)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(token)
		f.Add(raw[cursor.MACLen:], true)
		f.Add([]byte(token), false)
	}
	f.Add([]byte("not a cursor"), false)
	// The head of a replay cursor's payload (version, kind, flags), cut
	// short.
	replay, _ := base64.RawURLEncoding.DecodeString(cursor.Encode(testCursorKey, cursor.Cursor{Kind: cursor.Items, Catalog: "demo",
		Params: []byte(`{}`), PageSize: 1, First: stacclient.RequestDiff{Method: "GET", Path: "/search"}}))
	f.Add(replay[cursor.MACLen:cursor.MACLen+3], true)

	f.Fuzz(func(t *testing.T, data []byte, signed bool) {
		token, tool := string(data), "search_items"
		if signed {
			c, err := cursor.Read(data)
			if err != nil {
				return
			}
			c.Catalog, c.CatalogSum = watch.url, 0
			token = cursor.Encode(testCursorKey, c)
			if token == "" {
				return // too large to re-encode after the catalog change
			}
			if c.Kind == cursor.Collections {
				tool = "search_collections"
			}
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"cursor": token}})
		if err != nil {
			t.Fatalf("protocol error: %v", err)
		}
		if text := resultText(res); strings.Contains(text, "internal error") {
			t.Fatalf("%s panicked: %s", tool, text)
		}
		if bad := watch.violations(); len(bad) > 0 {
			t.Fatalf("the catalog received %v", bad)
		}
	})
}
