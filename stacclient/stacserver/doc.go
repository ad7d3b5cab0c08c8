// Package stacserver is an in-process STAC API (an http.Handler) over
// collections and items held in memory. It has two users:
//
//   - the server itself: the catalog registry (tools/internal/catalog)
//     serves the embedded demo catalog and an operator's local static
//     catalog (a catalog.json on disk) through it, without a socket; for a
//     writable local catalog the Transactions extension writes every change
//     back to the catalog's files (WriteOptions; persist.go writes each file
//     atomically, disk.go makes several processes writing one directory
//     safe), and asset files beside the catalog can be served
//     (LoadOptions.ServeAssetFiles, Options.AssetDir);
//   - tests, demos and benchmarks: real catalogs differ in ways a client
//     must survive, so the differences are switchable through Options:
//     next-link styles (pgstac, stac-server, Astraea, CMR-STAC), limit
//     clamping or rejection, required collections, disabled POST search,
//     advertised conformance classes, missing endpoints and pagination
//     faults (cycles, duplicates, trailing empty pages, growing hrefs).
//
// Loading bounds what an untrusted catalog directory may cost (LoadOptions:
// files, bytes, depth), and Violations (violations.go) says which returned
// items certainly break a search's conditions, for the tools' check that a
// catalog did not ignore a filter.
//
// Use:
//
//	store, err := stacserver.LoadFS(demo.FS, demo.RootFile) // or NewStore + AddCollection/AddItem
//	srv := httptest.NewServer(stacserver.New(store, stacserver.Options{}))
//
// Endpoints: / (landing), /conformance, /collections (paged, collection
// search q/bbox/datetime when advertised), /collections/{id},
// /collections/{id}/items[/{itemId}] (POST, PUT, PATCH and DELETE when
// writable), /search (GET and POST: collections,
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
