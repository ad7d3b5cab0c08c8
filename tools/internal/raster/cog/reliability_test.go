package cog

import (
	"bytes"
	"context"
	"errors"
	"image"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/faultinject"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
)

// layerClient is a stacclient behind a reliability layer whose transport
// is base: the production path of an asset range request.
func layerClient(t *testing.T, url string, base http.RoundTripper) *stacclient.Client {
	t.Helper()
	p := reliability.DefaultPolicy()
	p.BackoffBase, p.RetryAfterCap, p.CacheTTL = time.Millisecond, 10*time.Millisecond, 0
	logger := zerolog.Nop()
	layer := reliability.New(p, reliability.Options{Transport: base, Logger: &logger})
	c, err := stacclient.New(url, stacclient.Options{HTTPClient: layer.HTTPClient()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Range reads go through the reliability layer: at a 20 % per-attempt
// fault rate (5xx answers) a call of 13 range requests succeeds with
// probability 0.992^13 = 90 % with the layer's 3 attempts, 0.8^13 = 5.5 %
// without retries. The schedule is seeded, so the count is fixed.
func TestRangeReadsSurviveFaultsThroughTheLayer(t *testing.T) {
	file := readTestFile(t, "s2_u16_deflate_cog.tif")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "s2.tif", time.Time{}, bytes.NewReader(file))
	}))
	defer srv.Close()
	var call atomic.Int64
	inj, err := faultinject.New(faultinject.Plan{Seed: 26, Rate: 0.2,
		Mix: faultinject.EqualMix(faultinject.HTTP500, faultinject.HTTP502, faultinject.HTTP503, faultinject.HTTP504)},
		faultinject.WithKeyFunc(func(r *http.Request) (faultinject.Key, bool) {
			// One schedule per call and range: retries of a range are its next attempts.
			return faultinject.Key{Tool: "cog", Invocation: r.Header.Get("X-Test-Call") + " " + r.Header.Get("Range")}, true
		}))
	if err != nil {
		t.Fatal(err)
	}
	base := roundTripperFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("X-Test-Call", r.Context().Value(callKey{}).(string))
		return inj.RoundTripper(srv.Client().Transport).RoundTrip(r)
	})
	c := layerClient(t, srv.URL, base)
	want, _ := openFile(t, "testdata/s2_u16_deflate_cog.tif").ReadWindow(context.Background(), 0, image.Rect(0, 0, 200, 150), nil)
	const calls = 40
	ok := 0
	for i := range calls {
		ctx := context.WithValue(context.Background(), callKey{}, strconv.FormatInt(call.Add(1), 10))
		// Unmerged, so that each read is 12 tile requests plus the header's.
		f, err := Open(ctx, HTTPSource(c, srv.URL+"/s2.tif", "s2"), Options{MergeGap: -1, MaxMergeBytes: 1})
		if err != nil {
			if !strings.Contains(err.Error(), "retry_exhausted") {
				t.Fatalf("call %d: Open: %v", i, err)
			}
			continue
		}
		got, err := f.ReadWindow(ctx, 0, image.Rect(0, 0, 200, 150), nil)
		if err != nil {
			if !strings.Contains(err.Error(), "retry_exhausted") {
				t.Fatalf("call %d: ReadWindow: %v", i, err)
			}
			continue
		}
		ok++
		if got.Requests != 12 {
			t.Errorf("call %d: %d requests", i, got.Requests)
		}
		for k := range want.Bands[0] {
			if got.Bands[0][k] != want.Bands[0][k] {
				t.Fatalf("call %d: pixel %d differs", i, k)
			}
		}
	}
	faulted := 0
	for _, e := range inj.Journal().Records() {
		if e.Kind != faultinject.None {
			faulted++
		}
	}
	if faulted == 0 {
		t.Fatal("no fault was injected: the test proves nothing")
	}
	t.Logf("%d of %d calls of 13 range requests succeeded; %d attempts were faulted", ok, calls, faulted)
	if ok < calls*3/4 {
		t.Errorf("%d of %d calls succeeded; with the layer's retries about 90 %% should", ok, calls)
	}
}

type callKey struct{}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A server that ignores Range is read no further than the range (plus one
// byte), even behind the layer, which otherwise buffers up to 64 MiB.
func TestIgnoredRangeIsNotReadWholeBehindTheLayer(t *testing.T) {
	big := bytes.Repeat([]byte("II*\x00"), 4<<20) // 16 MiB
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "16777216")
		for i := 0; i < len(big); i += 64 << 10 {
			n, err := w.Write(big[i : i+64<<10])
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c := layerClient(t, srv.URL, srv.Client().Transport)
	_, err := c.FetchRange(context.Background(), srv.URL+"/big.tif", 0, 16<<10)
	if err == nil || !strings.Contains(err.Error(), "ignored the Range request") {
		t.Fatalf("FetchRange from a server ignoring Range = %v", err)
	}
	// The server may have written into socket buffers ahead of the reader;
	// what matters is that the client did not take the 16 MiB.
	if s := sent.Load(); s >= 16<<20 {
		t.Errorf("the whole 16 MiB body was sent and read")
	}
}

// A read stops when its call's context ends, even with range requests
// outstanding: the server holds every tile request until the client goes.
func TestReadWindowEndsWithTheCallOverHTTP(t *testing.T) {
	file := readTestFile(t, "s2_u16_deflate_cog.tif")
	arrived := make(chan struct{}, 64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "bytes=0-16383" { // a tile, not the header
			arrived <- struct{}{}
			<-r.Context().Done()
			return
		}
		http.ServeContent(w, r, "s2.tif", time.Time{}, bytes.NewReader(file))
	}))
	defer srv.Close()
	c := layerClient(t, srv.URL, srv.Client().Transport)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f, err := Open(ctx, HTTPSource(c, srv.URL+"/s2.tif", "s2"), Options{MergeGap: -1, MaxMergeBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-arrived
		cancel()
	}()
	_, err = f.ReadWindow(ctx, 0, image.Rect(0, 0, 200, 150), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ReadWindow after its call was cancelled = %v, want context.Canceled", err)
	}
}
