package tools

import (
	"context"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Catalog is a resolved catalog: what a catalog_url argument or --catalog
// names, with a client bound to the reliability layer's HTTP client.
type Catalog struct {
	Ref    string // as given: URL, preset name, "demo" or a path
	Name   string // preset name, "demo", "local" or "" for a plain URL
	URL    string // the STAC API root URL actually used
	Host   string // URL's host, the reliability layer's per-host key
	Client *stacclient.Client
}

// Catalogs resolves catalog references and caches one client per URL.
// TODO(tools-core): presets, demo (in-process stacserver on loopback), local catalog.json.
type Catalogs struct{}

// Resolve turns a reference ("" = the configured default) into a Catalog.
func (c *Catalogs) Resolve(ctx context.Context, ref string) (*Catalog, error) {
	panic("unimplemented")
}
