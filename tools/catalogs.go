package tools

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

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
	// Notes says what loading a static catalog ("demo" or a local
	// catalog.json) skipped and why; empty for remote catalogs.
	Notes []string
}

// Preset is a well-known public STAC API a model or a person can name
// instead of typing its URL.
type Preset struct {
	Name string
	URL  string
	Why  string // one line: what the catalog holds
}

// DefaultCatalog is the reference used when neither --catalog,
// STAC_MCP_CATALOG_URL nor a tool's catalog_url names one.
const DefaultCatalog = "earth-search"

// DemoCatalog names the embedded demo catalog, served in-process.
const DemoCatalog = "demo"

// presets are public, unauthenticated STAC APIs that answer item search.
// Beyond the three the Python stac-mcp users know (earth-search,
// planetary-computer, usgs-landsat), cdse and digital-earth-africa are the
// two other large open catalogs that implement STAC API item search without
// a key; both are also in the pystac-client test recordings we replay.
var presets = []Preset{
	{Name: "earth-search", URL: "https://earth-search.aws.element84.com/v1", Why: "Element 84 Earth Search: Sentinel-1/2, Landsat C2, Copernicus DEM, NAIP on AWS"},
	{Name: "planetary-computer", URL: "https://planetarycomputer.microsoft.com/api/stac/v1", Why: "Microsoft Planetary Computer: 100+ collections; asset hrefs need signing to download"},
	{Name: "usgs-landsat", URL: "https://landsatlook.usgs.gov/stac-server", Why: "USGS LandsatLook: the full Landsat archive, Collection 2"},
	{Name: "cdse", URL: "https://stac.dataspace.copernicus.eu/v1", Why: "Copernicus Data Space Ecosystem: the ESA Sentinel archive"},
	{Name: "digital-earth-africa", URL: "https://explorer.digitalearth.africa/stac", Why: "Digital Earth Africa: analysis-ready data over Africa"},
}

// Presets lists the preset catalogs, in the order --help shows them.
func Presets() []Preset { return append([]Preset(nil), presets...) }

func presetURL(name string) (string, bool) {
	for _, p := range presets {
		if p.Name == name {
			return p.URL, true
		}
	}
	return "", false
}

// CatalogsOptions configure how references become clients.
type CatalogsOptions struct {
	// Default is the reference used for "" (a preset, "demo", a URL or a
	// path); empty means DefaultCatalog.
	Default string
	// HTTPClient makes every request (the reliability layer's client).
	HTTPClient *http.Client
	// Headers go with every request to the catalog's own origin.
	Headers http.Header
	// UserAgent for upstream requests; empty means stacclient's default.
	UserAgent string
	// Named are extra catalogs by name (STAC_MCP_CATALOGS), read with
	// ParseNamedCatalogs so they cannot shadow a preset.
	Named []Preset
	// WrapDemo, when set, wraps the demo catalog's in-process handler. cmd
	// uses it for STAC_MCP_DEMO_FAULT_RATE (server-side fault injection on
	// real loopback sockets), so this package never imports faultinject.
	WrapDemo func(http.Handler) http.Handler
}

// Catalogs resolves catalog references and caches one client per URL. The
// demo catalog and local static catalogs are served by an in-process STAC
// API on a loopback listener, started on first use and stopped by Close.
type Catalogs struct {
	opts CatalogsOptions

	mu      sync.Mutex
	byURL   map[string]*Catalog // remote catalogs, keyed by URL
	inProc  map[string]*Catalog // "demo" and local catalogs, keyed by "demo" or absolute path
	servers []*inProcessServer  // started in-process servers, stopped by Close
	closed  bool
}

// NewCatalogs returns a resolver; call Close when done to stop in-process
// servers.
func NewCatalogs(opts CatalogsOptions) *Catalogs {
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	return &Catalogs{
		opts:   opts,
		byURL:  map[string]*Catalog{},
		inProc: map[string]*Catalog{},
	}
}

// Default is the reference "" resolves to.
func (c *Catalogs) Default() string {
	if c.opts.Default == "" {
		return DefaultCatalog
	}
	return c.opts.Default
}

// Resolve turns a reference ("" = the configured default) into a Catalog.
func (c *Catalogs) Resolve(ctx context.Context, ref string) (*Catalog, error) {
	r, err := c.classify(ref)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("catalogs: already closed (the server is shutting down)")
	}
	switch r.kind {
	case refRemote:
		return c.remoteLocked(r.ref, r.name, r.url)
	case refDemo:
		return c.inProcessLocked(ctx, r.ref, DemoCatalog, DemoCatalog, loadDemoStore)
	default:
		return c.inProcessLocked(ctx, r.ref, "local", r.path, func() (*staticStore, error) {
			return loadDirStore(filepath.Dir(r.path), filepath.Base(r.path))
		})
	}
}

// Check reports whether ref ("" = the default) is usable without loading
// or contacting anything, so a bad --catalog refuses to start while the
// demo catalog still starts lazily.
func (c *Catalogs) Check(ref string) error {
	_, err := c.classify(ref)
	return err
}

type refKind int

const (
	refRemote refKind = iota
	refDemo
	refLocal
)

// classifiedRef is what a reference names.
type classifiedRef struct {
	kind refKind
	ref  string // as given (the default when "")
	name string // preset name for remote presets
	url  string // remote: the URL
	path string // local: absolute path of the root catalog file
}

func (c *Catalogs) classify(ref string) (classifiedRef, error) {
	given := strings.TrimSpace(ref)
	if given == "" {
		given = c.Default()
	}
	lower := strings.ToLower(given)
	if u, ok := presetURL(lower); ok {
		return classifiedRef{kind: refRemote, ref: given, name: lower, url: u}, nil
	}
	if u, ok := c.namedURL(lower); ok {
		return classifiedRef{kind: refRemote, ref: given, name: lower, url: u}, nil
	}
	if lower == DemoCatalog {
		return classifiedRef{kind: refDemo, ref: given}, nil
	}
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(given)
		if err != nil {
			return classifiedRef{}, refError(given, fmt.Sprintf("it is not a valid URL with a host (%v)", err))
		}
		if u.Host == "" {
			return classifiedRef{}, refError(given, "it is not a valid URL with a host (the host is empty)")
		}
		return classifiedRef{kind: refRemote, ref: given, url: given}, nil
	}
	path := given
	if strings.HasPrefix(lower, "file://") {
		path = given[len("file://"):]
	}
	info, err := os.Stat(path)
	if err != nil {
		why := "it is not a preset name, \"demo\", an http(s) URL, or an existing path (" + statReason(err) + ")"
		if len(c.opts.Named) > 0 {
			why += "; configured names (STAC_MCP_CATALOGS): " + strings.Join(namedNames(c.opts.Named), ", ")
		}
		return classifiedRef{}, refError(given, why)
	}
	if info.IsDir() {
		path = filepath.Join(path, "catalog.json")
		if _, err := os.Stat(path); err != nil {
			return classifiedRef{}, refError(given, "it is a directory without a catalog.json; give the path of the root catalog file")
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return classifiedRef{}, fmt.Errorf("catalog %q: %w", given, err)
	}
	return classifiedRef{kind: refLocal, ref: given, path: abs}, nil
}

// remoteLocked returns the cached client for a remote STAC API URL.
func (c *Catalogs) remoteLocked(ref, name, rawURL string) (*Catalog, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, refError(ref, fmt.Sprintf("it is not a valid URL (%v)", err))
	}
	key := strings.TrimRight(u.String(), "/")
	if cat, ok := c.byURL[key]; ok {
		return withRef(cat, ref), nil
	}
	client, err := stacclient.New(key, c.clientOptions())
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", ref, err)
	}
	cat := &Catalog{Ref: ref, Name: name, URL: key, Host: u.Host, Client: client}
	c.byURL[key] = cat
	return cat, nil
}

// inProcessLocked returns the in-process server for key, loading and
// starting it on first use.
func (c *Catalogs) inProcessLocked(ctx context.Context, ref, name, key string, load func() (*staticStore, error)) (*Catalog, error) {
	if cat, ok := c.inProc[key]; ok {
		return withRef(cat, ref), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	store, err := load()
	if err != nil {
		// Not cached: the next call reloads, so a fixed file works
		// without restarting the server.
		return nil, fmt.Errorf("catalog %q: loading the static catalog failed: %w", ref, err)
	}
	handler := store.handler
	if key == DemoCatalog && c.opts.WrapDemo != nil {
		handler = c.opts.WrapDemo(handler)
	}
	srv, err := startInProcessServer(handler)
	if err != nil {
		return nil, fmt.Errorf("catalog %q: starting the in-process STAC API: %w", ref, err)
	}
	c.servers = append(c.servers, srv)
	client, err := stacclient.New(srv.url, c.clientOptions())
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", ref, err)
	}
	cat := &Catalog{Ref: ref, Name: name, URL: srv.url, Host: srv.host, Client: client, Notes: store.notes}
	c.inProc[key] = cat
	return cat, nil
}

func (c *Catalogs) clientOptions() stacclient.Options {
	return stacclient.Options{HTTPClient: c.opts.HTTPClient, Headers: c.opts.Headers, UserAgent: c.opts.UserAgent}
}

// Close stops the in-process servers. Resolve fails afterwards.
func (c *Catalogs) Close() error {
	c.mu.Lock()
	servers := c.servers
	c.servers, c.closed = nil, true
	c.mu.Unlock()
	var errs []error
	for _, s := range servers {
		errs = append(errs, s.close())
	}
	// Idle keep-alive connections to the stopped servers would otherwise
	// linger as goroutines of the shared transport.
	c.opts.HTTPClient.CloseIdleConnections()
	return errors.Join(errs...)
}

// withRef returns cat as named by ref (the cache is shared by every
// spelling of the same catalog).
func withRef(cat *Catalog, ref string) *Catalog {
	if cat.Ref == ref {
		return cat
	}
	cp := *cat
	cp.Ref = ref
	return &cp
}

// refError explains an unusable catalog reference and lists what works.
func refError(ref, why string) error {
	names := make([]string, 0, len(presets))
	for _, p := range presets {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return fmt.Errorf("catalog_url %q: %s. Accepted: an http(s) STAC API URL (e.g. %s), a preset name (%s), "+
		"%q for the embedded demo catalog, or the path of a local static catalog.json",
		ref, why, presets[0].URL, strings.Join(names, ", "), DemoCatalog)
}

func statReason(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "no such file"
	}
	return err.Error()
}
