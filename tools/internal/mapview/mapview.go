// Package mapview holds the map view of stac-mcp: an MCP App (the
// io.modelcontextprotocol/ui extension, SEP-1865) that hosts such as Claude
// Desktop render next to the results of map_items, search_items and
// check_coverage. view.html is one self-contained HTML file (scripts,
// styles and an offline Natural Earth basemap inlined) built by
// web/build.mjs from the sources in web/src and the npm packages pinned by
// web/package-lock.json; .ci/run rebuilds it and fails when it differs.
package mapview

import _ "embed" // view.html

// HTML is the view, as served by resources/read.
//
//go:embed view.html
var HTML string

const (
	// URI is the view's resource; tools link it with _meta.ui.resourceUri.
	URI = "ui://stac-mcp/map.html"
	// MIMEType is the MCP Apps HTML profile.
	MIMEType = "text/html;profile=mcp-app"
	// Extension is the MCP Apps extension's identifier in capabilities.
	Extension = "io.modelcontextprotocol/ui"
)
