package pixel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cog"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// Env is what the engine reads with; the adapters build it per call.
type Env struct {
	// Fetcher sends a remote asset's range requests (the catalog's
	// client, through the reliability layer).
	Fetcher cog.RangeFetcher
	// Href resolves an asset's href against its item (and signs it where
	// the catalog needs that); nil uses the href as written.
	Href func(item *stacclient.Item, key string) string
	// LocalCatalog is a local catalog's catalog.json path: absolute-path
	// hrefs under its directory are read from disk. "" for a remote
	// catalog, whose hrefs are never read from disk.
	LocalCatalog string
	// Source, when set, gives the fetcher and local catalog path of one
	// item's assets, in place of Fetcher and LocalCatalog: a read over
	// several catalogs sends each item's range requests with its own
	// catalog's client, and reads from disk only a local catalog's own
	// files.
	Source func(item *stacclient.Item) (cog.RangeFetcher, string)
	// Cache keeps headers and tiles across calls (nil: none).
	Cache *cog.Cache
	// Decode is the process's decoded-pixel budget (units of 4 bytes);
	// CPU its slots for CPU-heavy steps. Nil bounds nothing.
	Decode, CPU *workbudget.Budget
	// ReadPixels is the pixel budget of one band's read (0:
	// DefaultReadPixels).
	ReadPixels int
	// ReadRequests bounds the range requests of one Read, its header
	// reads included (0: DefaultReadRequests).
	ReadRequests int
}

// DefaultReadPixels is the pixel budget of one band's read: the finest
// level whose window over the area holds at most this many pixels is
// read (a 10 km × 10 km area at 10 m is 1000 × 1000 px).
const DefaultReadPixels = 1 << 20

// DefaultReadRequests bounds one Read's range requests: a read of five
// Sentinel-2 bands and a mask over a 10 km area sends 10 to 30; a file cut
// in tiny blocks or scattered ones would otherwise cost thousands.
const DefaultReadRequests = 256

func (e *Env) readRequests() int {
	if e.ReadRequests > 0 {
		return e.ReadRequests
	}
	return DefaultReadRequests
}

func (e *Env) readPixels() int {
	if e.ReadPixels > 0 {
		return e.ReadPixels
	}
	return DefaultReadPixels
}

// asset is one asset's file, opened once per read.
type asset struct {
	key   string
	file  *cog.File
	info  cog.Info
	grid  geo.Grid
	local *os.File // a local catalog's file, closed when the read ends
}

func (a *asset) close() {
	if a != nil && a.local != nil {
		_ = a.local.Close()
	}
}

// open opens an asset's GeoTIFF: from disk for a local catalog's file
// under its directory, else with range requests through the fetcher.
func (e *Env) open(ctx context.Context, item *stacclient.Item, key string, requests *cog.RequestBudget) (*asset, error) {
	fail := func(kind ErrorKind, detail string, err error) error {
		return &Error{Kind: kind, Item: item.ID, Asset: key, Detail: detail, Err: err}
	}
	a, ok := item.Assets[key]
	if !ok {
		return nil, fail(ErrNoAsset, "", nil)
	}
	if !IsGeoTIFF(a) {
		return nil, fail(ErrNotGeoTIFF, a.Type, nil)
	}
	href := a.Href
	if e.Href != nil {
		href = e.Href(item, key)
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(href)), "s3://") {
		return nil, fail(ErrS3Href, href, nil)
	}
	name := a.Href // unsigned: names the file in the cache and in errors
	fetcher, root := e.Fetcher, e.LocalCatalog
	if e.Source != nil {
		fetcher, root = e.Source(item)
	}
	src := cog.HTTPSource(fetcher, href, name)
	var local *os.File
	if path, ok, err := localPath(root, name); err != nil {
		return nil, fail(ErrLocalFile, err.Error(), err)
	} else if ok {
		if local, err = os.Open(path); err != nil {
			return nil, fail(ErrLocalFile, "it could not be opened", err)
		}
		fi, err := local.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			_ = local.Close()
			return nil, fail(ErrLocalFile, "it is not a regular file", err)
		}
		// The cache key changes when the file does.
		src = cog.ReaderAtSource(fmt.Sprintf("%s@%d.%d", path, fi.ModTime().UnixNano(), fi.Size()), local, fi.Size())
	} else if fetcher == nil {
		return nil, fail(ErrOpen, "no way to read remote files was given", nil)
	}
	f, err := cog.Open(ctx, src, cog.Options{Cache: e.Cache, Requests: requests})
	if err != nil {
		if local != nil {
			_ = local.Close()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fail(ErrOpen, "", err)
	}
	info := f.Info()
	out := &asset{key: key, file: f, info: info, local: local}
	if info.EPSG == 0 || !info.Georeferenced {
		out.close()
		return nil, fail(ErrNoCRS, "", nil)
	}
	crs, err := geo.FromEPSG(info.EPSG)
	if err != nil {
		out.close()
		return nil, fail(ErrNoCRS, err.Error(), err)
	}
	out.grid = geo.Grid{CRS: crs, GeoTransform: info.GeoTransform, Width: info.Width, Height: info.Height}
	if err := out.grid.Check(); err != nil {
		out.close()
		return nil, fail(ErrBadGrid, err.Error(), err)
	}
	return out, nil
}

// localPath is the file an asset href names when the catalog is a local
// catalog.json (its hrefs are served as absolute paths on this machine):
// ok only for a path inside the catalog's directory, after symbolic
// links, so that an item cannot name any other file of the machine. A
// remote catalog's hrefs are never read from disk. root is the local
// catalog's catalog.json ("" for a remote catalog).
func localPath(root, href string) (string, bool, error) {
	if root == "" || !filepath.IsAbs(root) || strings.Contains(root, "://") {
		return "", false, nil
	}
	path := strings.TrimPrefix(href, "file://")
	if !filepath.IsAbs(path) {
		return "", false, nil // an http(s) href: read over HTTP
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(root))
	if err != nil {
		return "", false, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false, fmt.Errorf("the file %s cannot be read: %w", path, err)
	}
	if rel, err := filepath.Rel(dir, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false, fmt.Errorf("the file %s is outside the local catalog's directory %s, and only files under it are read", path, dir)
	}
	return real, true, nil
}
