package stacclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewValidatesBaseURL(t *testing.T) {
	for _, bad := range []string{"", "ftp://x/stac", "file:///tmp/catalog.json", "earth-search.aws.element84.com/v1", "https://", "http://user:pw@x/stac", "http://x:bad/"} {
		_, err := New(bad, Options{})
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != "catalog_url" || pe.Accepted == "" || pe.Reason == "" {
			t.Errorf("New(%q) = %v, want a ParamError for catalog_url with accepted forms and a reason", bad, err)
		}
	}
	if _, err := New("https://x/stac", Options{MaxBodyBytes: -1}); err == nil {
		t.Error("a negative MaxBodyBytes was accepted")
	}
	c, err := New("https://earth-search.aws.element84.com/v1", Options{})
	if err != nil || c.baseURL() != "https://earth-search.aws.element84.com/v1" {
		t.Errorf("New: %v, BaseURL %q", err, c.baseURL())
	}
}

func TestEndpointKeepsTrailingSlashMeaningful(t *testing.T) {
	cases := map[string]string{
		"https://x/stac":        "https://x/stac/collections/a%2Fb/items",
		"https://x/stac/":       "https://x/stac/collections/a%2Fb/items",
		"https://x":             "https://x/collections/a%2Fb/items",
		"https://x/?key=secret": "https://x/collections/a%2Fb/items?key=secret",
	}
	for base, want := range cases {
		c, err := New(base, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.endpoint("collections", "a/b", "items"); got != want {
			t.Errorf("base %s: endpoint = %s, want %s", base, got, want)
		}
	}
}

// headerLog records the headers each request of a server carried.
type headerLog struct {
	mu      sync.Mutex
	headers []http.Header
}

func (h *headerLog) add(r *http.Request) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.headers = append(h.headers, r.Header.Clone())
}

func (h *headerLog) all() []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]http.Header(nil), h.headers...)
}

func TestCatalogHeadersNeverLeaveTheCatalogOrigin(t *testing.T) {
	var otherLog, catalogLog headerLog
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherLog.add(r)
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", "123")
			return
		}
		fmt.Fprint(w, `{"type":"FeatureCollection","features":[`+fakeItemJSON("b")+`],"links":[]}`)
	}))
	defer other.Close()
	var catalog *httptest.Server
	catalog = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		catalogLog.add(r)
		switch r.URL.Path {
		case "/":
			fmt.Fprintf(w, `{"type":"Catalog","id":"c","links":[{"rel":"search","href":"%s/search"}]}`, catalog.URL)
		case "/search":
			// The next link points at another host and carries link headers.
			fmt.Fprintf(w, `{"type":"FeatureCollection","features":[%s],"links":[{"rel":"next","href":"%s/elsewhere","headers":{"X-Link-Token":"t1"}}]}`, fakeItemJSON("a"), other.URL)
		case "/redirect":
			http.Redirect(w, r, other.URL+"/asset.tif", http.StatusFound)
		}
	}))
	defer catalog.Close()

	c, err := New(catalog.URL, Options{Headers: http.Header{"Authorization": {"Bearer secret"}, "X-Api-Key": {"k"}}})
	if err != nil {
		t.Fatal(err)
	}
	// A next link to another origin is not followed at all (scope.go).
	s := c.Search(SearchParams{}, SearchLimits{})
	if got := collectIDs(t, s); len(got) != 1 || s.StopReason() != StopNextRefused || !strings.Contains(s.Refusal(), "another origin") {
		t.Fatalf("got %v, stop %s (%s); want only a, and the next link refused", got, s.StopReason(), s.Refusal())
	}
	if _, err := c.Head(context.Background(), other.URL+"/asset.tif"); err != nil {
		t.Fatalf("Head: %v", err)
	}
	if _, err := c.Head(context.Background(), catalog.URL+"/redirect"); err != nil {
		t.Fatalf("Head via redirect: %v", err)
	}
	for _, h := range catalogLog.all() {
		if h.Get("Authorization") != "Bearer secret" || h.Get("X-Api-Key") != "k" {
			t.Errorf("catalog request without the catalog headers: %v", h)
		}
		if h.Get("User-Agent") != DefaultUserAgent {
			t.Errorf("User-Agent = %q", h.Get("User-Agent"))
		}
	}
	got := otherLog.all()
	if len(got) != 2 {
		t.Fatalf("other origin saw %d requests, want 2 (HEAD, redirected HEAD)", len(got))
	}
	for _, h := range got {
		for _, name := range []string{"Authorization", "X-Api-Key", "X-Link-Token"} {
			if v := h.Get(name); v != "" {
				t.Errorf("%s leaked to another origin: %q", name, v)
			}
		}
	}
}

func TestLinkHeadersSentToCatalogOrigin(t *testing.T) {
	var log headerLog
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r)
		switch {
		case r.URL.Path == "/":
			fmt.Fprintf(w, `{"type":"Catalog","id":"c","links":[{"rel":"search","href":"%s/search"}]}`, srv.URL)
		case r.URL.RawQuery == "":
			fmt.Fprintf(w, `{"type":"FeatureCollection","features":[%s],"links":[{"rel":"next","href":"/search?p=2","headers":{"X-Page-Token":["t1","t2"]}}]}`, fakeItemJSON("a"))
		default:
			fmt.Fprintf(w, `{"type":"FeatureCollection","features":[%s],"links":[]}`, fakeItemJSON("b"))
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{})
	collectIDs(t, c.Search(SearchParams{}, SearchLimits{}))
	all := log.all()
	if got := all[len(all)-1].Get("X-Page-Token"); got != "t1, t2" {
		t.Errorf("link header on the next request = %q, want %q", got, "t1, t2")
	}
}

func TestBodyOverCapIsTooLarge(t *testing.T) {
	big := `{"type":"Catalog","id":"c","description":"` + strings.Repeat("x", 5000) + `","links":[]}`
	for _, declareLength := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if declareLength {
				w.Header().Set("Content-Length", fmt.Sprint(len(big)))
			}
			fmt.Fprint(w, big)
			if !declareLength {
				w.(http.Flusher).Flush() // chunked: no length declared
			}
		}))
		c, _ := New(srv.URL, Options{MaxBodyBytes: 1000})
		_, err := c.Root(context.Background())
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindTooLarge || se.URL != srv.URL || !strings.Contains(se.Message, "1000-byte cap") {
			t.Errorf("declared length %v: err = %v, want too_large naming the cap", declareLength, err)
		}
		c2, _ := New(srv.URL, Options{MaxBodyBytes: 10000})
		if _, err := c2.Root(context.Background()); err != nil {
			t.Errorf("under the cap: %v", err)
		}
		srv.Close()
	}
}

func TestStatusesBecomeTypedErrors(t *testing.T) {
	cases := []struct {
		status      int
		body        string
		retryAfter  string
		kind        ErrorKind
		message     string
		wantRetryAt time.Duration
	}{
		{404, `{"code":"NotFound","description":"Not Found"}`, "", KindNotFound, "Not Found", 0},
		{401, `{"detail":"Missing API key"}`, "", KindUnauthorized, "Missing API key", 0},
		{403, `{"message":"Forbidden"}`, "", KindUnauthorized, "Forbidden", 0},
		{429, `{"error":"WAF","message":"Rate limit exceeded","status":429}`, "2", KindThrottled, "Rate limit exceeded", 2 * time.Second},
		// Non-JSON bodies are described, never echoed.
		{503, `<html><body><h1>503 Service Unavailable</h1></body></html>`, "", KindServer, "a 58-byte untyped answer (not shown)", 0},
		{422, `{"detail":[{"loc":["body","collections"],"msg":"collection is required"}]}`, "", KindBadRequest, `[{"loc":["body","collections"],"msg":"collection is required"}]`, 0},
		{400, ``, "", KindBadRequest, "Bad Request", 0},
		{405, `plain text reason`, "", KindBadRequest, "a 17-byte untyped answer (not shown)", 0},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.retryAfter != "" {
				w.Header().Set("Retry-After", tc.retryAfter)
			}
			w.Header()["Content-Type"] = nil // no sniffing: the body alone decides
			w.WriteHeader(tc.status)
			fmt.Fprint(w, tc.body)
		}))
		c, _ := New(srv.URL+"/stac", Options{})
		_, err := c.Collection(context.Background(), "x")
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("%d: err = %v, want *Error", tc.status, err)
		}
		if se.Kind != tc.kind || se.Status != tc.status || se.Message != tc.message || se.RetryAfter != tc.wantRetryAt ||
			se.Method != "GET" || se.URL != srv.URL+"/stac/collections/x" {
			t.Errorf("%d: got %+v\nwant kind %s message %q retry-after %v", tc.status, se, tc.kind, tc.message, tc.wantRetryAt)
		}
		srv.Close()
	}
}

func TestTransportAndContextErrors(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hang)
	c, _ := New(srv.URL, Options{})

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Root(ctx)
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindTransport || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline: err = %v, want transport error that is context.DeadlineExceeded", err)
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := c.Root(ctx2); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	c2, _ := New(closedURL, Options{})
	_, err = c2.Root(context.Background())
	if !errors.As(err, &se) || se.Kind != KindTransport || se.Status != 0 || se.Err == nil {
		t.Errorf("refused: err = %v, want transport with the cause", err)
	}
}

func TestNonSTACJSONIsInvalidSTAC(t *testing.T) {
	bodies := []string{`<html>hello</html>`, `{"replay":"not recorded"}`, `[1,2]`, ``, `{"type":"FeatureCollection"}`}
	for _, body := range bodies {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/" {
				fmt.Fprint(w, `{"type":"Catalog","id":"c","links":[{"rel":"search","href":"/search"}]}`)
				return
			}
			fmt.Fprint(w, body)
		}))
		c, _ := New(srv.URL, Options{})
		var err error
		for _, e := range c.Search(SearchParams{}, SearchLimits{}).Pages(context.Background()) {
			err = e
		}
		var se *Error
		if !errors.As(err, &se) || se.Kind != KindInvalidSTAC || se.Status != 200 {
			t.Errorf("body %q: err = %v, want invalid_stac with status 200", body, err)
		}
		srv.Close()
	}
}

// capabilityServer serves a landing page, optional /conformance, and
// records every path requested.
type capabilityServer struct {
	*httptest.Server
	mu     sync.Mutex
	paths  []string
	routes map[string]func(w http.ResponseWriter, r *http.Request)
}

func newCapabilityServer(t *testing.T, rootConformsTo string, extraLinks string) *capabilityServer {
	cs := &capabilityServer{routes: map[string]func(http.ResponseWriter, *http.Request){}}
	cs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cs.mu.Lock()
		cs.paths = append(cs.paths, r.Method+" "+r.URL.RequestURI())
		cs.mu.Unlock()
		if r.URL.Path == "/" {
			fmt.Fprintf(w, `{"type":"Catalog","id":"c","conformsTo":%s,"links":[%s]}`, rootConformsTo, strings.ReplaceAll(extraLinks, "BASE", cs.URL))
			return
		}
		if h, ok := cs.routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"description":"no route"}`)
	}))
	t.Cleanup(cs.Close)
	return cs
}

func (cs *capabilityServer) requested() []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([]string(nil), cs.paths...)
}

const (
	confCore     = `"https://api.stacspec.org/v1.0.0/core"`
	confFeatures = `"https://api.stacspec.org/v1.0.0/ogcapi-features"`
	confSearch   = `"https://api.stacspec.org/v1.0.0/item-search"`
)

func TestConformanceFallsBackToLandingPage(t *testing.T) {
	cs := newCapabilityServer(t, `[`+confCore+`]`, ``)
	c, _ := New(cs.URL, Options{})
	conf, err := c.Conformance(context.Background())
	if err != nil || len(conf) != 1 || conf[0] != "https://api.stacspec.org/v1.0.0/core" {
		t.Errorf("404 on /conformance: %v, %v; want the landing page's list", conf, err)
	}

	cs2 := newCapabilityServer(t, `[`+confCore+`]`, ``)
	cs2.routes["/conformance"] = func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"conformsTo":[`+confCore+`,`+confSearch+`]}`)
	}
	c2, _ := New(cs2.URL, Options{})
	conf, err = c2.Conformance(context.Background())
	if err != nil || len(conf) != 2 {
		t.Errorf("/conformance: %v, %v; want its 2 classes", conf, err)
	}
	if _, err := c2.Conformance(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(cs2.requested()); n != 2 {
		t.Errorf("%d requests for two Conformance calls, want 2 (root and /conformance, then cached)", n)
	}

	cs3 := newCapabilityServer(t, `null`, ``)
	c3, _ := New(cs3.URL, Options{})
	conf, err = c3.Conformance(context.Background())
	if err != nil || conf == nil || len(conf) != 0 {
		t.Errorf("static catalog: %v, %v; want an empty list and no error", conf, err)
	}
}

func itemHandler(id, collection string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"type":"Feature","id":%q,"collection":%q,"geometry":null,"properties":{"datetime":null,"start_datetime":"2020-01-01T00:00:00Z"},"links":[],"assets":{}}`, id, collection)
	}
}

func TestItemUsesFeaturesThenSearchFallback(t *testing.T) {
	ctx := context.Background()
	// Features advertised: the items endpoint.
	cs := newCapabilityServer(t, `[`+confCore+`,`+confFeatures+`]`, ``)
	cs.routes["/collections/c1/items/a"] = itemHandler("a", "c1")
	c, _ := New(cs.URL, Options{})
	it, err := c.Item(ctx, "c1", "a")
	if err != nil || it.ID != "a" {
		t.Fatalf("features item: %v %v", it, err)
	}
	if dt, ok := it.Datetime(); !ok || dt.Year() != 2020 {
		t.Errorf("Datetime from start_datetime = %v, %v", dt, ok)
	}

	// Features path answers 404 but item search exists: search by ids.
	cs2 := newCapabilityServer(t, `[`+confCore+`,`+confFeatures+`,`+confSearch+`]`, `{"rel":"search","href":"BASE/search"}`)
	cs2.routes["/search"] = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("ids") == "a" && r.URL.Query().Get("collections") == "c1" {
			fmt.Fprint(w, `{"type":"FeatureCollection","features":[`+fakeItemJSON("a")+`],"links":[]}`)
			return
		}
		fmt.Fprint(w, `{"type":"FeatureCollection","features":[],"links":[]}`)
	}
	c2, _ := New(cs2.URL, Options{})
	if it, err := c2.Item(ctx, "c1", "a"); err != nil || it.ID != "a" {
		t.Errorf("fallback: %v %v", it, err)
	}
	_, err = c2.Item(ctx, "c1", "missing")
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindNotFound || !strings.Contains(se.URL, "ids=missing") {
		t.Errorf("missing item: %v, want not_found naming the search URL", err)
	}

	// Only item search: no features request at all.
	cs3 := newCapabilityServer(t, `[`+confCore+`,`+confSearch+`]`, `{"rel":"search","href":"BASE/search"}`)
	cs3.routes["/search"] = cs2.routes["/search"]
	c3, _ := New(cs3.URL, Options{})
	if it, err := c3.Item(ctx, "c1", "a"); err != nil || it.ID != "a" {
		t.Errorf("search only: %v %v", it, err)
	}
	for _, p := range cs3.requested() {
		if strings.Contains(p, "/items/") {
			t.Errorf("requested %s although Features is not advertised", p)
		}
	}

	// Neither: unsupported, and a 404 on a Features-only catalog is not found.
	cs4 := newCapabilityServer(t, `[`+confCore+`]`, ``)
	c4, _ := New(cs4.URL, Options{})
	if _, err := c4.Item(ctx, "c1", "a"); !errors.As(err, &se) || se.Kind != KindUnsupported {
		t.Errorf("no features, no search: %v, want unsupported", err)
	}
	if _, err := c.Item(ctx, "c1", "zzz"); !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Errorf("features 404: %v, want not_found", err)
	}
	var pe *ParamError
	if _, err := c.Item(ctx, "", "a"); !errors.As(err, &pe) || pe.Param != "collection_id" {
		t.Errorf("empty collection: %v", err)
	}
}

func TestAggregate(t *testing.T) {
	ctx := context.Background()
	result := `{"type":"AggregationCollection","aggregations":[{"name":"total_count","data_type":"integer","value":12}],"links":[]}`

	cs := newCapabilityServer(t, `[`+confCore+`,"https://api.stacspec.org/v0.3.0/aggregation"]`,
		`{"rel":"aggregate","method":"GET","href":"BASE/aggregate"},{"rel":"aggregations","href":"BASE/aggregations"}`)
	var gotQuery string
	cs.routes["/aggregate"] = func(w http.ResponseWriter, r *http.Request) {
		gotQuery = r.URL.RawQuery
		fmt.Fprint(w, result)
	}
	cs.routes["/aggregations"] = func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"aggregations":[{"name":"total_count","data_type":"integer"},{"name":"datetime_frequency","data_type":"frequency_distribution"}]}`)
	}
	c, _ := New(cs.URL, Options{})
	res, err := c.Aggregate(ctx, SearchParams{Collections: []string{"c1"}}, []string{"total_count", "datetime_frequency"})
	if err != nil || len(res.Aggregations) != 1 || string(res.Aggregations[0].Value) != "12" {
		t.Fatalf("Aggregate GET: %+v %v", res, err)
	}
	if gotQuery != "collections=c1&aggregations=total_count%2Cdatetime_frequency" {
		t.Errorf("GET query = %q", gotQuery)
	}
	list, err := c.Aggregations(ctx, "")
	if err != nil || len(list.Aggregations) != 2 {
		t.Errorf("Aggregations: %+v %v", list, err)
	}

	cs2 := newCapabilityServer(t, `[`+confCore+`]`, `{"rel":"aggregate","method":"POST","href":"BASE/aggregate"}`)
	var gotBody string
	cs2.routes["/aggregate"] = func(w http.ResponseWriter, r *http.Request) {
		b := new(strings.Builder)
		_, _ = fmt.Fprint(b, readAll(r))
		gotBody = r.Method + " " + b.String()
		fmt.Fprint(w, result)
	}
	c2, _ := New(cs2.URL, Options{})
	if _, err := c2.Aggregate(ctx, SearchParams{Collections: []string{"c1"}}, []string{"total_count"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(gotBody, "POST ") || !sameJSON(t, []byte(strings.TrimPrefix(gotBody, "POST ")), []byte(`{"collections":["c1"],"aggregations":["total_count"]}`)) {
		t.Errorf("POST aggregate request = %s", gotBody)
	}

	cs3 := newCapabilityServer(t, `[`+confCore+`]`, ``)
	c3, _ := New(cs3.URL, Options{})
	var se *Error
	if _, err := c3.Aggregate(ctx, SearchParams{}, nil); !errors.As(err, &se) || se.Kind != KindUnsupported {
		t.Errorf("no aggregation: %v, want unsupported", err)
	}
	if _, err := c3.Aggregations(ctx, ""); !errors.As(err, &se) || se.Kind != KindUnsupported {
		t.Errorf("no aggregations: %v, want unsupported", err)
	}
	for _, p := range cs3.requested() {
		if strings.Contains(p, "aggregat") {
			t.Errorf("requested %s on a catalog without aggregation", p)
		}
	}
}

func readAll(r *http.Request) string {
	b := new(strings.Builder)
	buf := make([]byte, 512)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestHeadIsStatusChecked(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big.tif":
			w.Header().Set("Content-Length", "5000000000") // over any body cap: HEAD must not care
		case "/unknown":
			w.Header().Set("Transfer-Encoding", "chunked")
		default:
			w.Header().Set("Content-Length", "1234") // an error page's length
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{MaxBodyBytes: 1000})
	ctx := context.Background()
	if n, err := c.Head(ctx, srv.URL+"/big.tif"); err != nil || n != 5000000000 {
		t.Errorf("Head big = %d, %v", n, err)
	}
	if n, err := c.Head(ctx, "/unknown"); err != nil || n != -1 {
		t.Errorf("Head relative, no length = %d, %v; want -1", n, err)
	}
	n, err := c.Head(ctx, srv.URL+"/denied")
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindUnauthorized || se.Status != 403 || n != -1 || se.Method != "HEAD" {
		t.Errorf("Head 403 = %d, %v; want -1 and an unauthorized error", n, err)
	}
	var pe *ParamError
	if _, err := c.Head(ctx, "s3://bucket/key.tif"); !errors.As(err, &pe) || pe.Param != "href" {
		t.Errorf("Head s3 = %v, want a ParamError for href", err)
	}
}

func TestQueryablesPerCollection(t *testing.T) {
	cs := newCapabilityServer(t, `[`+confCore+`]`, ``)
	cs.routes["/collections/c1/queryables"] = func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "application/schema+json") {
			w.WriteHeader(http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Type", "application/schema+json")
		fmt.Fprint(w, `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"eo:cloud_cover":{"type":"number"}},"additionalProperties":true}`)
	}
	c, _ := New(cs.URL, Options{})
	q, err := c.Queryables(context.Background(), "c1")
	if err != nil || len(q.Properties) != 1 || string(q.Extra["additionalProperties"]) != "true" {
		t.Errorf("Queryables = %+v, %v", q, err)
	}
}

func TestCollectionPagesFollowNextAndReportUnsentFilters(t *testing.T) {
	cs := newCapabilityServer(t, `[`+confCore+`,"https://api.stacspec.org/v1.0.0/collections"]`, ``)
	cs.routes["/collections"] = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("page") == "2" {
			fmt.Fprint(w, `{"collections":[{"type":"Collection","id":"b","links":[]},{"type":"Collection","id":"a","links":[]}],"links":[]}`)
			return
		}
		fmt.Fprint(w, `{"collections":[{"type":"Collection","id":"a","links":[]}],"links":[{"rel":"next","href":"?page=2"}],"numberMatched":2}`)
	}
	c, _ := New(cs.URL, Options{})
	var ids []string
	var unsent []string
	dropped := 0
	for p, err := range c.CollectionPages(context.Background(), CollectionQuery{Q: "sentinel"}, SearchLimits{}) {
		if err != nil {
			t.Fatal(err)
		}
		unsent = p.Unsent
		dropped += p.Dropped
		for _, col := range p.Collections {
			ids = append(ids, col.ID)
		}
	}
	if strings.Join(ids, ",") != "a,b" || dropped != 1 {
		t.Errorf("ids %v dropped %d; want a,b and 1 duplicate dropped", ids, dropped)
	}
	if len(unsent) != 1 || unsent[0] != "q" {
		t.Errorf("Unsent = %v, want [q] (no collection search advertised)", unsent)
	}
	for _, p := range cs.requested() {
		if strings.Contains(p, "q=") {
			t.Errorf("sent %s although collection search is not advertised", p)
		}
	}
}

func TestSearchWithoutSearchLinkUsesBaseSearchWhenDeclared(t *testing.T) {
	cs := newCapabilityServer(t, `[`+confCore+`,`+confSearch+`]`, ``)
	cs.routes["/search"] = func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"type":"FeatureCollection","features":[`+fakeItemJSON("a")+`],"links":[]}`)
	}
	c, _ := New(cs.URL, Options{})
	if got := collectIDs(t, c.Search(SearchParams{}, SearchLimits{})); len(got) != 1 {
		t.Errorf("got %v", got)
	}
	cs2 := newCapabilityServer(t, `[`+confCore+`]`, ``)
	c2, _ := New(cs2.URL, Options{})
	err := lastItemError(c2.Search(SearchParams{}, SearchLimits{}))
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindUnsupported {
		t.Errorf("no item search declared: %v, want unsupported", err)
	}
}

func TestErrorPageOverCapKeepsItsStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprint(w, "<html><body><p>upstream timed out</p>"+strings.Repeat("<!-- padding -->", 1000)+"</body></html>")
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{MaxBodyBytes: 1000})
	_, err := c.Root(context.Background())
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindServer || se.Status != 502 || se.Message != "a 16051-byte text/html answer (not shown)" {
		t.Errorf("err = %v, want server_error 502 described by type and size", err)
	}
}

func TestPositionMethodIsNormalised(t *testing.T) {
	var method string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method = r.Method
		fmt.Fprint(w, `{"type":"FeatureCollection","features":[],"links":[]}`)
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{})
	s := c.ContinueSearch(Position{Request: Request{Method: "post", URL: srv.URL + "/search", Body: json.RawMessage(`{}`)}}, SearchLimits{})
	collectIDs(t, s)
	if method != "POST" {
		t.Errorf("sent method %q, want POST", method)
	}
}

func TestRelativeLandingLinksResolveAgainstTheAnsweringURL(t *testing.T) {
	var searched string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stac":
			http.Redirect(w, r, "/stac/", http.StatusMovedPermanently)
		case "/stac/":
			fmt.Fprint(w, `{"type":"Catalog","id":"c","links":[{"rel":"search","href":"search"}]}`)
		default:
			searched = r.URL.Path
			fmt.Fprint(w, `{"type":"FeatureCollection","features":[],"links":[]}`)
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL+"/stac", Options{})
	collectIDs(t, c.Search(SearchParams{}, SearchLimits{}))
	if searched != "/stac/search" {
		t.Errorf("searched %q, want /stac/search (relative to the redirected landing page)", searched)
	}
}

func TestFetchAssetIsCappedStatusCheckedAndKeepsHeadersOnOrigin(t *testing.T) {
	var otherLog headerLog
	png := bytes.Repeat([]byte{0x89}, 3000)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherLog.add(r)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(png)
	}))
	defer other.Close()
	catalog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/thumb.jpg":
			if r.Header.Get("X-Api-Key") != "k" {
				w.WriteHeader(http.StatusForbidden)
				return
			}
			w.Header().Set("Content-Type", "image/jpeg")
			fmt.Fprint(w, "jpeg bytes")
		case "/moved":
			http.Redirect(w, r, other.URL+"/thumb.png", http.StatusFound)
		case "/big":
			_, _ = w.Write(bytes.Repeat([]byte{1}, 5000))
		default:
			http.NotFound(w, r)
		}
	}))
	defer catalog.Close()
	c, _ := New(catalog.URL, Options{Headers: http.Header{"X-Api-Key": {"k"}}})
	ctx := context.Background()

	got, err := c.FetchAsset(ctx, "/thumb.jpg", 1000, "image/*")
	if err != nil || string(got.Body) != "jpeg bytes" || got.ContentType != "image/jpeg" || got.URL != catalog.URL+"/thumb.jpg" {
		t.Fatalf("FetchAsset relative = %+v, %v", got, err)
	}
	got, err = c.FetchAsset(ctx, catalog.URL+"/moved", 4000, "image/*")
	if err != nil || !bytes.Equal(got.Body, png) || got.URL != other.URL+"/thumb.png" {
		t.Fatalf("FetchAsset via redirect = %v", err)
	}
	if h := otherLog.all(); len(h) != 1 || h[0].Get("X-Api-Key") != "" {
		t.Errorf("the catalog's key reached another origin: %v", h)
	}
	var se *Error
	if _, err := c.FetchAsset(ctx, catalog.URL+"/big", 1000, ""); !errors.As(err, &se) || se.Kind != KindTooLarge || !strings.Contains(se.Message, "1000-byte cap") {
		t.Errorf("FetchAsset over the cap = %v, want too_large", err)
	}
	if _, err := c.FetchAsset(ctx, catalog.URL+"/missing", 1000, ""); !errors.As(err, &se) || se.Kind != KindNotFound {
		t.Errorf("FetchAsset 404 = %v, want not_found", err)
	}
	var pe *ParamError
	if _, err := c.FetchAsset(ctx, "s3://bucket/thumb.png", 1000, ""); !errors.As(err, &pe) || !strings.Contains(pe.Accepted, "fetched") {
		t.Errorf("FetchAsset s3 = %v, want a ParamError", err)
	}
}
