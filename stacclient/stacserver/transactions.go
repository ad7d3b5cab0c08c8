package stacserver

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// The STAC API Transaction extensions (Options.Writes): items
// (POST /collections/{id}/items, PUT/PATCH/DELETE …/items/{itemId}) and
// collections (POST /collections, PUT/PATCH /collections/{id}).
//
// Every document is checked with stacdoc before anything changes; a bad
// one is a 400 listing its problems. Changes are serialised (writeMu),
// made to a copy of the store, written to the catalog's files when
// Options.Writes.Dir is set (persist.go), and only then published: a
// request sees the store before or after a change, never half of it, and a
// change that could not be written is not served.
//
// Idempotency-Key headers are not honoured (most catalogs do not): a
// replayed create is a 409, which is what stac-mcp's own idempotency layer
// must cope with.

// Transaction conformance classes, as stac-fastapi and stac-server declare them.
const (
	classItemTransaction       = "https://api.stacspec.org/v1.0.0/ogcapi-features/extensions/transaction"
	classCollectionTransaction = "https://api.stacspec.org/v1.0.0/collections/extensions/transaction"
)

// transactionClasses are the classes the server adds to its conformance.
func (s *Server) transactionClasses() []string {
	if s.opts.Writes == nil {
		return nil
	}
	if s.opts.DisableFeatures {
		return []string{classCollectionTransaction}
	}
	return []string{classItemTransaction, classCollectionTransaction}
}

func (s *Server) transactionRoutes() {
	m := s.mux
	if !s.opts.DisableFeatures {
		m.HandleFunc("POST /collections/{collectionId}/items", s.handleCreateItem)
		m.HandleFunc("PUT /collections/{collectionId}/items/{itemId}", s.handleReplaceItem)
		m.HandleFunc("PATCH /collections/{collectionId}/items/{itemId}", s.handleReplaceItem)
		m.HandleFunc("DELETE /collections/{collectionId}/items/{itemId}", s.handleDeleteItem)
	}
	m.HandleFunc("POST /collections", s.handleCreateCollection)
	m.HandleFunc("PUT /collections/{collectionId}", s.handleReplaceCollection)
	m.HandleFunc("PATCH /collections/{collectionId}", s.handleReplaceCollection)
}

// structuralRels are the link relations the catalog manages itself: they
// are dropped from written documents and rebuilt (relative on disk,
// absolute when served).
var structuralRels = []string{"self", "root", "parent", "collection", "child", "item", "items"}

// readDocument reads a JSON object request body.
func readDocument(r *http.Request) (map[string]any, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	doc, err := decodeJSONObject(body)
	if err != nil {
		return nil, badRequest("the body is not a JSON object: %v", err)
	}
	return doc, nil
}

// invalid is the 400 for a document that fails stacdoc.
func invalid(err error) *apiError {
	return &apiError{status: 400, code: "BadRequest", description: err.Error()}
}

func conflict(format string, args ...any) *apiError {
	return &apiError{status: 409, code: "Conflict", description: fmt.Sprintf(format, args...)}
}

// unavailable is a 503: the request could not be served now and nothing
// changed, so a client may look and send it again.
func unavailable(format string, args ...any) *apiError {
	return &apiError{status: http.StatusServiceUnavailable, code: "ServiceUnavailable", description: fmt.Sprintf(format, args...)}
}

// withoutStructuralLinks is doc with the catalog-managed links removed.
func withoutStructuralLinks(doc map[string]any) map[string]any {
	out := shallowCopy(doc)
	links := keptLinks(doc["links"], structuralRels)
	if links == nil {
		links = []any{}
	}
	out["links"] = links
	return out
}

// checkItemPath fills an item's collection from the path and refuses one
// that names another collection or, for a replace, another id.
func checkItemPath(doc map[string]any, collectionID, itemID string) error {
	switch c, present := doc["collection"]; {
	case !present || c == nil:
		doc["collection"] = collectionID
	case c != collectionID:
		return badRequest("the item's collection %v differs from the collection in the path %q", c, collectionID)
	}
	if itemID != "" {
		if id, _ := doc["id"].(string); id != itemID {
			return badRequest("the item's id %q differs from the id in the path %q", id, itemID)
		}
	}
	return nil
}

// lookup finds collection cid and, when iid is not "", its item iid in
// st; err is the 404 to answer when one is missing.
func lookup(st *Store, cid, iid string) (*storedCollection, *storedItem, error) {
	c, ok := st.collections[cid]
	if !ok {
		return nil, nil, notFound("collection %q not found", cid)
	}
	if iid == "" {
		return c, nil, nil
	}
	it, ok := c.byID[iid]
	if !ok {
		return nil, nil, notFound("item %q not found in collection %q", iid, cid)
	}
	return c, it, nil
}

// change is what a transaction publishes and answers.
type change struct {
	next      *Store                   // the store after the change
	persist   func(d *dirWriter) error // writes it to the catalog's files
	status    int
	location  string     // the Location header of a created document
	mediaType string     // of the body
	body      func() any // renders the answer once the change is written; nil: no body
}

// transaction reads the request's document (when the method has one) and
// runs decide under writeMu on the current store. With a catalog
// directory, it first takes the catalog's lock and re-reads what another
// process changed (disk.go; cid and iid name the collection and item the
// write touches, "" when none exists yet), so decide sees the files as
// they are. decide returns the change or the error to answer; the change
// is written to disk (when the server has a directory), then published,
// then reported to OnApplied, then answered. A change that could not be
// written is not published.
func (s *Server) transaction(w http.ResponseWriter, r *http.Request, cid, iid string, decide func(st *Store, doc map[string]any) (*change, error)) {
	var doc map[string]any
	if r.Method != http.MethodDelete {
		var err error
		if doc, err = readDocument(r); err != nil {
			writeError(w, err)
			return
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	if s.closing.Load() {
		writeError(w, errShuttingDown)
		return
	}
	d := s.dirWriter()
	var lk *lockedCatalog
	if d != nil {
		var err error
		if lk, err = d.lockCatalog(r.Context(), &s.closing); err != nil {
			writeError(w, persistError(err))
			return
		}
		defer lk.unlock()
		if err := s.refresh(r.Context(), d, lk, d.affectedFiles(s.store(), cid, iid)); err != nil {
			writeError(w, err)
			return
		}
	}
	ch, err := decide(s.store(), doc)
	if err != nil {
		writeError(w, err)
		return
	}
	if d != nil {
		gen, err := lk.newGen()
		if err == nil {
			err = ch.persist(d)
		}
		if err != nil {
			writeError(w, persistError(err))
			return
		}
		s.written(d, gen)
	}
	s.state.Store(ch.next)
	if s.opts.Writes.OnApplied != nil {
		s.opts.Writes.OnApplied(r)
	}
	if ch.location != "" {
		w.Header().Set("Location", ch.location)
	}
	if ch.body == nil {
		w.WriteHeader(ch.status)
		return
	}
	writeJSON(w, ch.status, ch.mediaType, ch.body())
}

// itemAnswer and collectionAnswer render a written document as served.
func itemAnswer(base, assetDir string, it *storedItem) func() any {
	return func() any { return itemDoc(base, assetDir, it) }
}

func (s *Server) collectionAnswer(base string, c *storedCollection) func() any {
	return func() any { return s.collectionDoc(base, c) }
}

func (s *Server) handleCreateItem(w http.ResponseWriter, r *http.Request) {
	cid := r.PathValue("collectionId")
	s.transaction(w, r, cid, "", func(st *Store, doc map[string]any) (*change, error) {
		if err := checkItemPath(doc, cid, ""); err != nil {
			return nil, err
		}
		if err := stacdoc.CheckItem(doc); err != nil {
			return nil, invalid(err)
		}
		c, _, err := lookup(st, cid, "")
		if err != nil {
			return nil, err
		}
		id, _ := doc["id"].(string)
		if err := checkNewID("item", id); err != nil {
			return nil, err
		}
		if _, dup := c.byID[id]; dup {
			return nil, conflict("item %q already exists in collection %q; replace it with PUT", id, cid)
		}
		it, err := indexItem(withoutStructuralLinks(doc))
		if err != nil {
			return nil, badRequest("%v", err)
		}
		next, nc := st.editCollection(cid)
		nc.putItem(it)
		base := baseURL(r)
		dir := s.opts.AssetDir
		return &change{next: next, persist: func(d *dirWriter) error { return d.createItem(next, nc, it) },
			status: http.StatusCreated, location: base + "/collections/" + url.PathEscape(cid) + "/items/" + url.PathEscape(id),
			mediaType: mediaGeoJSON, body: itemAnswer(base, dir, it)}, nil
	})
}

// handleReplaceItem is PUT (a complete item) and PATCH (a JSON merge patch).
func (s *Server) handleReplaceItem(w http.ResponseWriter, r *http.Request) {
	cid, iid := r.PathValue("collectionId"), r.PathValue("itemId")
	s.transaction(w, r, cid, iid, func(st *Store, doc map[string]any) (*change, error) {
		_, old, err := lookup(st, cid, iid)
		if err != nil {
			return nil, err
		}
		if r.Method == http.MethodPatch {
			doc = stacdoc.MergePatch(old.doc, doc)
		}
		// An asset sent back as served (resolved) keeps its href as written.
		restoreAssetHrefs(doc, s.opts.AssetDir, old)
		if err := checkItemPath(doc, cid, iid); err != nil {
			return nil, err
		}
		if err := stacdoc.CheckItem(doc); err != nil {
			return nil, invalid(err)
		}
		it, err := indexItem(withoutStructuralLinks(doc))
		if err != nil {
			return nil, badRequest("%v", err)
		}
		it.file, it.linkedFrom = old.file, old.linkedFrom
		next, nc := st.editCollection(cid)
		nc.removeItem(iid)
		nc.putItem(it)
		return &change{next: next, persist: func(d *dirWriter) error { return d.replaceItem(next, nc, it) },
			status: http.StatusOK, mediaType: mediaGeoJSON, body: itemAnswer(baseURL(r), s.opts.AssetDir, it)}, nil
	})
}

func (s *Server) handleDeleteItem(w http.ResponseWriter, r *http.Request) {
	cid, iid := r.PathValue("collectionId"), r.PathValue("itemId")
	s.transaction(w, r, cid, iid, func(st *Store, _ map[string]any) (*change, error) {
		_, old, err := lookup(st, cid, iid)
		if err != nil {
			return nil, err
		}
		next, nc := st.editCollection(cid)
		nc.removeItem(iid)
		return &change{next: next, persist: func(d *dirWriter) error { return d.deleteItem(nc, old) }, status: http.StatusNoContent}, nil
	})
}

func (s *Server) handleCreateCollection(w http.ResponseWriter, r *http.Request) {
	s.transaction(w, r, "", "", func(st *Store, doc map[string]any) (*change, error) {
		if err := stacdoc.CheckCollection(doc); err != nil {
			return nil, invalid(err)
		}
		id, _ := doc["id"].(string)
		if err := checkNewID("collection", id); err != nil {
			return nil, err
		}
		if _, dup := st.collections[id]; dup {
			return nil, conflict("collection %q already exists; replace it with PUT /collections/%s", id, id)
		}
		nc := &storedCollection{id: id, doc: withoutStructuralLinks(doc), byID: map[string]*storedItem{}}
		next := st.withCollection(nc)
		base := baseURL(r)
		return &change{next: next, persist: func(d *dirWriter) error { return d.createCollection(next, nc) },
			status: http.StatusCreated, location: base + "/collections/" + url.PathEscape(id), mediaType: mediaJSON, body: s.collectionAnswer(base, nc)}, nil
	})
}

// handleReplaceCollection is PUT (a complete collection) and PATCH (a JSON
// merge patch). The collection's items stay.
func (s *Server) handleReplaceCollection(w http.ResponseWriter, r *http.Request) {
	cid := r.PathValue("collectionId")
	s.transaction(w, r, cid, "", func(st *Store, doc map[string]any) (*change, error) {
		old, _, err := lookup(st, cid, "")
		if err != nil {
			return nil, err
		}
		if r.Method == http.MethodPatch {
			doc = stacdoc.MergePatch(old.doc, doc)
		}
		if id, _ := doc["id"].(string); id != cid {
			return nil, badRequest("the collection's id %q differs from the id in the path %q", id, cid)
		}
		if err := stacdoc.CheckCollection(doc); err != nil {
			return nil, invalid(err)
		}
		next, nc := st.editCollection(cid)
		nc.doc = withoutStructuralLinks(doc)
		return &change{next: next, persist: func(d *dirWriter) error { return d.replaceCollection(nc) },
			status: http.StatusOK, mediaType: mediaJSON, body: s.collectionAnswer(baseURL(r), nc)}, nil
	})
}

// Copy-on-write: a change copies the collections map and the one
// collection it touches; items themselves are never modified in place.

// clone is a served (frozen) copy of s sharing every collection.
func (s *Store) clone() *Store {
	n := &Store{collections: make(map[string]*storedCollection, len(s.collections)+1), Notes: s.Notes, frozen: true}
	n.freezeOnce.Do(func() {}) // already in result order
	for id, c := range s.collections {
		n.collections[id] = c
	}
	return n
}

// withCollection is a copy of s with c added or replaced.
func (s *Store) withCollection(c *storedCollection) *Store {
	n := s.clone()
	n.collections[c.id] = c
	return n
}

// editCollection is a copy of s whose collection id is a copy of its own,
// ready to change.
func (s *Store) editCollection(id string) (*Store, *storedCollection) {
	old := s.collections[id]
	c := &storedCollection{id: old.id, doc: old.doc, file: old.file, items: slices.Clone(old.items), byID: make(map[string]*storedItem, len(old.byID)+1)}
	for k, v := range old.byID {
		c.byID[k] = v
	}
	return s.withCollection(c), c
}

// putItem inserts it in result order.
func (c *storedCollection) putItem(it *storedItem) {
	i := sort.Search(len(c.items), func(i int) bool { return itemBefore(it, c.items[i]) })
	c.items = slices.Insert(c.items, i, it)
	c.byID[it.id] = it
}

func (c *storedCollection) removeItem(id string) {
	delete(c.byID, id)
	c.items = slices.DeleteFunc(c.items, func(it *storedItem) bool { return it.id == id })
}

// fileOf is an item's file without its "#features[i]" part, and whether
// the item is a member of that ItemCollection file.
func fileOf(it *storedItem) (file string, inItemCollection bool) {
	file, _, found := strings.Cut(it.file, "#")
	return file, found
}
