package stacclient

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The replay server answers a client's requests with responses recorded from
// real STAC APIs (testdata/recordings, see its README). It matches method +
// path + sorted decoded query + canonical JSON body, semantically: the
// recordings are worded the way pystac-client asks, so GET and POST /search
// with the same parameters are one request, ids and collections are sets,
// "+00:00" is "Z", numbers are numbers. Absolute origins in bodies are
// rewritten to the replay server, and anything not recorded gets
// 599 {"replay":"not recorded"} so a test cannot mistake it for a catalog 404.

// replayFixture is one recorded interaction (format real-stac-fixture/1).
type replayFixture struct {
	Origin      string            `json:"origin"`
	Method      string            `json:"method"`
	URL         string            `json:"url"`
	Query       [][]string        `json:"query"`
	RequestBody json.RawMessage   `json:"request_body"`
	Status      int               `json:"status"`
	Headers     map[string]string `json:"headers"`
	BodyFormat  string            `json:"body_format"`
	Body        json.RawMessage   `json:"body"`
	Variant     int               `json:"variant"`
	file        string
}

// path is the recorded path without the query.
func (f *replayFixture) path() string {
	p, _, _ := strings.Cut(f.URL, "?")
	return p
}

// bodyBytes is the recorded response body as served.
func (f *replayFixture) bodyBytes(t testing.TB) []byte {
	switch f.BodyFormat {
	case "json", "":
		return f.Body
	case "text":
		var s string
		if err := json.Unmarshal(f.Body, &s); err != nil {
			t.Fatalf("%s: text body: %v", f.file, err)
		}
		return []byte(s)
	case "base64":
		var s string
		if err := json.Unmarshal(f.Body, &s); err != nil {
			t.Fatalf("%s: base64 body: %v", f.file, err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("%s: base64 body: %v", f.file, err)
		}
		return b
	}
	t.Fatalf("%s: unknown body_format %q", f.file, f.BodyFormat)
	return nil
}

// replayedRequest is what the client sent, for assertions.
type replayedRequest struct {
	Method  string
	Path    string
	Query   url.Values
	Body    []byte
	Header  http.Header
	Matched string // the fixture file that answered, or "" when not recorded
}

type replayServer struct {
	*httptest.Server
	t        testing.TB
	host     string
	fixtures map[string][]*replayFixture

	mu       sync.Mutex
	requests []replayedRequest
}

// newReplayServer serves the recordings of one host, plus synthetic
// fixtures a test adds (which must say so where they are built).
func newReplayServer(t testing.TB, host string, synthetic ...*replayFixture) *replayServer {
	t.Helper()
	rs := &replayServer{t: t, host: host, fixtures: make(map[string][]*replayFixture)}
	files, err := filepath.Glob(filepath.Join("testdata", "recordings", host, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings for %s: %v", host, err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f := &replayFixture{file: filepath.Base(file)}
		if err := json.Unmarshal(raw, f); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		rs.add(f)
	}
	for _, f := range synthetic {
		if f.file == "" {
			f.file = "synthetic " + f.Method + " " + f.URL
		}
		rs.add(f)
	}
	for _, candidates := range rs.fixtures {
		sort.SliceStable(candidates, func(i, j int) bool { return candidates[i].Variant < candidates[j].Variant })
	}
	rs.Server = httptest.NewServer(http.HandlerFunc(rs.serve))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *replayServer) add(f *replayFixture) {
	values := url.Values{}
	for _, pair := range f.Query {
		if len(pair) == 2 {
			values.Add(pair[0], pair[1])
		}
	}
	var body []byte
	if len(f.RequestBody) > 0 && string(f.RequestBody) != "null" {
		body = f.RequestBody
	}
	key := replayKey(rs.t, f.Method, f.path(), values, body)
	rs.fixtures[key] = append(rs.fixtures[key], f)
}

// serve answers one request from the recordings. It uses a plain handler,
// not a ServeMux, so that paths such as "//search" are not cleaned.
func (rs *replayServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	key := replayKey(rs.t, r.Method, r.URL.EscapedPath(), r.URL.Query(), body)
	fixture := rs.pick(key, r.Method)
	rec := replayedRequest{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.Query(), Body: body, Header: r.Header.Clone()}
	if fixture == nil {
		rs.record(rec)
		rs.t.Logf("replay %s: not recorded: %s", rs.host, key)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(599)
		_, _ = w.Write([]byte(`{"replay":"not recorded"}`))
		return
	}
	rec.Matched = fixture.file
	rs.record(rec)
	for name, value := range fixture.Headers {
		w.Header().Set(name, value)
	}
	w.WriteHeader(fixture.Status)
	_, _ = w.Write(rs.rewriteOrigins(fixture.bodyBytes(rs.t)))
}

// pick prefers a recording made with the same method, then the newest variant.
func (rs *replayServer) pick(key, method string) *replayFixture {
	candidates := rs.fixtures[key]
	for _, f := range candidates {
		if strings.EqualFold(f.Method, method) {
			return f
		}
	}
	if len(candidates) > 0 {
		return candidates[0]
	}
	return nil
}

func (rs *replayServer) record(r replayedRequest) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.requests = append(rs.requests, r)
}

// received is every request so far.
func (rs *replayServer) received() []replayedRequest {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]replayedRequest(nil), rs.requests...)
}

// unrecorded is every request that matched no recording.
func (rs *replayServer) unrecorded() []replayedRequest {
	var out []replayedRequest
	for _, r := range rs.received() {
		if r.Matched == "" {
			out = append(out, r)
		}
	}
	return out
}

// rewriteOrigins points absolute links at the replay server. Both schemes
// are rewritten: Astraea's next links switch to http://.
func (rs *replayServer) rewriteOrigins(b []byte) []byte {
	for _, scheme := range []string{"https://", "http://"} {
		b = bytes.ReplaceAll(b, []byte(scheme+rs.host), []byte(rs.URL))
	}
	return b
}

// fixture returns the recording in file (for expected values in tests).
func (rs *replayServer) fixture(file string) *replayFixture {
	rs.t.Helper()
	for _, candidates := range rs.fixtures {
		for _, f := range candidates {
			if f.file == file {
				return f
			}
		}
	}
	rs.t.Fatalf("no fixture %s for %s", file, rs.host)
	return nil
}

// replayKey is the semantic identity of a request (see the file comment).
func replayKey(t testing.TB, method, path string, query url.Values, body []byte) string {
	params := make(map[string]any)
	for name, values := range query {
		params[name] = normalizeQueryParam(name, strings.Join(values, ","))
	}
	if len(bytes.TrimSpace(body)) > 0 {
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			params["(body)"] = string(body)
		}
		for name, v := range obj {
			params[name] = normalizeBodyParam(name, v)
		}
	}
	canonical, err := json.Marshal(params)
	if err != nil {
		t.Fatalf("replay key: %v", err)
	}
	verb := strings.ToUpper(method)
	if strings.HasSuffix(path, "/search") && (verb == "GET" || verb == "POST") {
		verb = "SEARCH"
	}
	return verb + " " + path + " " + string(canonical)
}

func normalizeQueryParam(name, value string) any {
	switch name {
	case "collections", "ids":
		return sortedStrings(strings.Split(value, ","))
	case "bbox":
		var nums []any
		for _, p := range strings.Split(value, ",") {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil {
				return value
			}
			nums = append(nums, f)
		}
		return nums
	case "limit":
		if f, err := strconv.ParseFloat(value, 64); err == nil {
			return f
		}
	case "datetime":
		return normalizeReplayDatetime(value)
	case "intersects", "query", "filter":
		var v any
		if json.Unmarshal([]byte(value), &v) == nil {
			return normalizeBodyParam(name, v)
		}
	case "fields":
		return fieldsFromQuery(value)
	case "sortby":
		var out []any
		for _, p := range strings.Split(value, ",") {
			dir := "asc"
			if strings.HasPrefix(p, "-") {
				dir = "desc"
			}
			out = append(out, map[string]any{"field": strings.TrimLeft(p, "+- "), "direction": dir})
		}
		return out
	}
	return value
}

func normalizeBodyParam(name string, v any) any {
	switch name {
	case "collections", "ids":
		if list, ok := v.([]any); ok {
			var s []string
			for _, e := range list {
				str, _ := e.(string)
				s = append(s, str)
			}
			return sortedStrings(s)
		}
		if str, ok := v.(string); ok {
			return sortedStrings(strings.Split(str, ","))
		}
	case "datetime":
		if s, ok := v.(string); ok {
			return normalizeReplayDatetime(s)
		}
	case "fields":
		if obj, ok := v.(map[string]any); ok {
			out := make(map[string]any)
			for k, list := range obj {
				if l, ok := list.([]any); ok && len(l) == 0 {
					continue // {"include": []} says nothing
				}
				out[k] = list
			}
			return out
		}
	}
	return v
}

func fieldsFromQuery(value string) any {
	out := make(map[string]any)
	var include, exclude []any
	for _, p := range strings.Split(value, ",") {
		switch {
		case strings.HasPrefix(p, "-"):
			exclude = append(exclude, p[1:])
		case p != "":
			include = append(include, strings.TrimPrefix(p, "+"))
		}
	}
	if include != nil {
		out["include"] = include
	}
	if exclude != nil {
		out["exclude"] = exclude
	}
	return out
}

func sortedStrings(s []string) []any {
	sorted := append([]string(nil), s...)
	sort.Strings(sorted)
	out := make([]any, len(sorted))
	for i, v := range sorted {
		out[i] = strings.TrimSpace(v)
	}
	return out
}

func normalizeReplayDatetime(s string) string {
	return strings.ReplaceAll(s, "+00:00", "Z")
}

// syntheticJSON builds a fixture that was never recorded; callers label it.
func syntheticJSON(origin, method, path string, status int, body string) *replayFixture {
	return &replayFixture{Origin: origin, Method: method, URL: path, Status: status,
		Headers: map[string]string{"content-type": "application/json"}, BodyFormat: "json", Body: json.RawMessage(body),
		file: "synthetic " + method + " " + path}
}
