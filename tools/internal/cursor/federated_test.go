package cursor

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// A search of Earth Search and Planetary Computer as their next links
// write positions: a stac-server "next" token and a pgstac "next:" token.
func sampleFederated(tail int) Cursor {
	es := stacclient.RequestDiff{Method: "POST", Path: "/search",
		Patch: []byte(`{"next":"2025-07-31T13:03:25.899000Z,S2B_24MVV_20250731_0_L2A,sentinel-2-l2a"}`)}
	pc := stacclient.RequestDiff{Method: "POST", Path: "/search",
		Patch: []byte(`{"token":"next:sentinel-2-l2a:S2B_MSIL2A_20250731T130249_R095_T24MVV_20250731T132745"}`)}
	c := Cursor{Kind: Federated, Catalog: federatedCatalogs,
		Params:   []byte(`{"collections":["sentinel-2-l2a"],"bbox":[-40.5,-5.3,-37.5,-3.5],"datetime":"2025-07-01T00:00:00Z/2025-07-31T23:59:59Z"}`),
		PageSize: 10,
		Members: []MemberPosition{
			{Ref: "earth-search", State: MemberActive, Pos: es, Offset: 10, Skip: 3},
			{Ref: "planetary-computer", State: MemberActive, Pos: pc, Offset: 0, Skip: 7},
			{Ref: "cdse", State: MemberDropped},
		}}
	for i := range tail {
		r := TailRecord{Kind: 2, Key: uint32(0x9e3779b9 * (i + 1)), Unix: 1753967007 - int64(i)}
		if i%3 == 0 {
			r.Kind, r.BBox = tailGeneric, [4]int16{-4050, -530, -3750, int16(-350 + i)}
		}
		c.Tail = append(c.Tail, r)
	}
	return c
}

func TestFederatedCursorRoundTrip(t *testing.T) {
	in := sampleFederated(6)
	token, form, dropped := FitFederated(testKey, in, in.Params, []byte("earth-search,planetary-computer,cdse"))
	if token == "" || len(token) > MaxBytes || dropped != 0 {
		t.Fatalf("token of %d bytes (dropped %d records)", len(token), dropped)
	}
	got, err := Decode(testKey, token, Items) // search_items accepts both kinds
	if err != nil {
		t.Fatal(err)
	}
	want := form
	for i := range want.Members {
		want.Members[i].Pos = normalisedDiff(want.Members[i].Pos)
		got.Members[i].Pos = normalisedDiff(got.Members[i].Pos)
	}
	if !reflect.DeepEqual(got.Members, want.Members) || !reflect.DeepEqual(got.Tail, want.Tail) ||
		string(got.Params) != string(want.Params) || got.Kind != Federated {
		t.Errorf("decoded %+v\nwant    %+v", got, want)
	}
	if _, err := Decode(testKey, token, Collections); err == nil || !strings.Contains(err.Error(), "search_items") {
		t.Errorf("a federated cursor given to search_collections: %v", err)
	}
}

// What does not fit goes in order: the parameters, the references, then
// the oldest records; never a token over MaxBytes.
func TestFederatedCursorFitsBySheddingInOrder(t *testing.T) {
	in := sampleFederated(MaxTail)
	in.Params = []byte(`{"collections":["sentinel-2-l2a"],"intersects":{"type":"Polygon","coordinates":[[[-40.51234,-5.31234],[-37.51234,-5.31234],[-37.51234,-3.51234],[-40.51234,-3.51234],[-40.51234,-5.31234]]]},"query":{"eo:cloud_cover":{"lt":20}}}`)
	token, form, dropped := FitFederated(testKey, in, in.Params, []byte("k"))
	if token == "" || len(token) > MaxBytes {
		t.Fatalf("no token within %d bytes: %d", MaxBytes, len(token))
	}
	if form.Params != nil && dropped > 0 {
		t.Error("records were dropped while the parameters stayed in the token")
	}
	if dropped > 0 && form.Catalog != "" {
		t.Error("records were dropped while the references stayed in the token")
	}
	if form.Params == nil && form.ParamsSum != Sum64(in.Params) {
		t.Error("hashed parameters do not carry their fingerprint")
	}
	t.Logf("%d records of %d kept, params inline %v, references inline %v, %d bytes", len(form.Tail), len(in.Tail), form.Params != nil, form.Catalog != "", len(token))
}

func normalisedDiff(d stacclient.RequestDiff) stacclient.RequestDiff {
	if len(d.Query) == 0 {
		d.Query = nil
	}
	if len(d.Patch) == 0 {
		d.Patch = nil
	}
	return d
}
