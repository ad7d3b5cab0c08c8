package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer collects log lines from concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// events parses the JSON log lines.
func (b *syncBuffer) events(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func (b *syncBuffer) named(t *testing.T, event string) []map[string]any {
	var out []map[string]any
	for _, e := range b.events(t) {
		if e["event"] == event {
			out = append(out, e)
		}
	}
	return out
}

// fakeUpstream is an in-memory catalog: respond decides the answer to hit n
// (1-based). It records every request body and header.
type fakeUpstream struct {
	mu      sync.Mutex
	hits    int
	bodies  [][]byte
	headers []http.Header
	paths   []string
	respond func(n int, req *http.Request) (*http.Response, error)
}

func (f *fakeUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body.Close()
	}
	f.mu.Lock()
	f.hits++
	n := f.hits
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, req.Header.Clone())
	f.paths = append(f.paths, req.URL.Path)
	f.mu.Unlock()
	return f.respond(n, req)
}

func (f *fakeUpstream) hitCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func answer(status int, body string, header ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}
}

func always(status int, body string, header ...string) func(int, *http.Request) (*http.Response, error) {
	return func(int, *http.Request) (*http.Response, error) { return answer(status, body, header...), nil }
}

// hang blocks until the attempt is cancelled, like a server that never answers.
func hang(_ int, req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, req.Context().Err()
}

type testLayer struct {
	*Layer
	logs *syncBuffer
	up   *fakeUpstream
}

func newTestLayer(t *testing.T, p Policy, respond func(int, *http.Request) (*http.Response, error)) *testLayer {
	t.Helper()
	logs := &syncBuffer{}
	logger := zerolog.New(logs).Level(zerolog.DebugLevel)
	up := &fakeUpstream{respond: respond}
	l := New(p, Options{Transport: up, Logger: &logger, Rand: rand.New(rand.NewPCG(1, 2)), Advice: testAdvice})
	return &testLayer{Layer: l, logs: logs, up: up}
}

// noCache is the default policy with the cache off, so that repeated calls
// reach the upstream.
func noCache() Policy {
	p := DefaultPolicy()
	p.CacheTTL = 0
	return p
}

const testHost = "catalog.test"

// get runs one tool call that GETs path and reads the body.
func (tl *testLayer) get(tool, path string) (Receipt, int, error) {
	status := 0
	rc, err := tl.Run(context.Background(), tool, testHost, func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+path, nil)
		var err error
		status, _, err = tl.readThrough(req)
		return err
	})
	return rc, status, err
}

// readThrough sends req through the layer's client and reads the whole
// body, as a tool does.
func (tl *testLayer) readThrough(req *http.Request) (status int, body string, err error) {
	resp, err := tl.HTTPClient().Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func retriesOf(l *Layer, tool string) float64 {
	return testutil.ToFloat64(l.metrics.retries.WithLabelValues(tool))
}
func exhaustedOf(l *Layer, tool string) float64 {
	return testutil.ToFloat64(l.metrics.retryExhausted.WithLabelValues(tool))
}
func timeoutsOf(l *Layer, tool string) float64 {
	return testutil.ToFloat64(l.metrics.toolTimeouts.WithLabelValues(tool))
}

func testutilCounter(c interface{ Desc() *prometheus.Desc }) float64 {
	return testutil.ToFloat64(c.(prometheus.Collector))
}

type contextLike = context.Context

// getIn GETs path inside an existing tool call.
func (tl *testLayer) getIn(ctx context.Context, path string) (*http.Response, int, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+testHost+path, nil)
	resp, err := tl.HTTPClient().Do(req)
	if err != nil {
		return nil, 0, err
	}
	resp.Body.Close()
	return resp, resp.StatusCode, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// host returns name's state, creating it like a request would, for tests
// that inspect or prime one host's breaker, budget or windows.
func (l *Layer) host(name string) *hostState {
	h, err := l.acquireHost(name)
	if err != nil {
		panic(err)
	}
	l.releaseHost(h)
	return h
}
