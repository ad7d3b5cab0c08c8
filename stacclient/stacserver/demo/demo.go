// Package demo embeds a small static STAC catalog of real Items and Collections, so stac-mcp can
// be tried, tested and benchmarked without a network. The catalog was assembled once from recorded
// public STAC API answers and the STAC specification examples; README.md lists every source and
// licence and what was changed (links only, with the exceptions it names).
//
// Links inside the catalog are relative, as in any static STAC catalog: a reader resolves them
// against the path of the file that holds them.
package demo

import (
	"embed"
	"io/fs"
)

// RootFile is the path, inside FS, of the catalog's root Catalog document.
const RootFile = "catalog.json"

//go:embed all:catalog
var embedded embed.FS

// FS holds the demo catalog, rooted so that RootFile is at its top level: collections live at
// "<collection-id>/collection.json" and their Items at "<collection-id>/items/<item-id>.json".
var FS fs.FS = mustSub(embedded, "catalog")

func mustSub(fsys fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(fsys, dir)
	if err != nil {
		// fs.Sub only fails for an invalid path literal, which would be a build-time mistake.
		panic("demo: " + err.Error())
	}
	return sub
}
