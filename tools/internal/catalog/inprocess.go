package catalog

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// staticStore is a static catalog loaded into the in-process STAC API.
type staticStore struct {
	handler http.Handler
	notes   []string // what the loader skipped and why
	dir     *os.Root // a writable local catalog's directory, closed with its server
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
	return loadStaticStore(ctx, demo.FS, demo.RootFile, stacserver.LoadOptions{}, nil)
}

// loadDirStore loads the local static catalog whose root file is path (a
// real path), reading through an os.Root of its directory so that no link
// or symlink reaches a file outside it. A writable one is served with the
// Transaction endpoints, writing through that same os.Root, which then
// stays open until the catalog's server stops.
func loadDirStore(ctx context.Context, path string, limits stacserver.LoadOptions, writable bool) (*staticStore, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	var writes *stacserver.WriteOptions
	if writable {
		writes = &stacserver.WriteOptions{Dir: root, RootFile: filepath.Base(path), Limits: limits}
	}
	s, err := loadStaticStore(ctx, root.FS(), filepath.Base(path), limits, writes)
	if err != nil || !writable {
		root.Close()
		return s, err
	}
	s.dir = root
	return s, nil
}

// loadStaticStore loads a static catalog and serves it with the root
// catalog's own id, title and description on the landing page; writes,
// when set, turns on its Transaction endpoints.
func loadStaticStore(ctx context.Context, fsys fs.FS, root string, limits stacserver.LoadOptions, writes *stacserver.WriteOptions) (*staticStore, error) {
	store, err := stacserver.LoadFSContext(ctx, fsys, root, limits)
	if err != nil {
		return nil, err
	}
	srv := stacserver.New(store, stacserver.Options{ID: store.Root.ID, Title: store.Root.Title, Description: store.Root.Description, Writes: writes})
	return &staticStore{handler: srv, notes: store.Notes}, nil
}

// inProcessServer serves a static catalog over real HTTP on a loopback
// port. Going through HTTP (rather than calling the handler directly) keeps
// one code path: the same stacclient, reliability layer and receipts as for
// a remote catalog.
type inProcessServer struct {
	url     string
	host    string
	srv     *http.Server
	done    chan struct{} // closed when Serve has returned
	untrust func()        // revokes the dial guard's exception for host, if any
	onClose func() error  // releases what the served catalog holds
}

func startInProcessServer(h http.Handler) (*inProcessServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &inProcessServer{
		host: ln.Addr().String(),
		srv:  &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
		done: make(chan struct{}),
	}
	s.url = "http://" + s.host
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns http.ErrServerClosed after close
	}()
	return s, nil
}

func (s *inProcessServer) close() error {
	err := s.srv.Close()
	<-s.done
	if s.untrust != nil {
		s.untrust()
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if s.onClose != nil {
		err = errors.Join(err, s.onClose())
	}
	return err
}
