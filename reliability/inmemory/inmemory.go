// Package inmemory serves an http.Handler to an http.Client without a
// socket: a RoundTripper that calls the handler on its own goroutine and
// streams its answer back through a pipe. stac-mcp serves the demo and
// local static catalogs this way (adr/0025), so nothing listens on a port
// that another local user, a browser page or a DNS-rebinding site could
// reach, while the tools' requests still go through the reliability layer
// (retries, timeouts, metrics, fault injection) like any remote catalog's.
//
// In-process catalogs are named under Domain, a name under the ".invalid"
// top-level domain (RFC 2606, RFC 6761 §6.4): it never resolves, so a
// request for it that somehow missed the Router could not reach anything,
// and the reliability layer's dialer refuses it before resolving anyway.
package inmemory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Domain is the reserved domain in-process catalogs are named under, e.g.
// http://demo.stac-mcp.invalid/.
const Domain = "stac-mcp.invalid"

// MaxRequestBodyBytes bounds the request body a handler may read through
// Transport: a handler that reads past it gets an error, as from
// http.MaxBytesReader. The STAC server reads at most 8 MiB itself.
const MaxRequestBodyBytes = 16 << 20

// Reserved reports whether host (a URL's host, with or without a port) is
// under the ".invalid" top-level domain: no connection is ever made to it.
func Reserved(host string) bool {
	h := normalHost(host)
	return h == "invalid" || strings.HasSuffix(h, ".invalid")
}

// normalHost is host lowercased, without a port or a trailing dot.
func normalHost(host string) string {
	h := strings.ToLower(host)
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	return strings.TrimSuffix(strings.Trim(h, "[]"), ".")
}

// ErrNotServed is returned for a request to a reserved host that no
// handler is mounted for: it is refused, never dialled.
var ErrNotServed = errors.New("no in-process catalog is served under this name (names under ." + Domain + " are never dialled)")

// ErrRedirectedIn is returned for a redirect from another host into an
// in-process catalog: a remote catalog may not make this server send a
// request (a write, with a 307) to a local one.
var ErrRedirectedIn = errors.New("a redirect from another host into an in-process catalog is refused")

// errAborted is what a handler's panic (http.ErrAbortHandler, as
// faultinject's connection faults raise without a Hijacker) looks like to
// the client: a connection reset, which the reliability layer retries like
// a real one.
var errAborted = fmt.Errorf("in-process handler aborted the response: %w", syscall.ECONNRESET)

// Router sends requests for mounted hosts to their handlers and every
// other request to the RoundTripper it wraps. A request for a reserved
// host that is not mounted fails with ErrNotServed and never reaches the
// wrapped RoundTripper.
type Router struct {
	mu     sync.RWMutex
	mounts map[string]http.Handler // normalHost → handler
}

// NewRouter returns a Router with nothing mounted.
func NewRouter() *Router { return &Router{mounts: map[string]http.Handler{}} }

// Mount serves h under host, which must be under Domain (a name that can
// never reach the network). unmount removes it; it is safe to call twice.
func (r *Router) Mount(host string, h http.Handler) (unmount func(), err error) {
	key := normalHost(host)
	if key != Domain && !strings.HasSuffix(key, "."+Domain) {
		return nil, fmt.Errorf("in-process host %q is not under %s", host, Domain)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.mounts[key]; ok {
		return nil, fmt.Errorf("in-process host %q is already served", host)
	}
	r.mounts[key] = h
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			delete(r.mounts, key)
		})
	}, nil
}

// Wrap returns a RoundTripper that serves this router's hosts in memory and
// passes every other request to next.
func (r *Router) Wrap(next http.RoundTripper) http.RoundTripper {
	return &routed{router: r, next: next}
}

type routed struct {
	router *Router
	next   http.RoundTripper
}

func (t *routed) RoundTrip(req *http.Request) (*http.Response, error) {
	if !Reserved(req.URL.Host) {
		return t.next.RoundTrip(req)
	}
	closeBody := func() {
		if req.Body != nil {
			_ = req.Body.Close()
		}
	}
	key := normalHost(req.URL.Host)
	if req.Response != nil && req.Response.Request != nil && normalHost(req.Response.Request.URL.Host) != key {
		closeBody()
		return nil, ErrRedirectedIn
	}
	if p := req.URL.Port(); p != "" && p != map[string]string{"http": "80", "https": "443"}[req.URL.Scheme] {
		closeBody()
		return nil, ErrNotServed
	}
	t.router.mu.RLock()
	h := t.router.mounts[key]
	t.router.mu.RUnlock()
	if h == nil {
		closeBody()
		return nil, ErrNotServed
	}
	return Transport(h).RoundTrip(req)
}

// CloseIdleConnections passes the call on to the wrapped RoundTripper.
func (t *routed) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Transport is a RoundTripper that serves every request with h, in
// memory. The handler runs on its own goroutine with a context derived from
// the request's (ended when the caller's context ends or it closes the
// body), reads a request body bounded by MaxRequestBodyBytes, and streams
// its answer: RoundTrip returns once the handler has written its header
// (or returned), and the body is read as the handler writes it, so a large
// answer is never held in memory here and a caller that stops reading
// stops the handler. A handler that panics (http.ErrAbortHandler) before
// its header fails RoundTrip, after it fails the body read, both with a
// connection-reset error.
func Transport(h http.Handler) http.RoundTripper { return handlerTransport{h} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	sreq := serverRequest(ctx, req)
	pr, pw := io.Pipe()
	w := &writer{header: http.Header{}, pipe: pw, head: req.Method == http.MethodHead, ready: make(chan struct{}), contentLength: -1}
	sreq.Body = http.MaxBytesReader(w, sreq.Body, MaxRequestBodyBytes)
	go serve(t.h, w, sreq, req.Body)

	select {
	case <-w.ready:
	case <-ctx.Done():
		// The handler has not answered in time: it gets a closed pipe to
		// write to and a done context, and ends on its own.
		cancel()
		_ = pr.CloseWithError(ctx.Err())
		return nil, ctx.Err()
	}
	if w.failed != nil {
		cancel()
		_ = pr.Close()
		return nil, w.failed
	}
	resp := &http.Response{
		Status:        strconv.Itoa(w.status) + " " + http.StatusText(w.status),
		StatusCode:    w.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        w.sent,
		ContentLength: w.contentLength,
		Body:          &body{pipe: pr, cancel: cancel},
		Request:       req,
	}
	if req.Method == http.MethodHead || w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		resp.Body = http.NoBody
		_ = pr.Close()
		cancel()
	}
	return resp, nil
}

// serverRequest is req as a handler sees it (what net/http's server
// would build from it), on ctx.
func serverRequest(ctx context.Context, req *http.Request) *http.Request {
	sreq := req.Clone(ctx)
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "in-process"
	sreq.Proto, sreq.ProtoMajor, sreq.ProtoMinor = "HTTP/1.1", 1, 1
	if sreq.Host == "" {
		sreq.Host = req.URL.Host
	}
	// A server request carries no scheme or host in its URL.
	u := *req.URL
	u.Scheme, u.Host, u.User = "", "", nil
	sreq.URL = &u
	sreq.GetBody = nil
	sreq.Response = nil
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	return sreq
}

// serve runs the handler and ends the answer: a clean end of body, or the
// reset a panic stands for. The client's request body is closed once the
// handler is done with it, as http.RoundTripper requires.
func serve(h http.Handler, w *writer, sreq *http.Request, clientBody io.ReadCloser) {
	defer func() {
		if clientBody != nil {
			_ = clientBody.Close()
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			// http.ErrAbortHandler is how a handler drops a connection on
			// purpose; any other panic is a bug in the handler, which a
			// real server would also answer with a dropped connection.
			w.abort(errAborted)
			return
		}
		w.finish()
	}()
	h.ServeHTTP(w, sreq)
}

// writer is the handler's http.ResponseWriter.
type writer struct {
	header http.Header
	pipe   *io.PipeWriter
	head   bool

	mu            sync.Mutex
	wrote         bool          // WriteHeader happened
	ready         chan struct{} // closed once the header is sent or the handler has failed before it
	status        int
	sent          http.Header // the header as sent (later changes are not seen)
	contentLength int64       // declared Content-Length, -1 if none
	written       int64
	failed        error // set before ready closes: the handler aborted before its header
}

func (w *writer) Header() http.Header { return w.header }

func (w *writer) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(code)
}

func (w *writer) writeHeaderLocked(code int) {
	if w.wrote {
		return
	}
	if code >= 100 && code <= 199 {
		return // informational answers are not passed on
	}
	w.wrote = true
	w.status = code
	w.sent = w.header.Clone()
	if cl := w.sent.Get("Content-Length"); cl != "" {
		if n, err := strconv.ParseInt(cl, 10, 64); err == nil && n >= 0 {
			w.contentLength = n
		}
	}
	close(w.ready)
}

func (w *writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.writeHeaderLocked(http.StatusOK)
	if w.head || w.status == http.StatusNoContent || w.status == http.StatusNotModified {
		w.mu.Unlock()
		return len(p), nil // no body, as net/http's server discards it
	}
	if w.contentLength >= 0 && w.written+int64(len(p)) > w.contentLength {
		w.mu.Unlock()
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	w.mu.Unlock()
	// Outside the lock: the pipe blocks until the client reads.
	return w.pipe.Write(p)
}

// Flush sends the header; the body already streams.
func (w *writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writeHeaderLocked(http.StatusOK)
}

// finish ends a handler that returned: a handler that wrote nothing
// answers 200 with an empty body; a body shorter than its declared
// Content-Length reads as io.ErrUnexpectedEOF, as from a real connection.
func (w *writer) finish() {
	w.mu.Lock()
	w.writeHeaderLocked(http.StatusOK)
	short := w.contentLength >= 0 && w.written < w.contentLength && !w.head
	w.mu.Unlock()
	if short {
		_ = w.pipe.CloseWithError(io.ErrUnexpectedEOF)
		return
	}
	_ = w.pipe.Close()
}

// abort ends the answer as a dropped connection.
func (w *writer) abort(err error) {
	w.mu.Lock()
	if !w.wrote {
		w.wrote = true
		w.failed = err
		close(w.ready)
	}
	w.mu.Unlock()
	_ = w.pipe.CloseWithError(err)
}

// body is the response body: closing it ends the handler's context and
// makes its further writes fail.
type body struct {
	pipe   *io.PipeReader
	cancel context.CancelFunc
}

func (b *body) Read(p []byte) (int, error) { return b.pipe.Read(p) }

func (b *body) Close() error {
	b.cancel()
	return b.pipe.Close()
}
