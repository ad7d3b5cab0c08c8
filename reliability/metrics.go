package reliability

import (
	"errors"
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are registered on the Layer's own registry, never the global one,
// so that tests and several layers in one process do not collide.
type metrics struct {
	registry          *prometheus.Registry
	retries           *prometheus.CounterVec
	toolTimeouts      *prometheus.CounterVec
	retryExhausted    *prometheus.CounterVec
	attemptTimeouts   *prometheus.CounterVec
	toolCalls         *prometheus.CounterVec
	toolDuration      *prometheus.HistogramVec
	upstreamRequests  *prometheus.CounterVec
	breakerState      *prometheus.GaugeVec
	budgetTokens      *prometheus.GaugeVec
	cacheHits         *prometheus.CounterVec
	cacheMisses       *prometheus.CounterVec
	coalescedRequests *prometheus.CounterVec
	hedges            *prometheus.CounterVec
	pooledRetries     *prometheus.CounterVec
	trackedHosts      prometheus.Gauge
	evictedHosts      prometheus.Counter
	bodyBytesReserved prometheus.Gauge
	bodyBudgetRefused prometheus.Counter

	sharedErrors *prometheus.CounterVec
	sharedUp     prometheus.Gauge

	idempotencyDuplicates *prometheus.CounterVec
	idempotencyConflicts  *prometheus.CounterVec
	writes                *prometheus.CounterVec
	replays               *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{registry: prometheus.NewRegistry()}
	// The Go runtime and process series (memory, goroutines, open file
	// descriptors, CPU) are what an operator checks first when a shared
	// server misbehaves.
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		m.registry.MustRegister(c)
		return c
	}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		m.registry.MustRegister(g)
		return g
	}
	m.retries = counter("retries_attempted_total", "Upstream retries started (attempts after the first).", "tool_name")
	m.toolTimeouts = counter("timeouts_total", "Tool calls stopped by the tool timeout.", "tool_name")
	m.retryExhausted = counter("retry_exhausted_total", "Upstream requests that failed on every allowed attempt.", "tool_name")
	m.attemptTimeouts = counter("attempt_timeouts_total", "Single upstream attempts stopped by the attempt timeout.", "tool_name")
	m.toolCalls = counter("tool_calls_total", "Tool calls by outcome: ok, error, or the denial code.", "tool_name", "outcome")
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tool_duration_seconds",
		Help:    "Wall time of one tool call, retries and waits included.",
		Buckets: []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30},
	}, []string{"tool_name"})
	m.registry.MustRegister(m.toolDuration)
	m.upstreamRequests = counter("upstream_requests_total", "Upstream HTTP attempts by host and status class (2xx..5xx, error).", "host", "status_class")
	m.breakerState = gauge("breaker_state", "Circuit breaker state per host: 0 closed, 1 half-open, 2 open.", "host")
	m.budgetTokens = gauge("retry_budget_tokens", "Retry budget tokens left per host (capacity 500).", "host")
	m.cacheHits = counter("cache_hits_total", "Reads answered from the response cache.", "tool_name")
	m.cacheMisses = counter("cache_misses_total", "Cacheable reads not found in the response cache.", "tool_name")
	m.coalescedRequests = counter("coalesced_requests_total", "Reads that shared an identical in-flight request.", "tool_name")
	m.replays = counter("connection_replays_total", "Attempts net/http sent again at once because the reused keep-alive connection they went out on died before the answer's first byte (reads only; not retries: no backoff, no budget).", "tool_name")
	m.pooledRetries = counter("pooled_retries_total", "Retries past the policy's attempts, drawn from the pool of a call made of many reads (a pixel tool's, adr/0030); also in retries_attempted_total.", "tool_name")
	m.hedges = counter("hedged_attempts_total", "Hedged reads: second attempts sent while the first was still out (Policy.Hedge).", "tool_name")
	m.trackedHosts = prometheus.NewGauge(prometheus.GaugeOpts{Name: "tracked_hosts", Help: "Catalog hosts whose reliability state is kept (bounded by STAC_MCP_MAX_HOSTS plus the configured catalogs)."})
	m.evictedHosts = prometheus.NewCounter(prometheus.CounterOpts{Name: "evicted_hosts_total", Help: "Idle catalog hosts whose reliability state was forgotten to stay within STAC_MCP_MAX_HOSTS."})
	m.bodyBytesReserved = prometheus.NewGauge(prometheus.GaugeOpts{Name: "upstream_body_bytes_in_flight", Help: "Bytes reserved by upstream response bodies being read (bounded by STAC_MCP_BODY_BUDGET_BYTES)."})
	m.bodyBudgetRefused = prometheus.NewCounter(prometheus.CounterOpts{Name: "body_budget_refusals_total", Help: "Upstream attempts refused because the process-wide budget of body bytes being read was spent."})
	m.registry.MustRegister(m.trackedHosts, m.evictedHosts, m.bodyBytesReserved, m.bodyBudgetRefused)
	m.sharedErrors = counter("shared_state_errors_total", "Shared-state (Redis) operations that failed or timed out; the layer used this process's own state for them.", "op")
	m.sharedUp = prometheus.NewGauge(prometheus.GaugeOpts{Name: "shared_state_up", Help: "1 while the shared state (STAC_MCP_REDIS_URL) answers, 0 while this replica uses its own state; absent without a shared store."})
	m.idempotencyDuplicates = counter("idempotency_duplicates_total", "Write calls answered with the stored outcome of an earlier call with the same idempotency key (nothing sent).", "tool_name")
	m.idempotencyConflicts = counter("idempotency_conflicts_total", "Write calls refused because their idempotency key was used with different arguments.", "tool_name")
	m.writes = counter("writes_total", "Write calls that decided an outcome, by outcome (ok, error or the denial code) and replay decision (executed, looked-up, replayed; empty when nothing could be decided).", "tool_name", "outcome", "replay_decision")
	return m
}

// countWrite counts a write call in the idempotency and write metrics.
func (m *metrics) countWrite(tool string, rc Receipt, err error, outcome string) {
	if rc.SideEffect == SideEffectRead {
		return
	}
	var d *Denial
	switch {
	case rc.Duplicate:
		m.idempotencyDuplicates.WithLabelValues(tool).Inc()
	case errors.As(err, &d) && d.Code == CodeIdempotencyConflict:
		m.idempotencyConflicts.WithLabelValues(tool).Inc()
	case errors.As(err, &d) && d.Code == CodeInFlight:
		// Another call owns the write; it is counted there.
	default:
		m.writes.WithLabelValues(tool, outcome, rc.ReplayDecision).Inc()
	}
}

func breakerStateValue(state string) float64 {
	switch state {
	case BreakerHalfOpen:
		return 1
	case BreakerOpen:
		return 2
	}
	return 0
}

// Registry is the layer's own Prometheus registry.
func (l *Layer) Registry() *prometheus.Registry { return l.metrics.registry }

// MetricsHandler serves the registry in the Prometheus text format, for
// /metrics on STAC_MCP_METRICS_ADDR.
func (l *Layer) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(l.metrics.registry, promhttp.HandlerOpts{Registry: l.metrics.registry})
}

// touch creates a tool's required series at 0, so that dashboards and
// alerts see retries_attempted_total, timeouts_total and
// retry_exhausted_total from the tool's first call, not its first failure.
func (m *metrics) touch(tool string) {
	m.retries.WithLabelValues(tool)
	m.replays.WithLabelValues(tool)
	m.toolTimeouts.WithLabelValues(tool)
	m.retryExhausted.WithLabelValues(tool)
}

// DeclareTools creates every per-tool series at 0 for the named tools (the
// tools inventory), each tool_calls_total outcome included, so /metrics is
// complete from the start: a rate() or an alert on a series that does not
// exist yet sees nothing, not zero.
func (l *Layer) DeclareTools(names ...string) {
	m := l.metrics
	for _, tool := range names {
		m.touch(tool)
		for _, outcome := range toolOutcomes() {
			m.toolCalls.WithLabelValues(tool, outcome)
		}
		m.attemptTimeouts.WithLabelValues(tool)
		m.toolDuration.WithLabelValues(tool)
		m.cacheHits.WithLabelValues(tool)
		m.cacheMisses.WithLabelValues(tool)
		m.coalescedRequests.WithLabelValues(tool)
		m.hedges.WithLabelValues(tool)
		m.pooledRetries.WithLabelValues(tool)
	}
}

// toolOutcomes are the outcome label values of tool_calls_total: ok, error
// and every denial code.
func toolOutcomes() []string {
	out := []string{"ok", "error"}
	for code := range codeSummaries {
		out = append(out, code)
	}
	slices.Sort(out[2:])
	return out
}
