package faultinject

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"
)

// Middleware wraps next (for example a stacserver handler behind an
// httptest.Server) with server-side fault injection on real sockets.
// Faulted requests never reach next, except the timing faults
// (HeadersDelayed*, SlowBody), which delay next's real answer, and the
// applied faults (Applied*), which let next act on the request and then
// replace its answer with a reset, a hang or a 503.
//
// What a client observes, over HTTP/1.1 on loopback:
//   - ConnectionRefused is approximated: a server cannot refuse a connection
//     it has already accepted, so the connection is hijacked and closed
//     (FIN) before any byte; the client sees io.EOF, not ECONNREFUSED.
//     Only RoundTripper produces a true ECONNREFUSED.
//   - ResetBeforeResponse: hijack, SO_LINGER 0, close: a TCP RST, seen as
//     syscall.ECONNRESET.
//   - ResetMidBody: headers and half the declared body, a pause
//     (Timing.ResetPause) so the client is reading the body, then an RST.
//   - EOFAfterHeaders and TruncatedBody: headers declaring the whole of
//     PartialBody, none or half of it, then a clean close; the client's body
//     read fails with io.ErrUnexpectedEOF.
//   - Hang holds the request until its context ends, which net/http does
//     when the client closes the connection or the server shuts down.
//
// net/http replays idempotent requests that fail on a reused keep-alive
// connection before any response byte (ConnectionRefused and
// ResetBeforeResponse), invisibly to the caller: the injector then sees
// and records that replay as the next attempt.
//
// Connection faults need http.Hijacker (HTTP/1.x). Without it (HTTP/2, a
// ResponseRecorder) they fall back to panic(http.ErrAbortHandler), which
// net/http turns into a stream reset (HTTP/2) or an abrupt close.
func (in *Injector) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := in.decide(r)
		timing := in.schedule.timing
		if c, ok := cannedFor(rec.Kind, timing, rec.Time); ok {
			writeCanned(w, rec.Kind, c)
			return
		}
		switch rec.Kind {
		case ConnectionRefused:
			breakConnection(w, r, rec.Kind, "", 0, closeClean)
		case ResetBeforeResponse:
			breakConnection(w, r, rec.Kind, "", 0, closeReset)
		case ResetMidBody:
			breakConnection(w, r, rec.Kind, PartialBody[:partialBytes], timing.ResetPause, closeReset)
		case EOFAfterHeaders:
			breakConnection(w, r, rec.Kind, "", 0, closeClean)
		case TruncatedBody:
			breakConnection(w, r, rec.Kind, PartialBody[:partialBytes], 0, closeClean)
		case HeadersDelayedWithin, HeadersDelayedBeyond:
			delay := timing.HeaderDelayWithin
			if rec.Kind == HeadersDelayedBeyond {
				delay = timing.HeaderDelayBeyond
			}
			// Buffer the request body so net/http watches the connection
			// during the delay: a client that gives up then ends r.Context().
			if r.Body != nil && r.Body != http.NoBody {
				_, _ = bufferRequestBody(r) // a read error reaches next with the rest of the body
			}
			if sleep(r.Context(), delay) != nil {
				return // the client gave up; nobody is left to answer
			}
			next.ServeHTTP(w, r)
		case Hang:
			// Read the request body first: net/http only notices a closed
			// connection (and ends r.Context()) once the body is consumed.
			drainRequestBody(r)
			<-r.Context().Done()
		case SlowBody:
			next.ServeHTTP(&trickleWriter{ResponseWriter: w, ctx: r.Context(),
				chunk: timing.TrickleChunk, interval: timing.TrickleInterval}, r)
		case OversizedBody:
			writeOversized(w, timing.OversizedBytes)
		case AppliedThenReset, AppliedThenHang, AppliedThen503:
			// The upstream acts on the request; its answer goes nowhere.
			next.ServeHTTP(httptest.NewRecorder(), r)
			switch rec.Kind {
			case AppliedThenReset:
				breakConnection(w, r, rec.Kind, "", 0, closeReset)
			case AppliedThenHang:
				<-r.Context().Done()
			default:
				writeCanned(w, rec.Kind, applied503)
			}
		default: // None
			next.ServeHTTP(w, r)
		}
	})
}

func writeCanned(w http.ResponseWriter, k Kind, c canned) {
	h := w.Header()
	h.Set("Content-Type", c.contentType)
	h.Set("Content-Length", strconv.Itoa(len(c.body)))
	h.Set(HeaderInjected, k.String())
	if c.retryAfter != "" {
		h.Set("Retry-After", c.retryAfter)
	}
	w.WriteHeader(c.status)
	_, _ = io.WriteString(w, c.body) // a client that left cannot be told
}

func writeOversized(w http.ResponseWriter, size int64) {
	h := w.Header()
	h.Set("Content-Type", "application/geo+json")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set(HeaderInjected, OversizedBody.String())
	w.WriteHeader(http.StatusOK)
	// io.Copy streams through a 32 KiB buffer and stops at the first write
	// error, i.e. as soon as the client stops reading and closes.
	_, _ = io.Copy(w, oversizedReader(size))
}

type closeMode bool

const (
	closeClean closeMode = false // FIN: the peer reads EOF
	closeReset closeMode = true  // RST: the peer reads ECONNRESET
)

// breakConnection takes the raw connection, optionally writes a 200 header
// block declaring all of PartialBody followed by sent, waits pause, and
// closes the connection cleanly or with a reset. ConnectionRefused,
// ResetBeforeResponse and AppliedThenReset send no byte at all.
func breakConnection(w http.ResponseWriter, r *http.Request, k Kind, sent string, pause time.Duration, mode closeMode) {
	drainRequestBody(r) // unread request bytes would turn any close into an RST
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // see Middleware: HTTP/2 or no Hijacker
	}
	defer closeConn(conn, mode)
	if k == ConnectionRefused || k == ResetBeforeResponse || k == AppliedThenReset {
		return
	}
	if r.Method == http.MethodHead {
		sent = "" // the client expects no body; stray bytes would corrupt its next read
	}
	writer := bufio.NewWriter(conn)
	_, _ = io.WriteString(writer, "HTTP/1.1 200 OK\r\n"+
		"Content-Type: application/geo+json\r\n"+
		"Content-Length: "+strconv.Itoa(len(PartialBody))+"\r\n"+
		HeaderInjected+": "+k.String()+"\r\n"+
		"\r\n"+sent)
	if writer.Flush() != nil {
		return // the client is already gone
	}
	if pause > 0 {
		_ = sleep(r.Context(), pause) // the hijacked request's context may already be done; the pause is best effort
	}
}

func closeConn(conn net.Conn, mode closeMode) {
	if mode == closeReset {
		if tc, ok := conn.(*tls.Conn); ok {
			conn = tc.NetConn()
		}
		if l, ok := conn.(interface{ SetLinger(int) error }); ok {
			_ = l.SetLinger(0) // a failure leaves a clean close, which the caller would see as EOF
		}
	}
	_ = conn.Close()
}

// maxDrainBytes bounds how much request body is read before a connection
// fault or a hang; STAC search bodies are a few KiB.
const maxDrainBytes = 1 << 20

func drainRequestBody(r *http.Request) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxDrainBytes))
	}
}

// trickleWriter passes the real answer on in chunks of at most chunk
// bytes, flushing each after a pause of interval.
type trickleWriter struct {
	http.ResponseWriter
	ctx      context.Context
	chunk    int
	interval time.Duration
}

func (t *trickleWriter) Write(p []byte) (int, error) {
	rc := http.NewResponseController(t.ResponseWriter)
	written := 0
	for len(p) > 0 {
		if err := sleep(t.ctx, t.interval); err != nil {
			return written, err
		}
		n, err := t.ResponseWriter.Write(p[:min(len(p), t.chunk)])
		written += n
		if err != nil {
			return written, err
		}
		if err := rc.Flush(); err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Unwrap lets http.NewResponseController reach the real writer.
func (t *trickleWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
