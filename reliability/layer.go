package reliability

import (
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/singleflight"

	"github.com/stacmcp/stac-mcp/reliability/inmemory"
	"github.com/stacmcp/stac-mcp/reliability/origin"
)

// Options are the process-wide collaborators of a Layer.
type Options struct {
	// Transport is the base RoundTripper (nil: a dedicated transport of our
	// own, never the shared http.DefaultTransport pool). Tests put fault
	// injectors or in-memory servers here.
	Transport http.RoundTripper
	// Logger receives the retry and tool events (nil: JSON on stderr at warn
	// level, i.e. give-ups, timeouts and failed calls only; cmd passes the
	// logger built by NewLogger). It must not write to stdout.
	Logger *zerolog.Logger
	// Rand drives backoff jitter and breaker jitter (nil: randomly seeded).
	// Tests pass rand.New(rand.NewPCG(seed, seed2)) for reproducible waits.
	Rand *rand.Rand
	// Now is the clock for the breaker, the cache, Retry-After dates and the
	// health windows (nil: time.Now). Deadlines and backoff sleeps use the
	// runtime clock, which testing/synctest virtualises.
	Now func() time.Time
	// Network says which addresses the dedicated transport may connect to
	// (zero: any). It is applied by the dialer of the dedicated transport,
	// so it has no effect when Transport is set.
	Network NetworkPolicy
	// Shared, when set, holds the state the replicas of a deployment
	// share: response cache, cross-replica coalescing, retry budgets and
	// circuit breakers (reliability/sharedstate on Redis; adr/0016). nil
	// keeps all of it in this process. While the store does not answer,
	// the layer uses its own state.
	Shared SharedStore
	// Advice words the Next of every denial the layer builds: what the
	// model should do about it (tools/advice). nil: denials carry no advice.
	Advice Advisor
}

// Layer is the process-wide reliability state shared by all sessions.
type Layer struct {
	policy  Policy
	log     zerolog.Logger
	rng     *lockedRand
	now     func() time.Time
	metrics *metrics
	cache   *responseCache
	flight  singleflight.Group

	client        *http.Client     // handed to stacclient; retries inside
	attemptClient *http.Client     // one attempt per Do; used by go-retryablehttp
	guard         *dialGuard       // the NetworkPolicy, in the dedicated transport's dialer
	inproc        *inmemory.Router // in-process catalogs, served without a socket (Mount)

	shared *sharedState // nil without Options.Shared
	advice Advisor      // Options.Advice

	hosts  *hostTable  // per-host state, bounded by Policy.MaxHosts (hosts.go)
	labels hostLabels  // metrics host labels, bounded by maxHostLabels
	bodies *bodyBudget // bytes of upstream bodies being read, bounded by Policy.BodyBudgetBytes
}

// hostState is everything kept per catalog host.
type hostState struct {
	name     string
	label    string      // its host label on /metrics: name, or "other" past maxHostLabels
	refs     int         // requests holding it; guarded by hostTable.mu
	budget   hostBudget  // *retryBudget, or *sharedBudget with a shared store
	breaker  hostBreaker // *breaker, or *sharedBreaker with a shared store
	bulkhead *bulkhead
	counts   *slidingCounts // Health's five-minute event counts
	latency  latencyWindows // answered attempts per operation, for the hedge delay
	slow     slowAnswers    // answers that came after the attempt timeout
}

// New builds a Layer. A zero Policy means DefaultPolicy; in a partial
// policy the fields whose zero value means nothing (timeouts, attempts,
// bulkhead, body cap, host cap, body budget) take their defaults, while CacheTTL, BackoffBase,
// RetryAfterCap and MinUsefulAttempt are used as given because 0 is a
// meaningful setting for them. A policy that then fails Validate is a
// programming error (PolicyFromEnv validates user input), so New panics with
// the validation message rather than run with it.
func New(p Policy, opts Options) *Layer {
	if p == (Policy{}) {
		p = DefaultPolicy()
	}
	p = p.withDefaults()
	if err := p.Validate(); err != nil {
		panic(err)
	}
	l := &Layer{
		policy:  p,
		rng:     newLockedRand(opts.Rand),
		now:     opts.Now,
		metrics: newMetrics(),
		cache:   newResponseCache(p.CacheTTL, p.CacheMaxBytes),
		guard:   newDialGuard(opts.Network),
		advice:  opts.Advice,
	}
	l.hosts = newHostTable(p.MaxHosts, l.newHostState, l.forgetHost)
	l.bodies = newBodyBudget(p.BodyBudgetBytes, l.metrics)
	if l.now == nil {
		l.now = time.Now
	}
	if opts.Logger != nil {
		l.log = *opts.Logger
	} else {
		l.log = zerolog.New(CapLogLines(os.Stderr)).Level(zerolog.WarnLevel).With().Timestamp().Logger()
	}
	if opts.Shared != nil {
		// What this process cached while the store was away may predate
		// writes made through other replicas: it goes when the store is back.
		l.shared = newSharedState(opts.Shared, l.now, l.log, l.metrics, l.cache.clear)
	}
	base := opts.Transport
	if base == nil {
		base = newDedicatedTransport(p, l.guard)
	}
	// In-process catalogs sit under the attempt transport, so their
	// requests get the same attempts, timeouts, metrics and body caps as a
	// remote catalog's, and never a socket (adr/0025).
	l.inproc = inmemory.NewRouter()
	once := freshConnections(base)
	if once != nil {
		once = l.inproc.Wrap(once)
	}
	base = l.inproc.Wrap(base)
	// The attempt transport has no CloseIdleConnections method, so the
	// library's CloseIdleConnections calls on every failure path cannot
	// churn the connection pool.
	var attempt http.RoundTripper = &attemptTransport{layer: l, base: base, once: once}
	if p.Hedge {
		attempt = &hedgeTransport{layer: l, attempt: attempt}
	}
	// The attempt client follows redirects itself, so CheckRedirect here
	// is the only place that sees them: it strips credentials on any change
	// of origin (stacclient's own redirect policy never runs behind the
	// layer).
	l.attemptClient = &http.Client{Transport: attempt, CheckRedirect: origin.CheckRedirect}
	l.client = &http.Client{Transport: &layerTransport{layer: l}}
	return l
}

// freshConnections is base without connection reuse, for requests sent at
// most once (sendOnce), or nil when base is not an *http.Transport.
// net/http replays a request on its own when a reused keep-alive
// connection dies before the answer and the request looks idempotent,
// which an Idempotency-Key header makes even a bodiless DELETE look. A
// write on a new connection is never replayed; writes are rare enough
// that the extra handshake does not matter.
func freshConnections(base http.RoundTripper) http.RoundTripper {
	t, ok := base.(*http.Transport)
	if !ok {
		return nil
	}
	once := t.Clone()
	once.DisableKeepAlives = true
	return once
}

// newDedicatedTransport is a pool of our own with connect and TLS limits
// well inside the attempt timeout, whose dialer applies the guard.
func newDedicatedTransport(p Policy, guard *dialGuard) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = guard.wrap(&net.Dialer{Timeout: min(2*time.Second, p.AttemptTimeout), KeepAlive: 30 * time.Second})
	t.TLSHandshakeTimeout = min(2*time.Second, p.AttemptTimeout)
	t.MaxIdleConnsPerHost = p.BulkheadMax
	return t
}

// Mount serves h in memory under host (a name under inmemory.Domain, e.g.
// demo.stac-mcp.invalid): requests of the layer's client for that host
// reach h through the whole layer without any connection (adr/0025).
// unmount removes it.
func (l *Layer) Mount(host string, h http.Handler) (unmount func(), err error) {
	return l.inproc.Mount(host, h)
}

// Policy returns the layer's policy.
func (l *Layer) Policy() Policy { return l.policy }

// HTTPClient is the client every upstream request must use. Retries,
// timeouts, breaker, bulkhead, coalescing and caching all happen inside it.
// Requests made outside Run get the same policy under tool name "unknown".
func (l *Layer) HTTPClient() *http.Client { return l.client }

// PinHosts marks the hosts of the operator's configured catalogs: their
// state is never evicted and does not count against Policy.MaxHosts, and
// they always have their own host label on /metrics.
func (l *Layer) PinHosts(names ...string) {
	l.hosts.pin(names...)
	for _, n := range names {
		if n != "" {
			l.labels.label(n, true)
		}
	}
}

// acquireHost returns name's state and holds it until releaseHost, so that
// it is not evicted while a request uses it; a *hostLimitError when the
// table is full of hosts it must keep.
func (l *Layer) acquireHost(name string) (*hostState, error) { return l.hosts.acquire(name) }

func (l *Layer) releaseHost(h *hostState) { l.hosts.release(h) }

// newHostState builds a host's state; the host table calls it under its lock.
func (l *Layer) newHostState(name string, pinned bool) *hostState {
	label := l.labels.label(name, pinned)
	h := &hostState{
		name:     name,
		label:    label,
		bulkhead: newBulkhead(l.policy.BulkheadMax),
		counts:   newSlidingCounts(healthWindow, healthBuckets),
	}
	// The gauges describe one host; hosts sharing the "other" label have
	// no breaker or budget of their own there (get_service_health has them).
	ownLabel := label != otherHostLabel
	budgetChanged := func(tokens int) {
		if ownLabel {
			l.metrics.budgetTokens.WithLabelValues(label).Set(float64(tokens))
		}
	}
	breakerChanged := func(state string) {
		if ownLabel {
			l.metrics.breakerState.WithLabelValues(label).Set(breakerStateValue(state))
		}
		l.log.Warn().Str("event", "breaker_"+state).Str("host", name).Msg("circuit breaker changed state")
	}
	budget := newRetryBudget(budgetChanged)
	breaker := newBreaker(l.now, l.rng, breakerChanged)
	h.budget, h.breaker = budget, breaker
	if l.shared != nil {
		// The local budget and breaker stand in while the store is away;
		// the gauges follow whichever is in force.
		h.budget = &sharedBudget{host: name, s: l.shared, local: budget, onChange: budgetChanged, tokens: budgetCapacity}
		h.breaker = &sharedBreaker{host: name, s: l.shared, local: breaker, rules: l.sharedBreakerRules(), layer: l,
			onChange: breakerChanged, view: BreakerView{State: BreakerClosed}}
	}
	if ownLabel {
		l.metrics.breakerState.WithLabelValues(label).Set(0)
		l.metrics.budgetTokens.WithLabelValues(label).Set(budgetCapacity)
	}
	l.metrics.trackedHosts.Inc()
	return h
}

// forgetHost is called when the host table evicts h: its gauges go with
// it (a later request starts a new state and sets them again).
func (l *Layer) forgetHost(h *hostState) {
	if h.label != otherHostLabel {
		l.metrics.breakerState.DeleteLabelValues(h.label)
		l.metrics.budgetTokens.DeleteLabelValues(h.label)
	}
	l.metrics.trackedHosts.Dec()
	l.metrics.evictedHosts.Inc()
	l.log.Debug().Str("event", "host_evicted").Str("host", h.name).Msg("forgot the state of the least recently used catalog host")
}
