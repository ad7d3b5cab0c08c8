package reliability

import (
	"context"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Progress tells a caller waiting on several requests at once (a search
// of several catalogs, adr/0035) whether one of them is still alive: when
// its catalog last answered an attempt (any status: a 503 is an answer)
// and, when that answer is to be retried, until when the retry's backoff
// runs. A request whose attempts keep failing and being retried is making
// progress; one whose only attempt has been out for long, with no answer,
// is stuck. The layer fills it in for the requests sent with the context
// WatchProgress returns; reading it never blocks them.
type Progress struct {
	mu        sync.Mutex
	responded bool      // an attempt got an HTTP response
	alive     time.Time // the latest sign of life, plus the backoff before the retry it led to
}

type progressKey struct{}

// WatchProgress returns ctx with p attached: the layer notes in p what the
// attempts of requests sent with it answered.
func WatchProgress(ctx context.Context, p *Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

func progressFrom(ctx context.Context) *Progress {
	p, _ := ctx.Value(progressKey{}).(*Progress)
	return p
}

// noteAnswer records an attempt that got an HTTP response, whatever its
// status.
func (p *Progress) noteAnswer(at time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.responded = true
	if at.After(p.alive) {
		p.alive = at
	}
}

// noteRetry records a failed attempt that reached the catalog (an error
// answer, a connection reset mid-answer: not a refused connection) and is
// retried after wait: the request is alive until the retry is sent.
func (p *Progress) noteRetry(at time.Time, wait time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if t := at.Add(wait); t.After(p.alive) {
		p.alive = t
	}
}

// LastSign is the latest moment the requests showed they were alive: an
// attempt answered then, or a retry's backoff ends then. ok is false
// before any such sign.
func (p *Progress) LastSign() (at time.Time, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.alive, !p.alive.IsZero()
}

// Responded reports whether any attempt got an HTTP response.
func (p *Progress) Responded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.responded
}

// AnswerTime is the q-quantile (0 < q ≤ 1) of host's recent answer times
// for requests like method and path (searches, items, landing pages … are
// kept apart: see operationOf), from the same window the hedge delay is
// drawn from, and how many answers it holds. A host the layer keeps no
// state for gives 0, 0; nothing is created.
func (l *Layer) AnswerTime(host, method, path string, q float64) (time.Duration, int) {
	h := l.hosts.peek(host)
	if h == nil {
		return 0, 0
	}
	w := &h.latency[operationOf(method, path)]
	w.mu.Lock()
	sorted := slices.Clone(w.samples[:w.filled])
	w.mu.Unlock()
	if len(sorted) == 0 {
		return 0, 0
	}
	slices.Sort(sorted)
	rank := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(0, rank), len(sorted)-1)], len(sorted)
}

// SearchAnswerTime is AnswerTime for a host's item searches (POST or GET
// /search).
func (l *Layer) SearchAnswerTime(host string, q float64) (time.Duration, int) {
	return l.AnswerTime(host, http.MethodPost, "/search", q)
}
