package tools

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
}

func loadDemoStore() (*staticStore, error) {
	return loadStaticStore(context.Background(), demo.FS, demo.RootFile, stacserver.LoadOptions{})
}

// loadDirStore loads the local static catalog whose root file is path (a
// real path), reading through an os.Root of its directory so that no link
// or symlink reaches a file outside it.
func loadDirStore(ctx context.Context, path string, limits stacserver.LoadOptions) (*staticStore, error) {
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return loadStaticStore(ctx, root.FS(), filepath.Base(path), limits)
}

// loadStaticStore loads a static catalog and serves it with the root
// catalog's own id, title and description on the landing page.
func loadStaticStore(ctx context.Context, fsys fs.FS, root string, limits stacserver.LoadOptions) (*staticStore, error) {
	store, err := stacserver.LoadFSContext(ctx, fsys, root, limits)
	if err != nil {
		return nil, err
	}
	srv := stacserver.New(store, stacserver.Options{ID: store.Root.ID, Title: store.Root.Title, Description: store.Root.Description})
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
		return nil
	}
	return err
}
