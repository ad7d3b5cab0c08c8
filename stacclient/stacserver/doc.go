// Package stacserver is an in-process STAC API (an http.Handler) over
// in-memory collections and items, for tests, demos and benchmarks. Real
// catalogs differ in ways a client must survive, so the differences are
// switchable through Options: next-link styles (pgstac, stac-server,
// Astraea, CMR-STAC), limit clamping or rejection, required collections,
// disabled POST search, advertised conformance classes, missing endpoints
// and pagination faults (cycles, duplicates, trailing empty pages, growing
// hrefs).
//
// Use:
//
//	store, err := stacserver.LoadFS(demo.FS, demo.RootFile) // or NewStore + AddCollection/AddItem
//	srv := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
//
// Endpoints: / (landing), /conformance, /collections (paged, collection
// search q/bbox/datetime when advertised), /collections/{id},
// /collections/{id}/items[/{itemId}], /search (GET and POST: collections,
// ids, bbox, intersects, datetime, query, CQL2 filter, sortby, fields,
// limit, token), /queryables and /collections/{id}/queryables (derived from
// the data), /aggregate and /aggregations (also per collection).
//
// Documents are stored as generic JSON with numbers kept as json.Number,
// so every field, known or not, is served back unchanged; only links with
// the rels the server owns (self, root, parent, collection, items, …) are
// replaced by absolute links built from the request's Host.
//
// Errors are JSON {"code": ..., "description": ...}; a bad parameter is a
// 400 whose description names the parameter, what was received and what is
// accepted. Filters are CQL2 text or JSON, evaluated by package
// stacclient/cql2 (every conformance class of OGC 21-065; see cql2.go).
package stacserver
