package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// correlationHeader is sent upstream on every attempt.
const correlationHeader = "X-Correlation-ID"

// layerTransport is the RoundTripper of HTTPClient: cache, coalescing, then
// the go-retryablehttp loop over attemptTransport.
type layerTransport struct{ layer *Layer }

// Mount is Layer.Mount, so that whoever holds only HTTPClient (the catalog
// registry) can serve its in-process catalogs through the layer.
func (t *layerTransport) Mount(host string, h http.Handler) (unmount func(), err error) {
	return t.layer.Mount(host, h)
}

func (t *layerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	l := t.layer
	body, err := drainRequestBody(req)
	if err != nil {
		return nil, fmt.Errorf("reading the request body to make it replayable: %w", err)
	}
	ctx := req.Context()
	rec := recordFrom(ctx)
	if rec == nil {
		rec = l.newRecord("unknown", req.URL.Host)
		ctx = withRecord(ctx, rec)
	}
	if !isRead(req.Method, req.URL.Path) {
		// A write may change what any read of this host returns: answers
		// cached or in flight from before it are not served after it. The
		// generation moves again once it is answered, because reads made
		// while it ran may have seen either state.
		l.invalidate(ctx, req.URL.Host)
		defer l.invalidate(ctx, req.URL.Host)
		snap, err := l.execute(ctx, rec, req, body)
		if err != nil {
			return nil, err
		}
		return snap.response(req), nil
	}

	h, err := l.acquireHost(req.URL.Host)
	if err != nil {
		return nil, l.localLimitDenial(rec, req.URL.Host, err)
	}
	defer l.releaseHost(h)
	key := requestKey(req, body)
	bypass := bypassesCache(req)
	gen, cached, hit := l.lookup(ctx, req.URL.Host, key, !bypass && l.cache.enabled())
	// Reads are shared only within one write generation of their host, so
	// a read asked after a write never joins one asked before it.
	flightKey := key + "@" + gen.String()
	if bypass {
		// The caller wants an answer made after it asked (a SAS token,
		// say): no cache lookup, no joining a request already in flight.
		snap, err := l.execute(ctx, rec, req, body)
		if err != nil {
			return nil, err
		}
		l.remember(key, gen, req, snap)
		return snap.response(req), nil
	}
	if l.cache.enabled() {
		if hit {
			rec.update(func(r *callRecord) { r.cacheHit = true })
			l.metrics.cacheHits.WithLabelValues(rec.tool).Inc()
			h.counts.add(l.now(), evCacheHit)
			return cached.response(req), nil
		}
		l.metrics.cacheMisses.WithLabelValues(rec.tool).Inc()
		h.counts.add(l.now(), evCacheMiss)
	}
	led, peer := false, false
	ch := l.flight.DoChan(flightKey, func() (any, error) {
		led = true
		if gen.shared {
			// Another replica may be reading the same thing right now.
			snap, release := l.leadOrWait(ctx, req.URL.Host, key, gen)
			if snap != nil {
				peer = true
				return snap, nil
			}
			defer release()
		}
		snap, err := l.execute(ctx, rec, req, body)
		if err == nil {
			l.remember(key, gen, req, snap)
		}
		return snap, err
	})
	select {
	case res := <-ch:
		if !led {
			if res.Err != nil && ctx.Err() == nil && endedByLeaderDeadline(res.Err) {
				// The shared request died with its leader's deadline or
				// cancellation, not with the catalog: ask again ourselves.
				snap, err := l.execute(ctx, rec, req, body)
				if err != nil {
					return nil, err
				}
				return snap.response(req), nil
			}
		}
		if !led || peer {
			rec.update(func(r *callRecord) { r.coalesced = true })
			l.metrics.coalescedRequests.WithLabelValues(rec.tool).Inc()
		}
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*snapshot).response(req), nil
	case <-ctx.Done():
		// A follower whose own deadline ends first stops waiting; the leader
		// carries on under its own deadline.
		return nil, ctx.Err()
	}
}

// endedByLeaderDeadline reports a shared result that says nothing about the
// catalog, only about the caller that led the request.
func endedByLeaderDeadline(err error) bool {
	var d *Denial
	if errors.As(err, &d) && d.Code == CodeTimeout {
		return true
	}
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// drainRequestBody reads the body once so every attempt sends identical bytes.
func drainRequestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// idempotent reports whether a request may be sent more than once: safe
// methods, STAC reads sent as POST, and PUT or DELETE carrying an
// Idempotency-Key. PUT and DELETE are idempotent in HTTP terms but are STAC
// transactions here, so they get one attempt unless the caller vouches for
// them with a key. A POST or PATCH write is never sent twice by the layer,
// key or not: most catalogs ignore the header, and a replayed create or
// patch is the duplicate side effect the key exists to prevent. The tools
// recover those writes themselves (look the result up before any replay).
func idempotent(req *http.Request) bool {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	case http.MethodPut, http.MethodDelete:
		return req.Header.Get("Idempotency-Key") != ""
	}
	return isRead(req.Method, req.URL.Path)
}

// execute runs the retry loop for one logical request and returns the
// buffered final response, or a *Denial when the layer gave up.
func (l *Layer) execute(ctx context.Context, rec *callRecord, req *http.Request, body []byte) (*snapshot, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.policy.ToolTimeout)
		defer cancel()
	}
	deadline, _ := ctx.Deadline()
	h, err := l.acquireHost(req.URL.Host)
	if err != nil {
		return nil, l.localLimitDenial(rec, req.URL.Host, err)
	}
	defer l.releaseHost(h)
	defer rec.begin(ctx, &pendingRequest{path: req.URL.Path, host: req.URL.Host, side: isSideRequest(ctx)})()
	maxAttempts := 1
	if !sendOnce(req) {
		maxAttempts = l.policy.MaxAttempts
	}
	loop := &retryLoop{layer: l, rec: rec, host: h, path: req.URL.Path, deadline: deadline, maxAttempts: maxAttempts}
	retryMax := maxAttempts - 1 // the library's own cap; check decides below it
	if maxAttempts > 1 && poolsAttempts(ctx) {
		loop.part = true
		rec.beginPart(maxAttempts - 1)
		retryMax += partExtraAttempts
	}
	ctx = withLoop(ctx, loop) // the hedge transport counts its attempts on the loop

	var raw any // nil: no body at all, rather than an empty one
	if body != nil {
		raw = body
	}
	rreq, err := retryablehttp.NewRequestWithContext(ctx, req.Method, req.URL.String(), raw)
	if err != nil {
		return nil, err
	}
	rreq.Header = req.Header.Clone()
	rreq.Header.Set(correlationHeader, rec.correlationID)
	rreq.Host = req.Host
	client := &retryablehttp.Client{
		HTTPClient:     l.attemptClient,
		Logger:         nil, // our hooks log, with the correlation id
		RetryMax:       retryMax,
		CheckRetry:     loop.check,
		Backoff:        loop.backoff,
		ErrorHandler:   loop.giveUp,
		RequestLogHook: loop.beforeAttempt,
	}
	resp, err := client.Do(rreq)
	if err != nil {
		var d *Denial
		if !errors.As(err, &d) && errors.Is(err, context.DeadlineExceeded) {
			// The deadline ended during a backoff sleep, where the library
			// skips the ErrorHandler.
			return nil, loop.deny(CodeTimeout, err)
		}
		return nil, err
	}
	snap := snapshotOf(resp)
	loop.answered(snap)
	return snap, nil
}

// localLimitDenial is a request this server refused to send because one of
// its own limits is reached (err says which).
func (l *Layer) localLimitDenial(rec *callRecord, host string, err error) *Denial {
	d := l.advise(&Denial{Code: CodeOverloaded, Host: host, ErrorClass: classLocalLimit, ElapsedMS: since(rec.start), Err: err}, Situation{})
	rec.update(func(r *callRecord) { r.denial = d })
	l.log.Warn().Str("event", eventRetryGiveUp).Str("reason", CodeOverloaded).Str("correlation_id", rec.correlationID).
		Str("tool_name", rec.tool).Str("host", host).Str("error", err.Error()).Msg("request refused by a limit of this server")
	return d
}

// snapshotOf takes the buffered body that attemptTransport left in resp.
func snapshotOf(resp *http.Response) *snapshot {
	var data []byte
	if b, ok := resp.Body.(*bufferedBody); ok {
		data = b.data
	} else {
		data, _ = io.ReadAll(resp.Body) // not reached: attemptTransport always buffers
	}
	resp.Body.Close()
	return &snapshot{status: resp.StatusCode, statusText: resp.Status, proto: resp.Proto, header: resp.Header, contentLength: resp.ContentLength, body: data}
}

// bufferedBody is a response body already read in full inside the attempt.
type bufferedBody struct {
	*bytes.Reader
	data []byte
}

func (*bufferedBody) Close() error { return nil }

func newBufferedBody(data []byte) *bufferedBody {
	return &bufferedBody{Reader: bytes.NewReader(data), data: data}
}

// since is a millisecond duration for denials and logs.
func since(t time.Time) int64 { return time.Since(t).Milliseconds() }
