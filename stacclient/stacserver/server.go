package stacserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Server is an in-process STAC API over a Store. It implements
// http.Handler; mount it on an httptest.Server. Links are absolute and
// built from each request's Host, so it works behind any URL.
type Server struct {
	// state is the store being served. Reads load it once per request;
	// writes (transactions.go) publish a changed copy, so a request never
	// sees half a change and reads take no lock.
	state atomic.Pointer[Store]
	opts  Options
	mux   *http.ServeMux
	// writeMu serialises transactions (and the files they write).
	writeMu sync.Mutex
	// disk is what the server knows of its catalog's files (disk.go);
	// guarded by writeMu.
	disk diskState
	// closing is set by Drain: no write starts after it.
	closing atomic.Bool
	// beforeRename is a test hook of the file writer (persist.go).
	beforeRename func(name string) error

	mu       sync.Mutex
	requests map[string]int // "METHOD /path" → count
	// queries remembers recent searches by hash so that a token-only next
	// request (NextPOSTTokenOnly) can continue them; queryOrder evicts the
	// oldest beyond maxRememberedQueries, so a long-running server stays bounded.
	queries    map[string]*searchQuery
	queryOrder []string
}

// maxRememberedQueries bounds the token-only query memory.
const maxRememberedQueries = 1024

// maxCountedPaths bounds the request counter; requests to further distinct
// paths are counted under otherPaths.
const (
	maxCountedPaths = 10000
	otherPaths      = "OTHER"
)

// New returns a server for store with the given behaviours. The store
// becomes read-only; with Options.Writes the server changes copies of it.
func New(store *Store, opts Options) *Server {
	store.freeze()
	s := &Server{opts: opts, mux: http.NewServeMux(),
		requests: map[string]int{}, queries: map[string]*searchQuery{}}
	s.state.Store(store)
	s.routes()
	if d := s.dirWriter(); d != nil {
		s.removeStaleTempFiles(d, store)
	}
	return s
}

// store is the store as it stands now; a handler reads it once.
func (s *Server) store() *Store { return s.state.Load() }

func (s *Server) routes() {
	m := s.mux
	m.HandleFunc("GET /{$}", s.handleLanding)
	m.HandleFunc("GET /conformance", s.handleConformance)
	m.HandleFunc("GET /collections", s.handleCollections)
	m.HandleFunc("GET /collections/{collectionId}", s.handleCollection)
	m.HandleFunc("GET /search", s.handleSearch)
	m.HandleFunc("POST /search", s.handleSearch)
	if !s.opts.DisableFeatures {
		m.HandleFunc("GET /collections/{collectionId}/items", s.handleItems)
		m.HandleFunc("GET /collections/{collectionId}/items/{itemId}", s.handleItem)
	}
	// Asset files are data, not the Features API: served either way.
	m.HandleFunc("GET /collections/{collectionId}/items/{itemId}/assets/{key}", s.handleAssetFile)
	if !s.opts.DisableQueryables {
		m.HandleFunc("GET /queryables", s.handleQueryables)
		m.HandleFunc("GET /collections/{collectionId}/queryables", s.handleQueryables)
	}
	if !s.opts.DisableAggregation {
		m.HandleFunc("GET /aggregate", s.handleAggregate)
		m.HandleFunc("POST /aggregate", s.handleAggregate)
		m.HandleFunc("GET /aggregations", s.handleAggregations)
		m.HandleFunc("GET /collections/{collectionId}/aggregate", s.handleAggregate)
		m.HandleFunc("POST /collections/{collectionId}/aggregate", s.handleAggregate)
		m.HandleFunc("GET /collections/{collectionId}/aggregations", s.handleAggregations)
	}
	if s.opts.Writes != nil {
		s.transactionRoutes()
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, notFound("no endpoint %s %s on this server", r.Method, r.URL.Path))
	})
}

// ServeHTTP counts the request and serves it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.Method + " " + r.URL.Path
	s.mu.Lock()
	if _, known := s.requests[key]; !known && len(s.requests) >= maxCountedPaths {
		key = otherPaths
	}
	s.requests[key]++
	s.mu.Unlock()
	if s.opts.OnRequest != nil {
		s.opts.OnRequest(r)
	}
	if base := strings.TrimRight(s.opts.BasePath, "/"); base != "" {
		rest, ok := strings.CutPrefix(r.URL.Path, base)
		if !ok || (rest != "" && !strings.HasPrefix(rest, "/")) {
			http.NotFound(w, r)
			return
		}
		r2 := r.Clone(context.WithValue(r.Context(), basePathKey{}, base))
		r2.URL.Path, r2.URL.RawPath = cmp.Or(rest, "/"), ""
		r = r2
	}
	s.mux.ServeHTTP(w, r)
}

type basePathKey struct{}

// requestCounts returns a copy of the request counts keyed "METHOD /path"
// (for example "POST /search"). After maxCountedPaths distinct keys, new
// paths are counted under "OTHER".
func (s *Server) requestCounts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.requests))
	for k, v := range s.requests {
		out[k] = v
	}
	return out
}

// RequestCount is the number of requests served for method and path.
func (s *Server) RequestCount(method, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[method+" "+path]
}

// baseURL is scheme://host of the request, the root of every link.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	base, _ := r.Context().Value(basePathKey{}).(string)
	return scheme + "://" + r.Host + base
}

const (
	mediaJSON       = "application/json"
	mediaGeoJSON    = "application/geo+json"
	mediaSchemaJSON = "application/schema+json"
)

func writeJSON(w http.ResponseWriter, status int, mediaType string, v any) {
	w.Header().Set("Content-Type", mediaType)
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // a failed write means the client went away
}

func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = &apiError{status: 500, code: "InternalServerError", description: err.Error()}
	}
	writeJSON(w, e.status, mediaJSON, map[string]any{"code": e.code, "description": e.description})
}

// readBody reads a POST body, capped so a runaway client cannot exhaust memory.
func readBody(r *http.Request) ([]byte, error) {
	const maxBody = 8 << 20
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, badRequest("could not read the request body: %v", err)
	}
	if len(b) > maxBody {
		return nil, &apiError{status: 413, code: "PayloadTooLarge", description: "request body over 8 MiB"}
	}
	return b, nil
}

func link(rel, href, mediaType string) map[string]any {
	l := map[string]any{"rel": rel, "href": href}
	if mediaType != "" {
		l["type"] = mediaType
	}
	return l
}

// advertises reports whether the conformance list has a class ending in suffix.
func (s *Server) advertises(suffix string) bool {
	for _, c := range s.conformance() {
		if strings.HasSuffix(c, suffix) {
			return true
		}
	}
	return false
}

// conformance is what the server advertises: the ConformsTo override or
// DefaultConformance, minus the classes of every endpoint a Disable* option
// turned off, so the declaration never contradicts the routes.
func (s *Server) conformance() []string {
	declared := s.opts.ConformsTo
	if declared == nil {
		declared = DefaultConformance()
	}
	out := make([]string, 0, len(declared))
	for _, c := range declared {
		if !s.classDisabled(c) {
			out = append(out, c)
		}
	}
	return append(out, s.transactionClasses()...)
}

// classDisabled reports whether class c promises an endpoint this server's
// options turned off: OGC API Features part 1 (and STAC's ogcapi-features)
// promises /collections/{id}/items, aggregation promises /aggregate.
func (s *Server) classDisabled(c string) bool {
	features := strings.HasSuffix(c, "/ogcapi-features") || strings.Contains(c, "/ogcapi-features-1/")
	aggregation := strings.HasSuffix(c, "/aggregation")
	return (s.opts.DisableFeatures && features) || (s.opts.DisableAggregation && aggregation)
}
