package stacclient

import (
	"bytes"
	"encoding/json"
	"testing"
)

// An item's Source is the JSON it was decoded from, and decoded it equals
// the typed Item's own encoding: tools send it instead of re-encoding the
// item, so nothing the catalog sent may be missing from it.
func TestItemSourceIsTheItemAsSent(t *testing.T) {
	items := recordedItems(t)
	if len(items) < 20 {
		t.Fatalf("only %d recorded items", len(items))
	}
	for _, raw := range items {
		var it Item
		if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(it.Source(), bytes.TrimSpace(raw)) {
			t.Fatalf("item %s: Source is not the bytes it was decoded from", it.ID)
		}
		written, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, it.Source(), written) {
			t.Errorf("item %s: Source differs from the typed item's encoding", it.ID)
		}
	}
	// Items of a page carry their own bytes, not the page's.
	page := []byte(`{"type":"FeatureCollection","features":[ {"type":"Feature","id":"a","geometry":null,"properties":{}} ,{"type":"Feature","id":"b","geometry":null,"properties":{"n":1.50}}]}`)
	var ic ItemCollection
	if err := json.Unmarshal(page, &ic); err != nil {
		t.Fatal(err)
	}
	if got, want := string(ic.Features[1].Source()), `{"type":"Feature","id":"b","geometry":null,"properties":{"n":1.50}}`; got != want {
		t.Errorf("second feature's Source = %s, want %s", got, want)
	}
	// The bytes are a copy: reusing the decoded buffer does not change them.
	for i := range page {
		page[i] = ' '
	}
	if got := string(ic.Features[0].Source()); got != `{"type":"Feature","id":"a","geometry":null,"properties":{}}` {
		t.Errorf("Source changed with the decoded buffer: %s", got)
	}
}

func TestItemSourceIsNilWhenItCannotBeSentAsIs(t *testing.T) {
	if (&Item{ID: "built"}).Source() != nil {
		t.Error("an Item built in code has a Source")
	}
	var it Item
	if err := json.Unmarshal([]byte("{\"type\":\"Feature\",\"id\":\"x\",\"properties\":{\"title\":\"bad \xff byte\"}}"), &it); err != nil {
		t.Fatal(err)
	}
	if it.Source() != nil {
		t.Error("an item whose JSON is not valid UTF-8 kept its bytes; they must be re-encoded (which repairs them)")
	}
}
