package faultinject

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// RoundTripper wraps base (nil: a private clone of http.DefaultTransport,
// so the shared pool is never touched) with client-side
// fault injection. Faulted requests never reach base, except the timing
// faults (HeadersDelayed*, SlowBody), which delay base's real answer, and
// the applied faults (Applied*), which send the request to base, discard
// its answer and return a reset, a hang or a 503 instead.
//
// Connection faults are simulated with the errors a real transport
// returns, so errors.Is works through the *url.Error an http.Client adds:
//   - ConnectionRefused: *net.OpError{Op: "dial"} wrapping syscall.ECONNREFUSED;
//   - ResetBeforeResponse: *net.OpError{Op: "read"} wrapping syscall.ECONNRESET;
//   - ResetMidBody: headers, then half the body, then that same reset error
//     from Body.Read;
//   - EOFAfterHeaders and TruncatedBody: io.ErrUnexpectedEOF from Body.Read
//     after zero or half of the declared Content-Length.
//
// Hang blocks until the request context ends and returns its error: the
// caller's attempt or tool timeout is what ends it.
func (in *Injector) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &roundTripper{in: in, base: base}
}

type roundTripper struct {
	in   *Injector
	base http.RoundTripper
}

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := rt.in.decide(req)
	timing := rt.in.schedule.timing
	ctx := req.Context()
	if c, ok := cannedFor(rec.Kind, timing, rec.Time); ok {
		closeRequestBody(req)
		return syntheticResponse(req, rec.Kind, c.status, c.contentType, c.retryAfter,
			int64(len(c.body)), io.NopCloser(strings.NewReader(c.body))), nil
	}
	switch rec.Kind {
	case ConnectionRefused:
		closeRequestBody(req)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: hostAddr(req.URL.Host),
			Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	case ResetBeforeResponse:
		closeRequestBody(req)
		return nil, resetError(req)
	case ResetMidBody:
		closeRequestBody(req)
		return partialResponse(req, rec.Kind, PartialBody[:partialBytes], resetError(req)), nil
	case EOFAfterHeaders:
		closeRequestBody(req)
		return partialResponse(req, rec.Kind, "", io.ErrUnexpectedEOF), nil
	case TruncatedBody:
		closeRequestBody(req)
		return partialResponse(req, rec.Kind, PartialBody[:partialBytes], io.ErrUnexpectedEOF), nil
	case HeadersDelayedWithin, HeadersDelayedBeyond:
		delay := timing.HeaderDelayWithin
		if rec.Kind == HeadersDelayedBeyond {
			delay = timing.HeaderDelayBeyond
		}
		if err := sleep(ctx, delay); err != nil {
			closeRequestBody(req)
			return nil, err
		}
		return rt.base.RoundTrip(req)
	case Hang:
		closeRequestBody(req)
		<-ctx.Done()
		return nil, ctx.Err()
	case SlowBody:
		resp, err := rt.base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		resp.Body = &trickleBody{ctx: ctx, body: resp.Body, chunk: timing.TrickleChunk, interval: timing.TrickleInterval}
		return resp, nil
	case OversizedBody:
		closeRequestBody(req)
		return syntheticResponse(req, rec.Kind, http.StatusOK, "application/geo+json", "",
			timing.OversizedBytes, io.NopCloser(oversizedReader(timing.OversizedBytes))), nil
	case AppliedThenReset, AppliedThenHang, AppliedThen503:
		// The upstream acts on the request; its answer goes nowhere.
		if resp, err := rt.base.RoundTrip(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		switch rec.Kind {
		case AppliedThenReset:
			return nil, resetError(req)
		case AppliedThenHang:
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return syntheticResponse(req, rec.Kind, applied503.status, applied503.contentType, "",
			int64(len(applied503.body)), io.NopCloser(strings.NewReader(applied503.body))), nil
	default: // None
		return rt.base.RoundTrip(req)
	}
}

// CloseIdleConnections forwards to base, so http.Client.CloseIdleConnections
// keeps working through the wrapper.
func (rt *roundTripper) CloseIdleConnections() {
	if c, ok := rt.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// closeRequestBody honours the RoundTripper contract for requests that
// never reach base: the body must be closed even on error.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close() // nothing useful to do with a close error here
	}
}

func syntheticResponse(req *http.Request, k Kind, status int, contentType, retryAfter string, length int64, body io.ReadCloser) *http.Response {
	h := http.Header{}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	h.Set(HeaderInjected, k.String())
	if retryAfter != "" {
		h.Set("Retry-After", retryAfter)
	}
	if req.Method == http.MethodHead {
		// A HEAD answer has headers only, as net/http delivers it.
		_ = body.Close() // in-memory readers
		body = http.NoBody
	}
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          body,
		ContentLength: length,
		Request:       req,
	}
}

// partialResponse declares the whole of PartialBody, delivers sent and
// then fails every read with err.
func partialResponse(req *http.Request, k Kind, sent string, err error) *http.Response {
	body := io.NopCloser(io.MultiReader(strings.NewReader(sent), errorReader{err}))
	return syntheticResponse(req, k, http.StatusOK, "application/geo+json", "", int64(len(PartialBody)), body)
}

func resetError(req *http.Request) error {
	return &net.OpError{Op: "read", Net: "tcp", Addr: hostAddr(req.URL.Host),
		Err: os.NewSyscallError("read", syscall.ECONNRESET)}
}

type errorReader struct{ err error }

func (r errorReader) Read([]byte) (int, error) { return 0, r.err }

// hostAddr is the peer address of a simulated connection; it is never
// resolved, so no fault ever touches DNS.
type hostAddr string

func (a hostAddr) Network() string { return "tcp" }
func (a hostAddr) String() string  { return string(a) }

// trickleBody hands out at most chunk bytes per Read, each after interval.
type trickleBody struct {
	ctx      context.Context
	body     io.ReadCloser
	chunk    int
	interval time.Duration
}

func (b *trickleBody) Read(p []byte) (int, error) {
	if err := sleep(b.ctx, b.interval); err != nil {
		return 0, err
	}
	if len(p) > b.chunk {
		p = p[:b.chunk]
	}
	return b.body.Read(p)
}

func (b *trickleBody) Close() error { return b.body.Close() }
