package stacserver

import "net/http"

const relQueryables = "http://www.opengis.net/def/rel/ogc/1.0/queryables"

func (s *Server) handleLanding(w http.ResponseWriter, r *http.Request) {
	base := baseURL(r)
	id, title, desc := s.opts.ID, s.opts.Title, s.opts.Description
	if id == "" {
		id = "stacserver"
	}
	if title == "" {
		title = "In-process STAC API"
	}
	if desc == "" {
		desc = "A STAC API over in-memory collections and items, for tests and demos."
	}
	links := []any{
		link("self", base+"/", mediaJSON),
		link("root", base+"/", mediaJSON),
		link("conformance", base+"/conformance", mediaJSON),
		link("data", base+"/collections", mediaJSON),
	}
	searchGET := link("search", base+"/search", mediaGeoJSON)
	searchGET["method"] = "GET"
	links = append(links, searchGET)
	if !s.opts.DisablePOSTSearch {
		searchPOST := link("search", base+"/search", mediaGeoJSON)
		searchPOST["method"] = "POST"
		links = append(links, searchPOST)
	}
	if !s.opts.DisableQueryables {
		links = append(links, link(relQueryables, base+"/queryables", mediaSchemaJSON))
	}
	if !s.opts.DisableAggregation {
		aggGET := link("aggregate", base+"/aggregate", mediaJSON)
		aggGET["method"] = "GET"
		aggPOST := link("aggregate", base+"/aggregate", mediaJSON)
		aggPOST["method"] = "POST"
		links = append(links, aggGET, aggPOST, link("aggregations", base+"/aggregations", mediaJSON))
	}
	st := s.store()
	for _, cid := range st.collectionIDs() {
		l := link("child", base+"/collections/"+cid, mediaJSON)
		if t, ok := st.collections[cid].doc["title"].(string); ok {
			l["title"] = t
		}
		links = append(links, l)
	}
	writeJSON(w, http.StatusOK, mediaJSON, map[string]any{
		"type":         "Catalog",
		"stac_version": "1.0.0",
		"id":           id,
		"title":        title,
		"description":  desc,
		"conformsTo":   s.conformance(),
		"links":        links,
	})
}

func (s *Server) handleConformance(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, mediaJSON, map[string]any{"conformsTo": s.conformance()})
}
