package reliability

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// countingBody is a limit-byte body (prefix, then spaces) that adds what
// is read from it to read.
type countingBody struct {
	prefix []byte
	read   *atomic.Int64
	limit  int64
	off    int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.off >= b.limit {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), b.limit-b.off)]
	for i := range p {
		if pos := b.off + int64(i); pos < int64(len(b.prefix)) {
			p[i] = b.prefix[pos]
		} else {
			p[i] = ' '
		}
	}
	b.off += int64(len(p))
	b.read.Add(int64(len(p)))
	return len(p), nil
}

func (b *countingBody) Close() error { return nil }

// TestErrorBodiesAreReadOnlyTo64KiB: a 10 MB 500 answer retried three
// times costs three 64 KiB reads, not 30 MB, and the denial still carries
// the catalog's message from the start of the body.
func TestErrorBodiesAreReadOnlyTo64KiB(t *testing.T) {
	const size = 10 << 20
	var read atomic.Int64 // bytes read from every body served
	p := noCache()
	p.BackoffBase = 0
	tl := newTestLayer(t, p, func(int, *http.Request) (*http.Response, error) {
		resp := answer(500, "")
		resp.Body = &countingBody{prefix: []byte(`{"description":"the index is rebuilding"}`), read: &read, limit: size}
		resp.ContentLength = size
		return resp, nil
	})
	_, _, err := tl.get("search_items", "/v1/search")
	total := read.Load()
	var d *Denial
	if !errors.As(err, &d) || d.Code != CodeRetryExhausted || d.Attempts != 3 {
		t.Fatalf("error %v, want retry_exhausted after 3 attempts", err)
	}
	if total > 3*(errorBodyLimit+bodyChunk) {
		t.Errorf("read %d bytes of three 10 MB error bodies, want at most 3 × 64 KiB", total)
	}
	if d.LastMessage != "the index is rebuilding" {
		t.Errorf("last message %q, want the catalog's description from the body's start", d.LastMessage)
	}
}

func TestReadBodyLimits(t *testing.T) {
	tl := newTestLayer(t, noCache(), always(200, "{}"))
	b := tl.bodies
	ctx := context.Background()
	data := bytes.Repeat([]byte("x"), 200_000)
	for _, c := range []struct {
		name          string
		body          []byte
		contentLength int64
		limit         int64
		truncate      bool
		want          int // bytes returned; -1: too large
	}{
		{"known length under the limit", data[:1000], 1000, 4096, false, 1000},
		{"unknown length, several chunks", data, -1, 1 << 20, false, len(data)},
		{"exactly the limit", data[:4096], -1, 4096, false, 4096},
		{"one byte over", data[:4097], -1, 4096, false, -1},
		{"declared over the limit", data[:10], 5000, 4096, false, -1},
		{"longer than declared", data[:3000], 1000, 4096, false, 3000},
		{"empty", nil, 0, 4096, false, 0},
		{"error body truncated", data, -1, errorBodyLimit, true, errorBodyLimit},
	} {
		got, err := b.read(ctx, bytes.NewReader(c.body), c.contentLength, c.limit, c.truncate)
		switch {
		case c.want == -1:
			if !errors.As(err, new(*bodyTooLargeError)) {
				t.Errorf("%s: %d bytes, %v; want a too-large error", c.name, len(got), err)
			}
		case err != nil || len(got) != c.want || !bytes.Equal(got, c.body[:c.want]):
			t.Errorf("%s: %d bytes, %v; want the first %d", c.name, len(got), err, c.want)
		}
	}
	if n := testutil.ToFloat64(tl.metrics.bodyBytesReserved); n != 0 {
		t.Errorf("%v bytes still reserved after every read ended", n)
	}
}

// TestBodyTooLargeSaysSo: an answer over the body cap did come back; the
// denial says it was too large and how large the cap is, not that no HTTP
// answer came.
func TestBodyTooLargeSaysSo(t *testing.T) {
	p := noCache()
	p.MaxBodyBytes = 2048
	tl := newTestLayer(t, p, always(200, strings.Repeat("x", 5000)))
	_, _, err := tl.get("search_items", "/v1/search")
	var d *Denial
	if !errors.As(err, &d) {
		t.Fatalf("error %v, want a denial", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "No HTTP answer") || !strings.Contains(msg, "larger than the 2 KiB") || !strings.Contains(msg, "ask for less") {
		t.Errorf("denial %q; want it to say the answer was larger than the 2 KiB cap and to ask for less", msg)
	}
}

// TestBodyBudgetQueuesThenRefusesClearly: with the budget spent, a read
// waits for it (and proceeds when bytes come back); one that waits until
// its attempt deadline is refused with an overloaded denial naming the
// setting, and the refusal does not count against the catalog's breaker.
func TestBodyBudgetQueuesThenRefusesClearly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := noCache()
		p.MaxBodyBytes = 64 << 10
		p.BodyBudgetBytes = 64 << 10
		p.MaxAttempts = 1
		tl := newTestLayer(t, p, always(200, strings.Repeat("x", 1000)))
		ctx := context.Background()
		if err := tl.bodies.reserve(ctx, p.BodyBudgetBytes, false); err != nil {
			t.Fatal(err)
		}
		// Queued: the budget comes back after 1 s, well inside the attempt.
		go func() {
			time.Sleep(time.Second)
			tl.bodies.release(p.BodyBudgetBytes)
		}()
		start := time.Now()
		if _, status, err := tl.get("search_items", "/v1/search"); err != nil || status != 200 {
			t.Fatalf("queued read: %d %v, want it served once the budget came back", status, err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("the queued read waited %v, want exactly until the release (1s)", waited)
		}

		// Refused: the budget stays spent past the attempt timeout.
		if err := tl.bodies.reserve(ctx, p.BodyBudgetBytes, false); err != nil {
			t.Fatal(err)
		}
		_, _, err := tl.get("search_items", "/v1/search")
		tl.bodies.release(p.BodyBudgetBytes)
		var d *Denial
		if !errors.As(err, &d) || d.Code != CodeOverloaded || !strings.Contains(err.Error(), "STAC_MCP_BODY_BUDGET_BYTES") {
			t.Fatalf("read with the budget spent: %v; want an overloaded denial naming STAC_MCP_BODY_BUDGET_BYTES", err)
		}
		if sums := tl.host(testHost).breaker.(*breaker).outcomes.sums(time.Now()); sums[evAttempt] != 1 || sums[evAttemptFailed] != 0 {
			t.Errorf("breaker outcomes %v; the refusal must not count against the catalog", sums)
		}
		if got := testutil.ToFloat64(tl.metrics.bodyBudgetRefused); got != 1 {
			t.Errorf("body_budget_refusals_total %v, want 1", got)
		}
	})
}

func TestRangeLength(t *testing.T) {
	for v, want := range map[string]int64{"bytes=0-16383": 16384, "bytes=100-100": 1, "bytes=5-": -1, "bytes=-5": -1,
		"bytes=0-1,5-6": -1, "items=0-1": -1, "": -1, "bytes=9-3": -1} {
		n, ok := rangeLength(v)
		if (want < 0) == ok || (ok && n != want) {
			t.Errorf("rangeLength(%q) = %d, %v; want %d", v, n, ok, want)
		}
	}
}
