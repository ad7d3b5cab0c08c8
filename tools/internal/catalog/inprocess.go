package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/reliability/inmemory"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// staticStore is a static catalog loaded into the in-process STAC API.
type staticStore struct {
	handler http.Handler
	notes   []string // what the loader skipped and why
	dir     *os.Root // a local catalog's directory (its asset files, a writable one's writes), closed with its server
}

// drainWrites bounds how long closing a writable store (on SIGTERM, at
// exit) waits for the write in progress to reach the files.
const drainWrites = 10 * time.Second

// close lets a writable store's write in progress finish (bounded), then
// releases the catalog directory.
func (s *staticStore) close() error {
	if s.dir == nil {
		return nil
	}
	if d, ok := s.handler.(interface{ Drain(time.Duration) bool }); ok {
		d.Drain(drainWrites)
	}
	return s.dir.Close()
}

func loadDemoStore(ctx context.Context) (*staticStore, error) {
	// The demo serves its own COG assets (the synthetic Sentinel-2 scenes).
	return loadStaticStore(ctx, demo.FS, demo.RootFile, stacserver.LoadOptions{ServeAssetFiles: true}, nil, "")
}

// loadDirStore loads the local static catalog whose root file is path (a
// real path), reading through an os.Root of its directory so that no link
// or symlink reaches a file outside it. A writable one is served with the
// Transaction endpoints, writing through that same os.Root, which then
// stays open until the catalog's server stops.
func loadDirStore(ctx context.Context, path string, limits stacserver.LoadOptions, writable bool) (*staticStore, error) {
	// Relative asset hrefs are served as absolute paths in this directory
	// (never written back so): "./ortho-2.tif" names nothing to a reader.
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	// The files its items name inside the directory are also served (at
	// …/items/{id}/assets/{key}), so previews and pixel tools can read
	// them; through the os.Root, which stays open while the catalog is
	// served.
	limits.ServeAssetFiles, limits.QuietAssetFiles = true, true
	var writes *stacserver.WriteOptions
	if writable {
		writes = &stacserver.WriteOptions{Dir: root, RootFile: filepath.Base(path), Limits: limits}
	}
	s, err := loadStaticStore(ctx, root.FS(), filepath.Base(path), limits, writes, dir)
	if err != nil {
		root.Close()
		return s, err
	}
	s.dir = root
	return s, nil
}

// loadStaticStore loads a static catalog and serves it with the root
// catalog's own id, title and description on the landing page; writes,
// when set, turns on its Transaction endpoints; assetDir, when set, is the
// catalog's directory on disk (stacserver.Options.AssetDir).
func loadStaticStore(ctx context.Context, fsys fs.FS, root string, limits stacserver.LoadOptions, writes *stacserver.WriteOptions, assetDir string) (*staticStore, error) {
	store, err := stacserver.LoadFSContext(ctx, fsys, root, limits)
	if err != nil {
		return nil, err
	}
	srv := stacserver.New(store, stacserver.Options{ID: store.Root.ID, Title: store.Root.Title, Description: store.Root.Description, Writes: writes,
		AssetDir: assetDir})
	return &staticStore{handler: srv, notes: store.Notes}, nil
}

// inProcessServer is a static catalog served in memory under a name in
// inmemory.Domain: no socket, so no other local user, browser page or
// DNS-rebinding site can reach it (adr/0025). Its requests go
// through the same stacclient and reliability layer (retries, timeouts,
// receipts, metrics, demo fault injection) as a remote catalog's.
type inProcessServer struct {
	url     string
	host    string
	unmount func()
	onClose func() error // releases what the served catalog holds
}

// mounter serves a handler under a host in memory: the reliability layer's
// client transport (reliability.Layer.Mount), or the registry's own
// inmemory.Router when its HTTPClient has none.
type mounter interface {
	Mount(host string, h http.Handler) (unmount func(), err error)
}

func startInProcessServer(m mounter, host string, h http.Handler) (*inProcessServer, error) {
	unmount, err := m.Mount(host, h)
	if err != nil {
		return nil, err
	}
	return &inProcessServer{url: "http://" + host, host: host, unmount: unmount}, nil
}

func (s *inProcessServer) close() error {
	s.unmount()
	if s.onClose != nil {
		return s.onClose()
	}
	return nil
}

// DemoHost is the demo catalog's host: its URL is http://demo.stac-mcp.invalid.
const DemoHost = "demo." + inmemory.Domain

// localHost names a local catalog served in-process: a label from its
// configured name or its directory (readable in results and logs), a hash
// of its real path (two directories of the same name stay apart; the same
// catalog keeps its name across restarts), and "local".
func localHost(name, path string) string {
	label := name
	if label == "" || label == "local" {
		label = filepath.Base(filepath.Dir(path))
	}
	var b strings.Builder
	for _, r := range strings.ToLower(label) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 40 {
			break
		}
	}
	clean := strings.Trim(b.String(), "-")
	if clean == "" {
		clean = "catalog"
	}
	sum := sha256.Sum256([]byte(path))
	return clean + "-" + hex.EncodeToString(sum[:4]) + ".local." + inmemory.Domain
}
