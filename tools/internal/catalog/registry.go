// Package catalog is the catalog registry: what a catalog_url argument or
// --catalog may name (presets, STAC_MCP_CATALOGS names, "demo", a URL or a
// local catalog.json), one STAC client per catalog, and the in-process STAC
// API that serves the demo and local static catalogs in memory, without a
// socket (reliability/inmemory, adr/0025). Package
// tools re-exports what cmd and bench configure (tools/catalog_registry.go).
package catalog

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"

	"github.com/stacmcp/stac-mcp/reliability/inmemory"
	"github.com/stacmcp/stac-mcp/reliability/redact"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/freetext"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// Catalog is a resolved catalog: what a catalog_url argument or --catalog
// names, with a client bound to the reliability layer's HTTP client.
type Catalog struct {
	Ref  string // as given: URL, preset name, "demo" or a path
	Name string // preset or configured name, "demo", "local" or "" for a plain URL
	// Key names the catalog stably across processes: the URL of a remote
	// catalog, "demo", or the real path of a local catalog.json (whose
	// in-process URL changes with every start).
	Key    string
	URL    string // the STAC API root URL actually used (show it with Shown)
	Host   string // URL's host, the reliability layer's per-host key
	Client *stacclient.Client
	// Notes says what loading a static catalog ("demo" or a local
	// catalog.json) skipped and why; empty for remote catalogs.
	Notes []string
	// WriteRefusal, when set, is why the write tools refuse this catalog
	// before sending anything (a local catalog no operator configured).
	WriteRefusal string
}

// Shown is URL as a tool result or an error may show it: credentials an
// operator put in a configured catalog's URL (?api_key=...) redacted, and
// an in-process catalog by its name (Label).
func (c *Catalog) Shown() string {
	if label := c.Label(); label != "" {
		return label
	}
	return redact.Secrets(c.URL)
}

// Label is how results and errors name an in-process catalog (the demo, a
// local catalog.json): its name, "demo", not the address it happens to be
// served at, which changes with every start and means nothing to a model.
// "" for a remote catalog, whose URL is its name. An
// in-process catalog is told by its Key, which is never its URL.
func (c *Catalog) Label() string {
	if c.Key == c.URL {
		return ""
	}
	return c.Name
}

// InProcessLabel is the Label of the in-process catalog served at host,
// "" when none is.
func (c *Registry) InProcessLabel(host string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cat := range c.inProc {
		if cat.Host == host {
			return cat.Label()
		}
	}
	return ""
}

// Preset is a well-known public STAC API a model or a person can name
// instead of typing its URL.
type Preset struct {
	Name string
	URL  string // a remote catalog's root; empty for a local one
	Path string // a local static catalog (STAC_MCP_CATALOGS name=path); empty for a remote one
	Why  string // one line: what the catalog holds
}

// DefaultPreset is the reference used when neither --catalog,
// STAC_MCP_CATALOG_URL nor a tool's catalog_url names one.
const DefaultPreset = "earth-search"

// Demo names the embedded demo catalog, served in-process.
const Demo = "demo"

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

// Options configure how references become clients.
type Options struct {
	// Default is the reference used for "" (a preset, "demo", a URL or a
	// path); empty means DefaultPreset.
	Default string
	// HTTPClient makes every request (the reliability layer's client).
	HTTPClient *http.Client
	// Headers go with every request to the default catalog's own origin
	// (STAC_MCP_HEADERS), and to no other catalog.
	Headers http.Header
	// CatalogHeaders are headers per preset or named catalog, by lowercase
	// name (STAC_MCP_CATALOG_HEADERS_<NAME>); each set goes only to its
	// catalog's origin. A catalog_url that is exactly a configured
	// catalog's URL is that catalog and gets its headers; any other URL
	// gets none.
	CatalogHeaders map[string]http.Header
	// UserAgent for upstream requests; empty means stacclient's default.
	UserAgent string
	// Named are extra catalogs by name (STAC_MCP_CATALOGS), read with
	// ParseNamed so they cannot shadow a preset.
	Named []Preset
	// Groups are names that stand for several catalogs
	// (STAC_MCP_CATALOG_GROUPS), read with ParseGroups.
	Groups []Group
	// UntrustedCallers is set for the http transport: a catalog_url
	// argument may then not name a local path (only the operator's --catalog
	// and STAC_MCP_CATALOGS entries serve local catalogs). Over stdio and in
	// the one-shot commands the caller is the operator, and paths work.
	UntrustedCallers bool
	// LoadLimits bound what loading a local static catalog reads (zero:
	// stacserver's defaults).
	LoadLimits stacserver.LoadOptions
	// WrapDemo, when set, wraps the demo catalog's in-process handler. cmd
	// uses it for STAC_MCP_DEMO_FAULT_RATE (server-side fault injection
	// under the reliability layer), so this package never imports
	// faultinject.
	WrapDemo func(http.Handler) http.Handler
	// WritableLocal serves local static catalogs with the STAC Transaction
	// endpoints, writing changes back to their files (--allow-writes). The
	// demo catalog is never writable.
	WritableLocal bool
}

// Registry resolves catalog references and caches one client per URL. The
// demo catalog and local static catalogs are served by an in-process STAC
// API in memory (no socket), started on first use and stopped by Close;
// a local catalog is keyed by its real path, so every spelling of it
// (./x, x/catalog.json, a symlink, file://...) shares one server.
type Registry struct {
	opts         Options
	headersByURL map[string]http.Header // operator-configured headers, by catalog root URL

	loads singleflight.Group // one load per in-process key at a time, outside mu
	mount mounter            // serves the in-process catalogs in memory

	mu      sync.Mutex
	byURL   map[string]*Catalog // configured remote catalogs (presets, names, the default), keyed by URL
	others  *remoteCache        // every other remote catalog: bounded, least recently used first out
	inProc  map[string]*Catalog // "demo" and local catalogs, keyed by "demo" or real path
	servers []*inProcessServer  // started in-process servers, stopped by Close
	closed  bool
}

// New returns a resolver; call Close when done to stop in-process
// servers.
func New(opts Options) *Registry {
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	m, ok := opts.HTTPClient.Transport.(mounter)
	if !ok {
		// A plain client (tests, tools that build no layer): in-process
		// catalogs are served by a router of this registry in front of it.
		router := inmemory.NewRouter()
		base := opts.HTTPClient.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		client := *opts.HTTPClient
		client.Transport = router.Wrap(base)
		opts.HTTPClient, m = &client, router
	}
	c := &Registry{
		mount:        m,
		opts:         opts,
		headersByURL: map[string]http.Header{},
		byURL:        map[string]*Catalog{},
		others:       newRemoteCache(maxRemoteClients, maxRemoteBytes),
		inProc:       map[string]*Catalog{},
	}
	addHeaders := func(rawURL string, h http.Header) {
		if len(h) == 0 {
			return
		}
		key := rootKey(rawURL)
		merged := c.headersByURL[key].Clone()
		if merged == nil {
			merged = http.Header{}
		}
		for name, values := range h {
			merged[http.CanonicalHeaderKey(name)] = append([]string(nil), values...)
		}
		c.headersByURL[key] = merged
	}
	for name, h := range opts.CatalogHeaders {
		if u, ok := presetURL(strings.ToLower(name)); ok {
			addHeaders(u, h)
		} else if p, ok := c.named(strings.ToLower(name)); ok && p.URL != "" {
			addHeaders(p.URL, h)
		}
	}
	if r, err := c.classify("", true); err == nil && r.kind == refRemote {
		addHeaders(r.url, opts.Headers) // STAC_MCP_HEADERS: the default catalog's
	}
	return c
}

// KnowsName reports whether name is a preset or one of named, i.e.
// a catalog STAC_MCP_CATALOG_HEADERS_<NAME> may configure headers for.
func KnowsName(name string, named []Preset) (remote, ok bool) {
	name = strings.ToLower(name)
	if _, found := presetURL(name); found {
		return true, true
	}
	for _, p := range named {
		if p.Name == name {
			return p.URL != "", true
		}
	}
	return false, false
}

// rootKey is the cache key of a remote catalog root URL.
func rootKey(rawURL string) string {
	if u, err := url.Parse(rawURL); err == nil {
		rawURL = u.String()
	}
	return strings.TrimRight(rawURL, "/")
}

// OperatorHosts are the hosts of the catalogs the operator configured or
// the server knows by name: the presets, the named catalogs and a default
// given as a URL. The reliability layer pins them (never evicted, their own
// metrics label) and every session of a shared server may see their health.
func (c *Registry) OperatorHosts() []string {
	var urls []string
	for _, p := range presets {
		urls = append(urls, p.URL)
	}
	for _, p := range c.opts.Named {
		urls = append(urls, p.URL)
	}
	urls = append(urls, c.Default())
	var hosts []string
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !slices.Contains(hosts, u.Host) {
			hosts = append(hosts, u.Host)
		}
	}
	return hosts
}

// UntrustedCallers reports whether the callers are http clients
// (Options.UntrustedCallers), whom results tell less about hosts that are
// not their catalog's.
func (c *Registry) UntrustedCallers() bool { return c.opts.UntrustedCallers }

// Default is the reference "" resolves to.
func (c *Registry) Default() string {
	if c.opts.Default == "" {
		return DefaultPreset
	}
	return c.opts.Default
}

// Resolve turns a reference ("" = the configured default) into a Catalog.
// A static catalog is loaded under ctx, outside any lock shared by other
// references: a slow or broken file delays only the calls that name it.
func (c *Registry) Resolve(ctx context.Context, ref string) (*Catalog, error) {
	r, err := c.classify(ref, strings.TrimSpace(ref) == "")
	if err != nil {
		return nil, err
	}
	switch r.kind {
	case refInProcess:
		return c.mountedLocal(r.ref, r.url)
	case refRemote:
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.closed {
			return nil, errClosed
		}
		return c.remoteLocked(r.ref, r.name, r.url)
	case refDemo:
		// The embedded demo is trusted and small (about 0.1 s to load): a
		// caller's deadline does not cut its first load short.
		return c.inProcess(context.WithoutCancel(ctx), r.ref, Demo, Demo, loadDemoStore)
	default:
		name := r.name
		if name == "" {
			name = "local"
		}
		// --allow-writes makes the operator's local catalogs writable,
		// not every catalog.json a (possibly prompt-injected) model can
		// name over stdio: one named only by a tool call is
		// served read-only, under a key of its own.
		writable := c.opts.WritableLocal && (r.name != "" || strings.TrimSpace(ref) == "" || c.isDefaultPath(r.path))
		key := r.path
		if c.opts.WritableLocal && !writable {
			key = readOnlyKeyPrefix + r.path
		}
		return c.inProcess(ctx, r.ref, name, key, func(ctx context.Context) (*staticStore, error) {
			return loadDirStore(ctx, r.path, c.opts.LoadLimits, writable)
		})
	}
}

// readOnlyKeyPrefix keys the read-only copy of a local catalog that a
// tool call named while writes are on (see Resolve).
const readOnlyKeyPrefix = "read-only:"

// ReadOnlyLocal is the WriteRefusal of a local catalog served read-only
// because no operator configured it.
const ReadOnlyLocal = "this local catalog was named by a tool call, not configured by the operator, so it is served read-only: " +
	"--allow-writes writes only to the local catalogs named in --catalog or STAC_MCP_CATALOGS (name=path)"

// isDefaultPath reports whether path is the real path of the default
// catalog's root file.
func (c *Registry) isDefaultPath(path string) bool {
	r, err := c.classify("", true)
	return err == nil && r.kind == refLocal && r.path == path
}

var errClosed = errors.New("catalogs: already closed (the server is shutting down)")

// Check reports whether ref ("" = the default) is usable without loading
// or contacting anything, so a bad --catalog refuses to start while the
// demo catalog still starts lazily. It judges ref as the operator's.
func (c *Registry) Check(ref string) error {
	_, err := c.classify(ref, true)
	return err
}

// ConfiguredLoad is what loading one operator-configured local catalog at
// startup gave: what it skipped, or why it failed.
type ConfiguredLoad struct {
	Ref     string // as configured: the --catalog value or the STAC_MCP_CATALOGS name
	Default bool
	Notes   []string
	Err     error
}

// LoadConfigured loads the operator's local static catalogs now (the
// default, when it is a path, and every STAC_MCP_CATALOGS name=path), so
// that a dangling link or a broken file shows in the startup log rather
// than at the first tool call. Remote catalogs and the demo are not
// touched.
func (c *Registry) LoadConfigured(ctx context.Context) []ConfiguredLoad {
	var out []ConfiguredLoad
	load := func(ref string, isDefault bool) {
		cat, err := c.Resolve(ctx, ref)
		res := ConfiguredLoad{Ref: ref, Default: isDefault, Err: err}
		if err == nil {
			res.Notes = cat.Notes
		}
		out = append(out, res)
	}
	if r, err := c.classify("", true); err == nil && r.kind == refLocal {
		load("", true)
		out[len(out)-1].Ref = c.Default()
	}
	for _, p := range c.opts.Named {
		if p.Path != "" {
			load(p.Name, strings.EqualFold(c.Default(), p.Name))
		}
	}
	return out
}

type refKind int

const (
	refRemote refKind = iota
	refDemo
	refLocal
	refInProcess // the URL of a local catalog served in-process
)

// classifiedRef is what a reference names.
type classifiedRef struct {
	kind refKind
	ref  string // as given (the default when "")
	name string // preset or configured name
	url  string // remote: the URL
	path string // local: real path of the root catalog file (symlinks resolved)
}

// MaxRefBytes caps a catalog reference (catalog_url, --catalog, a
// cursor's catalog): 4,096 bytes is Linux's PATH_MAX, the longest path of a
// local catalog.json, and far above any STAC API root URL (the presets are
// under 60 bytes; an operator's URL with a signed query string stays under
// 2 KB), while below the 8 KB request line common servers accept. A longer
// one is refused before anything is parsed, cached or logged.
const MaxRefBytes = 4096

// classify reads a reference. fromOperator is true for the configured
// default and at startup; a tool argument over http (UntrustedCallers) may
// not name a local path, and is refused before the path is looked at, so
// the answer says nothing about which files exist.
func (c *Registry) classify(ref string, fromOperator bool) (classifiedRef, error) {
	if len(ref) > MaxRefBytes {
		return classifiedRef{}, fmt.Errorf("catalog_url is %d bytes long, more than the %d this server accepts (%q...): "+
			"give the STAC API root URL, a preset or configured name, \"demo\", or the path of a local catalog.json",
			len(ref), MaxRefBytes, redact.Secrets(shortRef(ref)))
	}
	given := strings.TrimSpace(ref)
	if given == "" {
		given = c.Default()
	}
	lower := strings.ToLower(given)
	if u, ok := presetURL(lower); ok {
		return classifiedRef{kind: refRemote, ref: given, name: lower, url: u}, nil
	}
	if g, ok := c.Group(lower); ok {
		return classifiedRef{}, groupRefusal(g)
	}
	if p, ok := c.named(lower); ok {
		if p.Path != "" {
			path, err := localCatalogPath(p.Path)
			if err != nil {
				return classifiedRef{}, fmt.Errorf("catalog %q (STAC_MCP_CATALOGS): %w", p.Name, err)
			}
			return classifiedRef{kind: refLocal, ref: given, name: lower, path: path}, nil
		}
		return classifiedRef{kind: refRemote, ref: given, name: lower, url: p.URL}, nil
	}
	if lower == Demo {
		return classifiedRef{kind: refDemo, ref: given}, nil
	}
	// Over http a tool call may not name a local path: the accepted forms
	// it is told then leave paths out.
	paths := !c.opts.UntrustedCallers || fromOperator
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		u, err := url.Parse(given)
		if err != nil {
			return classifiedRef{}, refErrorFor(given, fmt.Sprintf("it is not a valid URL with a host (%v)", err), paths)
		}
		if u.Host == "" {
			return classifiedRef{}, refErrorFor(given, "it is not a valid URL with a host (the host is empty)", paths)
		}
		if inmemory.Reserved(u.Host) {
			// The URL of an in-process catalog, as results show it: the same
			// catalog as its name. Nothing under the reserved domain is
			// ever dialled.
			if strings.EqualFold(strings.TrimSuffix(u.Hostname(), "."), DemoHost) {
				return classifiedRef{kind: refDemo, ref: given}, nil
			}
			return classifiedRef{kind: refInProcess, ref: given, url: given}, nil
		}
		return classifiedRef{kind: refRemote, ref: given, url: given}, nil
	}
	if !paths {
		return classifiedRef{}, refErrorFor(given, "it is not a preset or configured name, \"demo\", or an http(s) URL"+c.closestName(lower)+
			", and this server (http mode) does not open local paths named by a tool call; the operator serves local catalogs by naming them in STAC_MCP_CATALOGS (name=path) or --catalog", false)
	}
	path, err := localCatalogPath(given)
	if err != nil {
		why := "it is not a preset name, \"demo\", an http(s) URL, or " + err.Error() + c.closestName(lower)
		if len(c.opts.Named) > 0 {
			why += "; configured names (STAC_MCP_CATALOGS): " + strings.Join(namedNames(c.opts.Named), ", ")
		}
		return classifiedRef{}, refError(given, why)
	}
	return classifiedRef{kind: refLocal, ref: given, path: path}, nil
}

// localCatalogPath turns a path or file:// reference into the real path
// of a root catalog file: a directory means its catalog.json, symlinks are
// resolved (the key that makes every alias share one server), and only a
// regular file is accepted.
func localCatalogPath(given string) (string, error) {
	path := given
	if strings.HasPrefix(strings.ToLower(given), "file://") {
		path = given[len("file://"):]
	}
	info, err := os.Stat(path)
	if err != nil {
		return "", errors.New("an existing path (" + statReason(err) + ")")
	}
	if info.IsDir() {
		path = filepath.Join(path, "catalog.json")
		if info, err = os.Stat(path); err != nil {
			return "", errors.New("a catalog file: it is a directory without a catalog.json; give the path of the root catalog file")
		}
	}
	if !info.Mode().IsRegular() {
		return "", errors.New("a catalog file: it is not a regular file")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// remoteLocked returns the cached client for a remote STAC API URL. Only
// an operator-configured catalog URL gets headers.
func (c *Registry) remoteLocked(ref, name, rawURL string) (*Catalog, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, refError(ref, fmt.Sprintf("it is not a valid URL (%v)", err))
	}
	key := rootKey(rawURL)
	if cat, ok := c.byURL[key]; ok {
		return withRef(cat, ref), nil
	}
	configured := name != "" || key == c.defaultKey()
	if !configured {
		if cat, ok := c.others.get(key); ok {
			return withRef(cat, ref), nil
		}
	}
	opts := c.clientOptions(c.headersByURL[key])
	opts.KnownCatalog = c.operatorURL(key)
	client, err := stacclient.New(key, opts)
	if err != nil {
		return nil, fmt.Errorf("catalog %q: %w", redact.Secrets(shortRef(ref)), err)
	}
	cat := &Catalog{Ref: ref, Name: name, Key: key, URL: key, Host: u.Host, Client: client}
	if configured {
		c.byURL[key] = cat
	} else {
		c.others.add(key, cat)
	}
	return cat, nil
}

// defaultKey is the cache key of the default catalog when it is a URL.
func (c *Registry) defaultKey() string {
	d := c.Default()
	if l := strings.ToLower(d); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		return rootKey(d)
	}
	return ""
}

// Forget drops cat's client from the cache after a failed call when the
// catalog never answered: a URL that is refused (a private address over
// http, a name that does not resolve, nothing listening) keeps nothing
// in this process. Configured catalogs stay.
func (c *Registry) Forget(cat *Catalog) {
	if cat == nil || cat.Client == nil || cat.Name != "" || cat.Client.Answered() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.others.remove(cat.Key, cat)
}

// mountedLocal is the local catalog already served in-process under
// rawURL's host: its URL names it once loaded, never before (a URL does not
// say which file to load).
func (c *Registry) mountedLocal(ref, rawURL string) (*Catalog, error) {
	u, _ := url.Parse(rawURL) // classify parsed it
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	for _, cat := range c.inProc {
		if cat.Host == host {
			return withRef(cat, ref), nil
		}
	}
	return nil, refError(ref, "it names a local catalog served in-process (."+inmemory.Domain+"), and none is served under that name; "+
		"name the local catalog by its path or its configured name")
}

// inProcess returns the in-process server for key, loading and starting it
// on first use. Concurrent first uses of one key share a single load
// (singleflight); each caller waits only as long as its own ctx allows, and
// no lock is held while the files are read.
func (c *Registry) inProcess(ctx context.Context, ref, name, key string, load func(context.Context) (*staticStore, error)) (*Catalog, error) {
	c.mu.Lock()
	cat, closed := c.inProc[key], c.closed
	c.mu.Unlock()
	switch {
	case closed:
		return nil, errClosed
	case cat != nil:
		return withRef(cat, ref), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := c.loads.DoChan(key, func() (any, error) { return c.start(ctx, name, key, load) })
	select {
	case res := <-ch:
		if res.Err != nil {
			// Not cached: the next call reloads, so a fixed file works
			// without restarting the server.
			return nil, fmt.Errorf("catalog %q: %w", ref, res.Err)
		}
		return withRef(res.Val.(*Catalog), ref), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("catalog %q: the static catalog did not finish loading within the tool timeout (STAC_MCP_TOOL_TIMEOUT_SECS); "+
			"a catalog the operator names in --catalog or STAC_MCP_CATALOGS is loaded once at startup instead: %w", ref, ctx.Err())
	}
}

// start loads a static catalog and serves it in memory.
func (c *Registry) start(ctx context.Context, name, key string, load func(context.Context) (*staticStore, error)) (*Catalog, error) {
	c.mu.Lock()
	cat := c.inProc[key] // started while this call queued for the flight
	c.mu.Unlock()
	if cat != nil {
		return cat, nil
	}
	store, err := load(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the static catalog failed: %w", err)
	}
	handler := store.handler
	if key == Demo && c.opts.WrapDemo != nil {
		handler = c.opts.WrapDemo(handler)
	}
	host := DemoHost
	if key != Demo {
		host = localHost(name, key)
	}
	srv, err := startInProcessServer(c.mount, host, handler)
	if err != nil {
		_ = store.close()
		return nil, fmt.Errorf("starting the in-process STAC API: %w", err)
	}
	srv.onClose = store.close
	opts := c.clientOptions(nil)
	opts.KnownCatalog = true // the demo, or a local catalog: served from the operator's files
	client, err := stacclient.New(srv.url, opts)
	if err != nil {
		_ = srv.close()
		return nil, err
	}
	cat = &Catalog{Ref: name, Name: name, Key: strings.TrimPrefix(key, readOnlyKeyPrefix), URL: srv.url, Host: srv.host, Client: client, Notes: store.notes}
	if strings.HasPrefix(key, readOnlyKeyPrefix) {
		cat.WriteRefusal = ReadOnlyLocal
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		_ = srv.close()
		return nil, errClosed
	}
	c.servers = append(c.servers, srv)
	c.inProc[key] = cat
	return cat, nil
}

// operatorURL reports whether key (a rootKey) is a catalog the operator
// configured or the server knows by name: a preset, a named catalog or the
// default, however the reference spelled it.
func (c *Registry) operatorURL(key string) bool {
	urls := []string{c.Default()}
	for _, p := range presets {
		urls = append(urls, p.URL)
	}
	for _, p := range c.opts.Named {
		urls = append(urls, p.URL)
	}
	for _, u := range urls {
		if u != "" && rootKey(u) == key {
			return true
		}
	}
	return false
}

func (c *Registry) clientOptions(headers http.Header) stacclient.Options {
	return stacclient.Options{HTTPClient: c.opts.HTTPClient, Headers: headers, UserAgent: c.opts.UserAgent}
}

// Close stops the in-process servers. Resolve fails afterwards.
func (c *Registry) Close() error {
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
func refError(ref, why string) error { return refErrorFor(ref, why, true) }

// refErrorFor is refError; paths says whether a local path is among the
// accepted forms (not for a tool call over http).
func refErrorFor(ref, why string, paths bool) error {
	names := make([]string, 0, len(presets))
	for _, p := range presets {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	last := ", or the path of a local static catalog.json"
	if !paths {
		last = ""
	}
	return fmt.Errorf("catalog_url %q: %s. Accepted: an http(s) STAC API URL (e.g. %s), a preset name (%s), "+
		"%q for the embedded demo catalog%s",
		redact.Secrets(shortRef(ref)), why, presets[0].URL, strings.Join(names, ", "), Demo, last)
}

// closestName is " (did you mean planetary-computer?)" for a reference
// close to a preset, configured name or "demo" (a small edit distance, or
// one contains the other), else "".
func (c *Registry) closestName(ref string) string {
	candidates := append(presetNames(), Demo)
	candidates = append(candidates, namedNames(c.opts.Named)...)
	var close []string
	for _, name := range candidates {
		d := freetext.EditDistance(ref, name)
		if d <= max(2, len(ref)/5) || (len(ref) >= 4 && (strings.Contains(name, ref) || strings.Contains(ref, name))) {
			close = append(close, name)
		}
	}
	if len(close) == 0 {
		return ""
	}
	return " (did you mean " + strings.Join(close, " or ") + "?)"
}

// shortRef is ref as an error shows it: at most 200 bytes (cut on a rune
// boundary).
func shortRef(ref string) string {
	const max = 200
	if len(ref) <= max {
		return ref
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(ref[cut]) {
		cut--
	}
	return ref[:cut] + "..."
}

func statReason(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "no such file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
