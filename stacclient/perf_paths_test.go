package stacclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
)

// The capabilities this package derives for itself are derived again when
// the landing page or the conformance classes are fetched again, and only
// then; Capabilities gives each caller a value of its own.
func TestCapabilitiesFollowTheConformanceClasses(t *testing.T) {
	var search atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		conf := []string{"https://api.stacspec.org/v1.0.0/core", "https://api.stacspec.org/v1.0.0/ogcapi-features"}
		if search.Load() {
			conf = []string{"https://api.stacspec.org/v1.0.0/core", "https://api.stacspec.org/v1.0.0/item-search"}
		}
		switch r.URL.Path {
		case "/":
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "Catalog", "id": "c", "description": "d", "stac_version": "1.0.0",
				"conformsTo": conf, "links": []map[string]string{{"rel": "conformance", "href": "/conformance"}}})
		case "/conformance":
			_ = json.NewEncoder(w).Encode(map[string]any{"conformsTo": conf})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	uncached, err := New(srv.URL, Options{RootTTL: -1})
	if err != nil {
		t.Fatal(err)
	}
	caps, err := uncached.capabilities(ctx)
	if err != nil || !caps.Has(CapFeatures) || caps.Has(CapItemSearch) {
		t.Fatalf("before: features %v, search %v (%v)", caps.Has(CapFeatures), caps.Has(CapItemSearch), err)
	}
	search.Store(true)
	caps, err = uncached.capabilities(ctx)
	if err != nil || caps.Has(CapFeatures) || !caps.Has(CapItemSearch) {
		t.Errorf("after the classes changed: features %v, search %v (%v); want the new classes'", caps.Has(CapFeatures), caps.Has(CapItemSearch), err)
	}

	cached, err := New(srv.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := cached.capabilities(ctx)
	b, err2 := cached.capabilities(ctx)
	if err1 != nil || err2 != nil || a != b {
		t.Errorf("cached landing page: derived twice (%p, %p; %v %v)", a, b, err1, err2)
	}
	c, err1 := cached.Capabilities(ctx)
	d, err2 := cached.Capabilities(ctx)
	if err1 != nil || err2 != nil || c == d || c == a {
		t.Errorf("Capabilities shares its value between callers (%p, %p, memo %p)", c, d, a)
	}
}

// A body is read whole whether its declared length is right, short or
// long, and a declared length still counts against the cap.
func TestReadAllSizedReadsWhatIsThere(t *testing.T) {
	body := strings.Repeat("0123456789", 1000)
	for _, declared := range []int64{-1, 0, 1, 9999, 10000, 10001, 50000} {
		got, err := readAllSized(iotest.OneByteReader(strings.NewReader(body)), declared)
		if err != nil || string(got) != body {
			t.Errorf("declared %d: read %d bytes, %v; want %d", declared, len(got), err, len(body))
		}
		got, err = readAllSized(strings.NewReader(body), declared)
		if err != nil || string(got) != body {
			t.Errorf("declared %d: read %d bytes, %v; want %d", declared, len(got), err, len(body))
		}
	}
	resp := &http.Response{ContentLength: 5, Body: io.NopCloser(strings.NewReader("0123456789"))}
	if _, err := readCapped(resp, 8, "advice"); err == nil {
		t.Error("a body longer than the cap and than its declared length was read")
	}
	if _, err := readAllSized(iotest.ErrReader(io.ErrUnexpectedEOF), 10); err == nil {
		t.Error("a read error was lost")
	}
}

// Roles and stac_extensions decode as encoding/json decodes a []string,
// whichever way the array is written (the plain ones skip encoding/json).
func TestStringListsDecodeAsEncodingJSON(t *testing.T) {
	for _, roles := range []string{`["data","visual"]`, `[]`, ` [ "a" , "b" ] `, `null`, `["a\"b","c"]`, `["\u00e9t\u00e9"]`,
		`["été"]`, "[\"\xff\"]", `[1]`, `["a",null]`, `["a",["b"]]`, `[""]`} {
		var want struct {
			Roles []string `json:"roles"`
		}
		wantErr := json.Unmarshal([]byte(`{"roles":`+roles+`}`), &want)
		var got Asset
		gotErr := json.Unmarshal([]byte(`{"href":"x","roles":`+roles+`}`), &got)
		if (gotErr != nil) != (wantErr != nil) {
			t.Errorf("%s: error %v, encoding/json's %v", roles, gotErr, wantErr)
			continue
		}
		if gotErr == nil && (!slices.Equal(got.Roles, want.Roles) || (got.Roles == nil) != (want.Roles == nil)) {
			t.Errorf("%s: roles %#v, encoding/json's %#v", roles, got.Roles, want.Roles)
		}
	}
}

// decodeBody hands a model its bytes itself once they are valid JSON: the
// same value and the same error as encoding/json's route.
func TestDecodeBodyDecodesModelsAsEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"type":"Feature","id":"x","geometry":null,"properties":{"a":1.50},"assets":{"b":{"href":"h","roles":["data"]}},"links":[]}`,
		" \n{\"type\":\"Feature\",\"id\":\"y\"}\t\n",
		`null`, `[1]`, `{"id":7}`, `{"id":"x",}`, `{"id":"x"} {}`, `{"properties":{"a":1e400}}`, `"item"`, `{"assets":{"a":{"roles":[1]}}}`, `{"id":x}`, `{"properties":{"a":tru}}`,
	}
	for _, body := range bodies {
		var want, got Item
		wantErr := json.Unmarshal([]byte(body), &want)
		gotErr := decodeBody([]byte(body), &got)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%.40s: error %v, encoding/json's %v", body, gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%.40s: decoded %+v, encoding/json's %+v", body, got, want)
		}
	}
	var nilItem *Item
	if err := decodeBody([]byte(`{}`), nilItem); err == nil {
		t.Error("decoding into a nil *Item did not fail")
	}
}

// Member lists are pooled: decodes running side by side, of different
// objects, each get their own object's members (a list released while
// still in use, or kept past its release, mixes them up).
func TestPooledMemberListsDoNotMixDecodes(t *testing.T) {
	bodies := []string{
		`{"type":"Feature","id":"a","properties":{"x":1},"assets":{"one":{"href":"1","k":"v"},"two":{"href":"2","roles":["data"]}},"links":[{"rel":"self","href":"s"}],"extra":{"e":1}}`,
		`{"type":"Feature","id":"b","properties":{"y":[1,2]},"assets":{"th\u0072ee":{"href":"3","raster:bands":[{"nodata":0}]}},"links":[],"zz":true,"a\u0062":null}`,
	}
	want := make([]Item, len(bodies))
	for i, b := range bodies {
		if err := json.Unmarshal([]byte(b), &want[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := want[1].Assets["three"]; !ok || want[1].Extra["ab"] == nil {
		t.Fatalf("escaped member names not decoded: %v %v", want[1].Assets, want[1].Extra)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for n := range 200 {
				i := (g + n) % len(bodies)
				var got Item
				if err := decodeBody([]byte(bodies[i]), &got); err != nil || !reflect.DeepEqual(got, want[i]) {
					errs <- fmt.Sprintf("decode %d of body %d: %v %+v", n, i, err, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
