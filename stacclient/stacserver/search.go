package stacserver

import (
	"net/http"
	"net/url"
	"strings"
)

// itemLinkRels are replaced by the server's own absolute links.
var itemLinkRels = []string{"self", "root", "parent", "collection"}

var itemsParams = []string{"collections", "bbox", "datetime", "limit", "token", "next", "cursor"}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && s.opts.DisablePOSTSearch {
		w.Header().Set("Allow", "GET")
		writeError(w, &apiError{status: 405, code: "MethodNotAllowed",
			description: "POST /search is disabled on this server; use GET /search"})
		return
	}
	q, err := s.decodeSearch(r, searchParamNames, "")
	if err != nil {
		writeError(w, err)
		return
	}
	if s.opts.RequireCollections && len(q.Collections) == 0 &&
		!strings.Contains(compactJSONFull(q.Filter), `"property":"collection"`) {
		writeError(w, &apiError{status: 422, code: "UnprocessableEntity", description: "collection is required"})
		return
	}
	s.serveItems(w, r, q, "/search")
}

func (s *Server) handleItems(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("collectionId")
	if _, ok := s.knownCollection(w, id); !ok {
		return
	}
	q, err := s.decodeSearch(r, itemsParams, id)
	if err != nil {
		writeError(w, err)
		return
	}
	s.serveItems(w, r, q, "/collections/"+id+"/items")
}

func (s *Server) handleItem(w http.ResponseWriter, r *http.Request) {
	cid, iid := r.PathValue("collectionId"), r.PathValue("itemId")
	c, ok := s.knownCollection(w, cid)
	if !ok {
		return
	}
	it, ok := c.byID[iid]
	if !ok {
		writeError(w, notFound("item %q not found in collection %q", iid, cid))
		return
	}
	writeJSON(w, http.StatusOK, mediaGeoJSON, itemDoc(baseURL(r), s.opts.AssetDir, it))
}

// decodeSearch parses a GET or POST search and resolves its page token: a
// request carrying only a token continues the query the token was issued
// for (pgstac's token-only next links); otherwise the token must belong to
// the query it comes with.
//
// pathCollection is the collection of a /collections/{id}/items request.
func (s *Server) decodeSearch(r *http.Request, allowed []string, pathCollection string) (*searchQuery, error) {
	var q *searchQuery
	var err error
	if r.Method == http.MethodPost {
		var body []byte
		if body, err = readBody(r); err != nil {
			return nil, err
		}
		q, err = parseSearchPOST(body, allowed)
	} else {
		q, err = parseSearchGET(r.URL.Query(), allowed)
	}
	if err != nil {
		return nil, err
	}
	if pathCollection != "" {
		// pystac-client repeats the collection as ?collections= on
		// /collections/{id}/items; accept that, but not another collection.
		for _, c := range q.Collections {
			if c != pathCollection {
				return nil, badParam("collections", strings.Join(q.Collections, ","), pathCollection+" (the collection in the path) or nothing",
					"names a collection other than the one in the path")
			}
		}
		q.Collections = []string{pathCollection}
	}
	hash := queryHash(q)
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.Token == "" {
		s.rememberQuery(hash, q)
		return q, nil
	}
	tok, err := decodeToken(q.TokenParam, q.Token)
	if err != nil {
		return nil, err
	}
	if tok.Query == hash {
		return q, nil
	}
	if stored, ok := s.queries[tok.Query]; ok && q.fingerprint() == "{}" && q.Limit == 0 {
		cont := *stored
		cont.Token, cont.TokenParam = q.Token, q.TokenParam
		return &cont, nil
	}
	return nil, badParam(q.TokenParam, q.Token, "the token from this query's next link", "the token belongs to a different query")
}

// serveItems answers one page of a search or items request.
func (s *Server) serveItems(w http.ResponseWriter, r *http.Request, q *searchQuery, path string) {
	var tok pageToken
	if q.Token != "" {
		tok, _ = decodeToken("token", q.Token) // validated by decodeSearch
	}
	requested := q.Limit
	if requested == 0 {
		requested = tok.Limit // a token-only next request keeps the page size
	}
	limit, err := s.clampLimit(requested)
	if err != nil {
		writeError(w, err)
		return
	}
	var matched []*storedItem
	ctx := r.Context()
	for i, it := range s.store().allItems(q.Collections) {
		// A filter (s_* on large geometries, say) can cost a lot per item;
		// served in memory, this runs on the tool call's goroutine budget,
		// so a call that has ended stops here instead of finishing the scan.
		if i%256 == 0 && ctx.Err() != nil {
			writeError(w, unavailable("the search was cancelled before it ended (the caller gave up or ran out of time)"))
			return
		}
		if q.matches(it) {
			matched = append(matched, it)
		}
	}
	sortItems(matched, q.SortBy)
	start, end := pageBounds(len(matched), tok.Offset, limit)
	base := baseURL(r)
	features := make([]any, 0, end-start)
	for _, it := range matched[start:end] {
		features = append(features, applyFields(itemDoc(base, s.opts.AssetDir, it), q.Fields))
	}
	self := link("self", base+r.URL.RequestURI(), mediaGeoJSON)
	if r.Method == http.MethodPost {
		self["method"] = http.MethodPost
	}
	links := []any{link("root", base+"/", mediaJSON), self}
	if next, ok := s.nextOffset(len(matched), tok.Offset, start, end); ok {
		nt := pageToken{Offset: next, Query: queryHash(q), Limit: limit}
		if s.opts.GrowingNextHref {
			nt.Gen = tok.Gen + 1
		}
		links = append(links, s.nextLink(base, path, r.Method, q, nt))
	}
	writeJSON(w, http.StatusOK, mediaGeoJSON, map[string]any{
		"type":           "FeatureCollection",
		"features":       features,
		"links":          links,
		"numberMatched":  len(matched),
		"numberReturned": len(features),
		"context":        map[string]any{"limit": limit, "matched": len(matched), "returned": len(features)},
	})
}

// nextLink words the rel=next link in the configured style.
func (s *Server) nextLink(base, path, method string, q *searchQuery, tok pageToken) map[string]any {
	style := s.opts.NextLinkStyle
	token := encodeToken(tok)
	pgstac := style == NextPOSTBodyToken || style == NextPOSTTokenOnly
	if pgstac {
		token = "next:" + token
	}
	postLink := method == http.MethodPost && path == "/search" && style != NextGETCursor && style != NextGETToken
	if !postLink {
		param := "next"
		switch {
		case pgstac:
			param = "token"
		case style == NextGETCursor:
			param = "cursor"
		}
		v := q.values()
		if path != "/search" {
			v.Del("collections") // implied by the path
		}
		v.Set(param, token) // Encode percent-encodes the "+" of sortby, as strict servers need
		return link("next", base+path+"?"+v.Encode(), mediaGeoJSON)
	}
	l := link("next", base+path, mediaGeoJSON)
	l["method"] = http.MethodPost
	switch style {
	case NextPOSTBodyToken:
		body := q.body()
		body["token"] = token
		l["body"] = body
	case NextPOSTTokenOnly:
		l["body"] = map[string]any{"token": token}
	case NextPOSTMergeTrue:
		l["body"] = map[string]any{"next": token}
		l["merge"] = true
	default: // NextDefault, NextPOSTMergeFalse
		body := q.body()
		body["next"] = token
		l["body"] = body
		l["merge"] = false
	}
	return l
}

// itemDoc is the stored item with this server's absolute links, and its
// relative asset hrefs resolved (assetDir: Options.AssetDir).
func itemDoc(base, assetDir string, it *storedItem) map[string]any {
	doc := shallowCopy(it.doc)
	coll := base + "/collections/" + it.collection
	links := []any{
		link("self", coll+"/items/"+url.PathEscape(it.id), mediaGeoJSON),
		link("parent", coll, mediaJSON),
		link("collection", coll, mediaJSON),
		link("root", base+"/", mediaJSON),
	}
	doc["links"] = append(links, keptLinks(it.doc["links"], itemLinkRels)...)
	withAssetHrefs(doc, base, assetDir, it)
	return doc
}

// rememberQuery keeps q for token-only continuation; only that next-link
// style needs it. Callers hold s.mu.
func (s *Server) rememberQuery(hash string, q *searchQuery) {
	if s.opts.NextLinkStyle != NextPOSTTokenOnly {
		return
	}
	if _, known := s.queries[hash]; !known {
		s.queryOrder = append(s.queryOrder, hash)
		if len(s.queryOrder) > maxRememberedQueries {
			delete(s.queries, s.queryOrder[0])
			s.queryOrder = s.queryOrder[1:]
		}
	}
	s.queries[hash] = q
}
