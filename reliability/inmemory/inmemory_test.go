package inmemory

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// refusingTransport stands for the network: the tests fail if anything
// reaches it.
type refusingTransport struct{ t *testing.T }

func (r refusingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r.t.Errorf("request for %s reached the network", req.URL)
	return nil, errors.New("network disabled")
}

func routedClient(t *testing.T, host string, h http.Handler) *http.Client {
	t.Helper()
	r := NewRouter()
	unmount, err := r.Mount(host, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unmount)
	return &http.Client{Transport: r.Wrap(refusingTransport{t})}
}

func TestTransportServesHandlerWithoutNetwork(t *testing.T) {
	c := routedClient(t, "demo."+Domain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Seen", r.Method+" "+r.RequestURI+" "+r.Host+" "+string(body))
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, "hello")
	}))
	resp, err := c.Post("http://demo."+Domain+"/collections?x=1", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || string(got) != "hello" || resp.Header.Get("X-Seen") != "POST /collections?x=1 demo.stac-mcp.invalid {}" {
		t.Errorf("got %s %q, X-Seen %q", resp.Status, got, resp.Header.Get("X-Seen"))
	}
}

// A reserved name that nothing serves is refused, never handed to the
// network (which would resolve it, or send it to a proxy).
func TestUnmountedReservedHostNeverReachesNetwork(t *testing.T) {
	c := routedClient(t, "demo."+Domain, http.NotFoundHandler())
	for _, u := range []string{"http://other." + Domain + "/", "http://demo." + Domain + ":8080/", "https://x.invalid/", "http://DEMO.stac-mcp.invalid.:81/"} {
		if _, err := c.Get(u); !errors.Is(err, ErrNotServed) {
			t.Errorf("GET %s: %v, want ErrNotServed", u, err)
		}
	}
	if _, err := c.Get("http://DEMO.stac-mcp.invalid./x"); err != nil {
		t.Errorf("another spelling of the mounted host: %v", err)
	}
}

// A remote catalog may not redirect a request (a 307 keeps the method and
// body of a write) into an in-process catalog.
func TestRedirectIntoMountedHostRefused(t *testing.T) {
	hits := 0
	r := NewRouter()
	unmount, _ := r.Mount("local."+Domain, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits++ }))
	defer unmount()
	remote := Transport(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "http://local."+Domain+"/collections", http.StatusTemporaryRedirect)
	}))
	c := &http.Client{Transport: r.Wrap(remote)}
	_, err := c.Post("http://remote.example/collections", "application/json", strings.NewReader("{}"))
	if !errors.Is(err, ErrRedirectedIn) || hits != 0 {
		t.Errorf("redirect into an in-process catalog: err %v, handler hits %d", err, hits)
	}
}

func TestMountRefusesNamesOutsideDomain(t *testing.T) {
	r := NewRouter()
	for _, h := range []string{"127.0.0.1", "example.com", "stac-mcp.invalid.example.com", "evil-stac-mcp.invalid"} {
		if _, err := r.Mount(h, http.NotFoundHandler()); err == nil {
			t.Errorf("Mount(%q) accepted", h)
		}
	}
	unmount, err := r.Mount("a."+Domain, http.NotFoundHandler())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Mount("A."+Domain, http.NotFoundHandler()); err == nil {
		t.Error("the same host mounted twice")
	}
	unmount()
	unmount()
	if _, err := r.Mount("a."+Domain, http.NotFoundHandler()); err != nil {
		t.Errorf("after unmount: %v", err)
	}
}

// The answer streams: the handler blocks on a write until the client
// reads, so a large answer is never buffered, and closing the body ends
// the handler's context and its writes.
func TestTransportStreamsAndStopsHandlerOnClose(t *testing.T) {
	ended := make(chan error, 1)
	c := routedClient(t, "demo."+Domain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		for {
			if _, err := w.Write(chunk); err != nil {
				<-r.Context().Done()
				ended <- err
				return
			}
		}
	}))
	resp, err := c.Get("http://demo." + Domain + "/big")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(resp.Body, make([]byte, 100<<10)); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if err := <-ended; err == nil {
		t.Error("the handler's write succeeded after the client closed the body")
	}
}

func TestTransportContextEndsHandler(t *testing.T) {
	started := make(chan struct{})
	c := routedClient(t, "demo."+Domain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done() // faultinject's Hang
	}))
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://demo."+Domain+"/", nil)
	if _, err := c.Do(req); !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

// faultinject's connection faults panic with http.ErrAbortHandler when the
// writer cannot be hijacked: before the header it is a failed round trip,
// after it a failed body read, both a connection reset (retryable).
func TestTransportAbortIsConnectionReset(t *testing.T) {
	c := routedClient(t, "demo."+Domain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mid" {
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		if _, _, err := http.NewResponseController(w).Hijack(); err == nil {
			t.Error("the in-memory writer can be hijacked")
		}
		panic(http.ErrAbortHandler)
	}))
	if _, err := c.Get("http://demo." + Domain + "/before"); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("abort before the header: %v, want ECONNRESET", err)
	}
	resp, err := c.Get("http://demo." + Domain + "/mid")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("abort mid-body: %v, want ECONNRESET", err)
	}
}

func TestTransportShortBodyIsUnexpectedEOF(t *testing.T) {
	c := routedClient(t, "demo."+Domain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "10")
		_, _ = io.WriteString(w, "abc")
	}))
	resp, err := c.Get("http://demo." + Domain + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short body: %v", err)
	}
}

func TestTransportBoundsRequestBody(t *testing.T) {
	c := routedClient(t, "demo."+Domain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.Copy(io.Discard, r.Body)
		var tooLarge *http.MaxBytesError
		if !errors.As(err, &tooLarge) {
			t.Errorf("reading a body past MaxRequestBodyBytes: %v", err)
		}
	}))
	big := io.LimitReader(zeros{}, MaxRequestBodyBytes+1)
	resp, err := c.Post("http://demo."+Domain+"/", "application/octet-stream", big)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestReserved(t *testing.T) {
	for host, want := range map[string]bool{
		"demo.stac-mcp.invalid": true, "DEMO.STAC-MCP.INVALID.:80": true, "x.invalid": true, "invalid": true,
		"[::1]:80": false, "127.0.0.1:8080": false, "example.com": false, "invalid.example.com": false,
	} {
		if got := Reserved(host); got != want {
			t.Errorf("Reserved(%q) = %v, want %v", host, got, want)
		}
	}
}
