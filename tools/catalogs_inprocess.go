package tools

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
)

// staticStore is a static catalog loaded into the in-process STAC API.
type staticStore struct {
	handler http.Handler
	notes   []string // what the loader skipped and why
}

func loadDemoStore() (*staticStore, error) { return loadStaticStore(demo.FS, demo.RootFile) }

func loadDirStore(dir, root string) (*staticStore, error) {
	return loadStaticStore(os.DirFS(dir), root)
}

// loadStaticStore loads a static catalog and serves it with the root
// catalog's own id, title and description on the landing page.
func loadStaticStore(fsys fs.FS, root string) (*staticStore, error) {
	store, err := stacserver.LoadFS(fsys, root)
	if err != nil {
		return nil, err
	}
	var landing struct {
		ID          string `json:"id"`
		Title       string `json:"title"`
		Description string `json:"description"`
	}
	if raw, err := fs.ReadFile(fsys, root); err == nil {
		_ = json.Unmarshal(raw, &landing) // LoadFS already parsed it; the fields are optional
	}
	srv := stacserver.New(store, stacserver.Options{ID: landing.ID, Title: landing.Title, Description: landing.Description})
	return &staticStore{handler: srv, notes: store.Notes}, nil
}

// inProcessServer serves a static catalog over real HTTP on a loopback
// port. Going through HTTP (rather than calling the handler directly) keeps
// one code path: the same stacclient, reliability layer and receipts as for
// a remote catalog.
type inProcessServer struct {
	url  string
	host string
	srv  *http.Server
	done chan struct{} // closed when Serve has returned
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
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
