package stacserver

import (
	"net/http"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/freetext"
)

// collectionLinkRels are replaced by the server's own absolute links; other
// links (license, about, …) are served as stored.
var collectionLinkRels = []string{"self", "root", "parent", "child", "item", "items", "collection", relQueryables,
	"aggregate", "aggregations"}

var collectionsParams = []string{"q", "bbox", "datetime", "limit", "token", "next", "cursor"}

func (s *Server) handleCollections(w http.ResponseWriter, r *http.Request) {
	base := baseURL(r)
	values := r.URL.Query()
	for name := range values {
		if !contains(collectionsParams, name) {
			writeError(w, unknownParam(name, collectionsParams))
			return
		}
	}
	limit, err := s.pageLimit(values.Get("limit"))
	if err != nil {
		writeError(w, err)
		return
	}
	// Collection search filters apply only when the class is advertised;
	// otherwise they are ignored, as Earth Search does.
	filter := func(*storedCollection) bool { return true }
	var q freetext.Query
	if s.advertises("/collection-search") {
		if filter, err = collectionFilter(values); err != nil {
			writeError(w, err)
			return
		}
		q = freetext.Parse(values.Get("q"))
	}
	var matched []*storedCollection
	st := s.store()
	for _, id := range st.collectionIDs() {
		if c := st.collections[id]; filter(c) {
			matched = append(matched, c)
		}
	}
	matched = rankCollections(q, matched)
	offset, err := offsetFromToken(values, "")
	if err != nil {
		writeError(w, err)
		return
	}
	start, end := pageBounds(len(matched), offset, limit)
	out := make([]any, 0, end-start)
	for _, c := range matched[start:end] {
		out = append(out, s.collectionDoc(base, c))
	}
	links := []any{link("self", base+r.URL.RequestURI(), mediaJSON), link("root", base+"/", mediaJSON)}
	if end < len(matched) {
		next := cloneValues(values)
		for _, p := range []string{"token", "next", "cursor"} {
			next.Del(p)
		}
		next.Set("token", encodeToken(pageToken{Offset: end}))
		links = append(links, link("next", base+"/collections?"+next.Encode(), mediaJSON))
	}
	writeJSON(w, http.StatusOK, mediaJSON, map[string]any{
		"collections":    out,
		"links":          links,
		"numberMatched":  len(matched),
		"numberReturned": len(out),
	})
}

// knownCollection looks up a collection named in a request path and, when
// the store has none by that id, answers 404 for the caller (ok false).
func (s *Server) knownCollection(w http.ResponseWriter, id string) (c *storedCollection, ok bool) {
	c, ok = s.store().collections[id]
	if !ok {
		writeError(w, notFound("collection %q not found", id))
	}
	return c, ok
}

func (s *Server) handleCollection(w http.ResponseWriter, r *http.Request) {
	c, ok := s.knownCollection(w, r.PathValue("collectionId"))
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, mediaJSON, s.collectionDoc(baseURL(r), c))
}

// collectionDoc is the stored collection with this server's links.
func (s *Server) collectionDoc(base string, c *storedCollection) map[string]any {
	doc := shallowCopy(c.doc)
	self := base + "/collections/" + c.id
	links := []any{
		link("self", self, mediaJSON),
		link("root", base+"/", mediaJSON),
		link("parent", base+"/", mediaJSON),
	}
	if !s.opts.DisableFeatures {
		links = append(links, link("items", self+"/items", mediaGeoJSON))
	}
	if !s.opts.DisableQueryables {
		links = append(links, link(relQueryables, self+"/queryables", mediaSchemaJSON))
	}
	if !s.opts.DisableAggregation {
		links = append(links, link("aggregate", self+"/aggregate", mediaJSON), link("aggregations", self+"/aggregations", mediaJSON))
	}
	doc["links"] = append(links, keptLinks(c.doc["links"], collectionLinkRels)...)
	return doc
}

// keptLinks returns the stored links whose rel is not replaced by the server.
func keptLinks(v any, replaced []string) []any {
	stored, _ := v.([]any)
	var out []any
	for _, l := range stored {
		m, _ := l.(map[string]any)
		if rel, _ := m["rel"].(string); !contains(replaced, rel) {
			out = append(out, l)
		}
	}
	return out
}

// collectionFilter compiles the collection-search parameters bbox and
// datetime (against the first extent entry); q is rankCollections'.
func collectionFilter(values map[string][]string) (func(*storedCollection) bool, error) {
	get := func(k string) string {
		if v := values[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var conds []func(*storedCollection) bool
	if b := get("bbox"); b != "" {
		box, err := numberList(splitList(b))
		if err == nil {
			err = validateBBox(box)
		}
		if err != nil {
			return nil, badParam("bbox", b, bboxAccepted, err.Error())
		}
		query := shapesFromBBox(box)
		conds = append(conds, func(c *storedCollection) bool {
			ext := collectionBBox(c.doc)
			if ext == nil {
				return false
			}
			for _, e := range shapesFromBBox(ext) {
				for _, q := range query {
					if e.intersects(q) {
						return true
					}
				}
			}
			return false
		})
	}
	if d := get("datetime"); d != "" {
		r, err := parseDatetimeParam(d)
		if err != nil {
			return nil, err
		}
		conds = append(conds, func(c *storedCollection) bool {
			start, end := collectionInterval(c.doc)
			return r.overlaps(start, end)
		})
	}
	return allOf(conds), nil
}

// rankCollections keeps the collections q matches, best first (free text
// over the id, title, keywords and description, by words, ranked by BM25F:
// see package freetext), among those the other parameters kept; the zero
// Query keeps them all in order.
func rankCollections(q freetext.Query, cs []*storedCollection) []*storedCollection {
	if q.Empty() {
		return cs
	}
	docs := make([]freetext.Doc, len(cs))
	for i, c := range cs {
		str := func(k string) string { s, _ := c.doc[k].(string); return s }
		docs[i] = freetext.Doc{ID: str("id"), Title: str("title"), Description: str("description")}
		kw, _ := c.doc["keywords"].([]any)
		for _, k := range kw {
			if s, ok := k.(string); ok {
				docs[i].Keywords = append(docs[i].Keywords, s)
			}
		}
	}
	var out []*storedCollection
	for _, i := range q.Rank(docs) {
		out = append(out, cs[i])
	}
	return out
}

// collectionBBox is extent.spatial.bbox[0], or nil.
func collectionBBox(doc map[string]any) []float64 {
	ext, _ := doc["extent"].(map[string]any)
	sp, _ := ext["spatial"].(map[string]any)
	boxes, _ := sp["bbox"].([]any)
	if len(boxes) == 0 {
		return nil
	}
	b, err := numberList(boxes[0])
	if err != nil || validateBBox(b) != nil {
		return nil
	}
	return b
}

// collectionInterval is extent.temporal.interval[0]; open or missing ends
// are unbounded.
func collectionInterval(doc map[string]any) (start, end time.Time) {
	ext, _ := doc["extent"].(map[string]any)
	tmp, _ := ext["temporal"].(map[string]any)
	ivs, _ := tmp["interval"].([]any)
	start, end = time.Unix(-1<<40, 0), time.Unix(1<<40, 0)
	if len(ivs) == 0 {
		return start, end
	}
	iv, _ := ivs[0].([]any)
	if len(iv) == 2 {
		if t, ok := asTime(iv[0]); ok {
			start = t
		}
		if t, ok := asTime(iv[1]); ok {
			end = t
		}
	}
	return start, end
}
