package stacserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// Store holds the collections and items a Server serves. Documents are kept
// as generic JSON (numbers as json.Number) so every field, known or not, is
// served back unchanged. Fill a Store before handing it to New; from then
// on it is read-only (adding returns an error) and may back several Servers.
type Store struct {
	collections map[string]*storedCollection
	frozen      bool // set by New; a served store no longer accepts documents
	freezeOnce  sync.Once
	// Notes records what a loader skipped and why, so nothing is dropped
	// silently (for example an item with no collection).
	Notes []string
	// Root is what a loader read from the root document, for a landing
	// page that carries the catalog's own id, title and description.
	Root RootInfo
	// stamps is what a loader saw of each file it read (disk.go).
	stamps map[string]fileStamp
}

// RootInfo is the identity of a loaded static catalog's root document.
type RootInfo struct {
	ID, Title, Description string
}

type storedCollection struct {
	id    string
	doc   map[string]any
	items []*storedItem // sorted by datetime descending, then id
	byID  map[string]*storedItem
	file  string // the file it was loaded from or written to ("" in memory only)
}

// storedItem is an item document plus the fields search needs, parsed once.
type storedItem struct {
	id         string
	collection string
	doc        map[string]any
	shape      *shape // nil when the item has no geometry
	start, end time.Time
	hasTime    bool
	// file is where the item was loaded from or written to: a file, or
	// "file#features[i]" for a member of an ItemCollection; linkedFrom is
	// the file whose item link names it. Both "" in memory only.
	file, linkedFrom string
	// assetFiles are the assets whose relative hrefs name files of assetFS,
	// the catalog it was loaded from (LoadOptions.ServeAssetFiles; assets.go).
	assetFiles map[string]assetFile
	assetFS    fs.FS
}

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{collections: map[string]*storedCollection{}, stamps: map[string]fileStamp{}}
}

// decodeJSONObject decodes raw into a map, keeping numbers as json.Number.
func decodeJSONObject(raw []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("expected a JSON object, got null")
	}
	return m, nil
}

// AddCollection adds a collection document (a STAC Collection as JSON).
// Adding a collection whose id already exists is an error.
func (s *Store) AddCollection(raw []byte) error {
	if s.frozen {
		return errFrozen
	}
	doc, err := decodeJSONObject(raw)
	if err != nil {
		return fmt.Errorf("collection: %w", err)
	}
	id, _ := doc["id"].(string)
	if id == "" {
		return fmt.Errorf("collection: missing string \"id\"")
	}
	if t, _ := doc["type"].(string); t != "Collection" {
		return fmt.Errorf("collection %q: \"type\" is %q, want \"Collection\"", id, t)
	}
	if _, dup := s.collections[id]; dup {
		return fmt.Errorf("collection %q: already in the store", id)
	}
	s.collections[id] = &storedCollection{id: id, doc: doc, byID: map[string]*storedItem{}}
	return nil
}

// AddItem adds an item document to the collection named by its "collection"
// field, which must already be in the store.
func (s *Store) AddItem(raw []byte) error {
	doc, err := decodeJSONObject(raw)
	if err != nil {
		return fmt.Errorf("item: %w", err)
	}
	return s.addItemDoc(doc)
}

func (s *Store) addItemDoc(doc map[string]any) error {
	if s.frozen {
		return errFrozen
	}
	it, err := indexItem(doc)
	if err != nil {
		return err
	}
	c, ok := s.collections[it.collection]
	if !ok {
		return fmt.Errorf("item %q: collection %q is not in the store (add the collection first)", it.id, it.collection)
	}
	if _, dup := c.byID[it.id]; dup {
		return fmt.Errorf("item %q: already in collection %q", it.id, it.collection)
	}
	c.byID[it.id] = it
	c.items = append(c.items, it)
	return nil
}

// itemBefore is the default result order: newest first, then by id, which
// keeps pages deterministic.
func itemBefore(a, b *storedItem) bool {
	if !a.start.Equal(b.start) {
		return a.start.After(b.start)
	}
	if a.collection != b.collection {
		return a.collection < b.collection
	}
	return a.id < b.id
}

func indexItem(doc map[string]any) (*storedItem, error) {
	id, _ := doc["id"].(string)
	if id == "" {
		return nil, fmt.Errorf("item: missing string \"id\"")
	}
	if t, _ := doc["type"].(string); t != "Feature" {
		return nil, fmt.Errorf("item %q: \"type\" is %q, want \"Feature\"", id, t)
	}
	coll, _ := doc["collection"].(string)
	if coll == "" {
		return nil, fmt.Errorf("item %q: missing string \"collection\"", id)
	}
	props, ok := doc["properties"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("item %q: \"properties\" is not an object", id)
	}
	it := &storedItem{id: id, collection: coll, doc: doc}
	if g, present := doc["geometry"]; present && g != nil {
		geom, err := geometryFromJSONValue(g)
		if err != nil {
			return nil, fmt.Errorf("item %q: geometry: %w", id, err)
		}
		it.shape = newShape(geom)
	}
	start, end, has, err := itemTime(props)
	if err != nil {
		return nil, fmt.Errorf("item %q: %w", id, err)
	}
	it.start, it.end, it.hasTime = start, end, has
	return it, nil
}

// itemTime is the item's instant (datetime) or its start_datetime/
// end_datetime range when datetime is null.
func itemTime(props map[string]any) (start, end time.Time, has bool, err error) {
	parse := func(key string) (time.Time, bool, error) {
		s, ok := props[key].(string)
		if !ok || s == "" {
			return time.Time{}, false, nil
		}
		t, err := stacdoc.ParseTime(s) // RFC 3339 with leap seconds and lowercase t/z
		if err != nil {
			return time.Time{}, false, fmt.Errorf("properties.%s %q is not RFC 3339", key, s)
		}
		return t, true, nil
	}
	if t, ok, err := parse("datetime"); err != nil || ok {
		return t, t, ok, err
	}
	s, okS, err := parse("start_datetime")
	if err != nil {
		return s, s, false, err
	}
	e, okE, err := parse("end_datetime")
	if err != nil {
		return s, e, false, err
	}
	if okS && okE {
		return s, e, true, nil
	}
	return time.Time{}, time.Time{}, false, nil
}

// freeze puts every collection's items in default result order (once, so
// that loading stays linear) and makes the store read-only, so that several
// Servers may share it.
func (s *Store) freeze() {
	s.freezeOnce.Do(func() {
		for _, c := range s.collections {
			sort.SliceStable(c.items, func(i, j int) bool { return itemBefore(c.items[i], c.items[j]) })
		}
		s.frozen = true
	})
}

var errFrozen = fmt.Errorf("the store is already served by a Server and is read-only; add documents before calling New")

// collectionIDs lists collection ids in sorted order.
func (s *Store) collectionIDs() []string {
	return slices.Sorted(maps.Keys(s.collections))
}

// allItems returns the items of the given collections (all when none are
// named) in default result order.
func (s *Store) allItems(collections []string) []*storedItem {
	if len(collections) == 0 {
		collections = s.collectionIDs()
	}
	var out []*storedItem
	seen := map[string]bool{}
	for _, id := range collections {
		c, ok := s.collections[id]
		if !ok || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, c.items...)
	}
	sort.SliceStable(out, func(i, j int) bool { return itemBefore(out[i], out[j]) })
	return out
}

// collectionCount and ItemCount let tests and loaders check what was loaded.
func (s *Store) collectionCount() int { return len(s.collections) }

// ItemCount is the number of items across all collections.
func (s *Store) ItemCount() int {
	n := 0
	for _, c := range s.collections {
		n += len(c.items)
	}
	return n
}
