package tools

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/tools/internal/mapview"
)

// The map view is an MCP App: a ui:// resource that hosts with
// the io.modelcontextprotocol/ui extension render next to the results of
// the tools linking it in their _meta. Hosts without the extension ignore
// the link and get the same text and PNG as before; the link is not in a
// tool's description or schema, so it costs the model's tool list nothing
// (PromptBytes counts neither _meta).

// MapViewURI is the map view's resource URI.
const MapViewURI = mapview.URI

// mapViewMeta is the _meta of a tool whose results the map view shows:
// _meta.ui.resourceUri, and the flat "ui/resourceUri" key that hosts of
// the extension's drafts read (the SDK's registerAppTool sets both).
func mapViewMeta() mcp.Meta {
	return mcp.Meta{"ui": map[string]any{"resourceUri": mapview.URI}, "ui/resourceUri": mapview.URI}
}

// registerMapView adds the view's resource. Its content declares no CSP
// domains: the view loads nothing from the network (its basemap is
// embedded), so hosts apply the extension's restrictive default.
func registerMapView(s *mcp.Server) {
	meta := mcp.Meta{"ui": map[string]any{"prefersBorder": true}}
	s.AddResource(&mcp.Resource{
		URI: mapview.URI, Name: "map_view", Title: "Interactive map of item footprints", MIMEType: mapview.MIMEType,
		Description: "MCP App (io.modelcontextprotocol/ui) showing the footprints of map_items, search_items and check_coverage " +
			"results on an offline basemap: click an item for its properties and preview, page on, draw an area to search it.",
		Meta: meta,
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
			URI: mapview.URI, MIMEType: mapview.MIMEType, Text: mapview.HTML, Meta: meta,
		}}}, nil
	})
}
