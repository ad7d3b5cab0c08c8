package bench

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"math"
	"net/http"
	"sync"
	"time"
)

// latencyModel is the upstream's answer time: log-normal, the usual shape
// of web service latency (a body around the median, a long right tail).
// P95 fixes the scale; Sigma the spread (0.5: p95 ≈ 2.3 × median,
// p99 ≈ 3.2 × median). The zero value means no added latency.
type latencyModel struct {
	P95   time.Duration
	Sigma float64
}

// z95 is the standard normal's 95th percentile.
const z95 = 1.6448536269514722

func (m latencyModel) median() time.Duration {
	return time.Duration(float64(m.P95) / math.Exp(z95*m.Sigma))
}

// sample maps a uniform u in (0, 1) to a latency through the inverse CDF,
// so a seeded u gives the same latency on every run.
func (m latencyModel) sample(u float64) time.Duration {
	if m.P95 <= 0 {
		return 0
	}
	z := math.Sqrt2 * math.Erfinv(2*u-1)
	return time.Duration(float64(m.median()) * math.Exp(m.Sigma*z))
}

// latencyHandler delays every request by a latency drawn from the model.
// The draw is a pure function of (seed, request key, how many times that
// key was seen), so the fault-free baseline and a faulted run with the same
// seed give each first attempt the same latency.
type latencyHandler struct {
	model latencyModel
	seed  uint64
	key   func(*http.Request) string
	next  http.Handler

	mu   sync.Mutex
	seen map[string]uint64
}

func newLatencyHandler(model latencyModel, seed uint64, key func(*http.Request) string, next http.Handler) *latencyHandler {
	return &latencyHandler{model: model, seed: seed, key: key, next: next, seen: map[string]uint64{}}
}

func (h *latencyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.model.P95 > 0 {
		k := h.key(r)
		h.mu.Lock()
		h.seen[k]++
		n := h.seen[k]
		h.mu.Unlock()
		if !sleepCtx(r.Context(), h.model.sample(uniformFrom(h.seed, k, n))) {
			return // the client gave up while we were "working"
		}
	}
	h.next.ServeHTTP(w, r)
}

// uniformFrom hashes (seed, key, n) to a float in the open interval (0, 1).
func uniformFrom(seed uint64, key string, n uint64) float64 {
	f := fnv.New64a()
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], seed)
	binary.LittleEndian.PutUint64(buf[8:], n)
	_, _ = f.Write(buf[:])
	_, _ = f.Write([]byte(key))
	return (float64(mix64(f.Sum64())>>11) + 0.5) / (1 << 53)
}

// mix64 is the splitmix64 finalizer: FNV alone leaves neighbouring keys
// with correlated high bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
