// Package reliability is the one wrapper every tool call and every upstream
// request goes through: deadline, retries with full-jitter backoff,
// Retry-After, per-host retry budget, circuit breaker, bulkhead, request
// coalescing and a short cache, with metrics and structured logs.
//
// TEMPORARY: this file is the interface contract with a pass-through
// implementation (timeout only). The reliability issue replaces the bodies.
package reliability

import (
	"context"
	"net/http"
	"time"
)

// Policy is the retry and timeout policy. Defaults come from DefaultPolicy;
// PolicyFromEnv overrides them from STAC_MCP_* variables.
type Policy struct {
	ToolTimeout    time.Duration // STAC_MCP_TOOL_TIMEOUT_SECS, 15 s
	AttemptTimeout time.Duration // STAC_MCP_ATTEMPT_TIMEOUT_SECS
	MaxAttempts    int           // STAC_MCP_MAX_ATTEMPTS, 3
	BackoffBase    time.Duration // STAC_MCP_BACKOFF_BASE_SECS, 0.4 s
	RetryAfterCap  time.Duration // STAC_MCP_RETRY_AFTER_CAP_SECS, 5 s
	CacheTTL       time.Duration // STAC_MCP_CACHE_TTL_SECS; 0 disables the cache
}

// DefaultPolicy is the documented policy.
func DefaultPolicy() Policy {
	return Policy{
		ToolTimeout:    15 * time.Second,
		AttemptTimeout: 5 * time.Second,
		MaxAttempts:    3,
		BackoffBase:    400 * time.Millisecond,
		RetryAfterCap:  5 * time.Second,
		CacheTTL:       30 * time.Second,
	}
}

// Options are the process-wide collaborators of a Layer.
type Options struct {
	// Transport is the base RoundTripper (nil: a dedicated clone of
	// http.DefaultTransport). Tests put fault injectors here.
	Transport http.RoundTripper
}

// Layer is the process-wide reliability state shared by all sessions.
type Layer struct {
	policy Policy
	client *http.Client
}

// New builds a Layer.
func New(p Policy, opts Options) *Layer {
	rt := opts.Transport
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &Layer{policy: p, client: &http.Client{Transport: rt}}
}

// Policy returns the layer's policy.
func (l *Layer) Policy() Policy { return l.policy }

// HTTPClient is the client every upstream request must use.
func (l *Layer) HTTPClient() *http.Client { return l.client }

// Receipt is what one tool call cost, attached to every result's _meta.
type Receipt struct {
	CorrelationID    string `json:"correlation_id"`
	Attempts         int    `json:"attempts"`
	Retries          int    `json:"retries"`
	UpstreamRequests int    `json:"upstream_requests"`
	ElapsedMS        int64  `json:"elapsed_ms"`
	CacheHit         bool   `json:"cache_hit"`
	CatalogHost      string `json:"catalog_host"`
}

// Run executes one tool call: it sets the tool deadline and the per-call
// record, calls fn, and returns the receipt. fn's error is returned as is,
// or as a *Denial when the layer gave up (timeout, retries exhausted, …).
func (l *Layer) Run(ctx context.Context, tool, catalogHost string, fn func(ctx context.Context) error) (Receipt, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, l.policy.ToolTimeout)
	defer cancel()
	err := fn(ctx)
	return Receipt{CatalogHost: catalogHost, ElapsedMS: time.Since(start).Milliseconds()}, err
}

// Denial is a typed give-up: why the layer stopped and what to do next.
type Denial struct {
	Code         string    `json:"code"` // retry_exhausted, timeout, circuit_open, budget_exhausted, not_retryable, deadline
	Attempts     int       `json:"attempts"`
	ElapsedMS    int64     `json:"elapsed_ms"`
	LastStatus   int       `json:"last_status,omitempty"`
	LastMessage  string    `json:"last_message,omitempty"`
	RetryAfterMS int64     `json:"retry_after_ms,omitempty"`
	RetryAt      time.Time `json:"retry_at,omitzero"`
	Next         string    `json:"next"` // what to do next, for the model
	Err          error     `json:"-"`
}

func (d *Denial) Error() string { return d.Code + ": " + d.Next }
func (d *Denial) Unwrap() error { return d.Err }
