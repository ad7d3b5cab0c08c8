package reliability

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/sync/semaphore"
)

// errorBodyLimit is how much of a non-2xx body is read: plenty for any
// error message (a denial keeps upstream.MaxMessageRunes of it), while a catalog
// answering a 10 MB error page to every retry costs 64 KiB per attempt
// instead of 10 MB. The rest is not read: the connection is closed instead.
const errorBodyLimit = 64 << 10

// bodyChunk is the step in which bytes are reserved for a body of unknown
// length.
const bodyChunk = 64 << 10

// bodyBudget bounds the bytes of upstream bodies being read at once by the
// whole process (Policy.BodyBudgetBytes), so that many concurrent large
// answers cannot exhaust memory: every attempt reserves bytes before it
// reads them and gives them back when its read ends (the body then belongs
// to the caller that decodes it).
//
// A read waits for its first reservation (the whole body when the
// Content-Length is known) until the attempt's deadline, holding nothing
// meanwhile; a body of unknown length that needs more than it could reserve
// up front asks again without waiting and is refused when the budget is
// spent, because waiting while holding part of the budget could leave
// several reads each waiting for the others.
type bodyBudget struct {
	sem   *semaphore.Weighted
	total int64
	m     *metrics
}

func newBodyBudget(total int64, m *metrics) *bodyBudget {
	return &bodyBudget{sem: semaphore.NewWeighted(total), total: total, m: m}
}

// bodyBudgetError is a body read refused for want of budget.
type bodyBudgetError struct {
	total  int64
	waited bool
}

func (e *bodyBudgetError) Error() string {
	how := "was spent"
	if e.waited {
		how = "stayed spent until the attempt's deadline"
	}
	return "the budget of upstream response bytes this server reads at once (" + FormatBytes(e.total) +
		", STAC_MCP_BODY_BUDGET_BYTES) " + how + ": other calls are reading large answers right now"
}

func (b *bodyBudget) reserve(ctx context.Context, n int64, wait bool) error {
	if b.sem.TryAcquire(n) {
		b.m.bodyBytesReserved.Add(float64(n))
		return nil
	}
	if wait {
		if err := b.sem.Acquire(ctx, n); err == nil {
			b.m.bodyBytesReserved.Add(float64(n))
			return nil
		}
	}
	b.m.bodyBudgetRefused.Inc()
	return &bodyBudgetError{total: b.total, waited: wait}
}

func (b *bodyBudget) release(n int64) {
	if n > 0 {
		b.sem.Release(n)
		b.m.bodyBytesReserved.Sub(float64(n))
	}
}

// readBody reads resp's body inside the attempt: a 2xx body up to limit
// (longer is a *bodyTooLargeError), any other body up to errorBodyLimit
// (the rest is dropped unread), each byte reserved in the budget first.
func (l *Layer) readBody(ctx context.Context, req *http.Request, resp *http.Response) ([]byte, error) {
	if req.Method == http.MethodHead || resp.Body == nil || resp.Body == http.NoBody {
		return nil, nil
	}
	// ctx bounds only the wait for budget, a wait on this server rather than
	// on the catalog: an open-ended last attempt (adr/0011) still waits at
	// most the attempt timeout, so a spent budget is reported as such and
	// not as the tool's timeout.
	ctx, cancel := context.WithTimeout(ctx, l.policy.AttemptTimeout)
	defer cancel()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return l.bodies.read(ctx, resp.Body, resp.ContentLength, errorBodyLimit, true)
	}
	if n, ok := rangeLength(req.Header.Get("Range")); ok && resp.StatusCode == http.StatusOK && n < l.policy.MaxBodyBytes {
		// A server that ignores Range answers 200 with the whole file: one
		// byte more than the range tells the caller so (stacclient's
		// FetchRange refuses it), without reading a whole image.
		return l.bodies.read(ctx, resp.Body, resp.ContentLength, n+1, true)
	}
	return l.bodies.read(ctx, resp.Body, resp.ContentLength, l.policy.MaxBodyBytes, false)
}

// rangeLength is the length of a single "bytes=first-last" Range.
func rangeLength(v string) (int64, bool) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return 0, false
	}
	a, b, ok := strings.Cut(spec, "-")
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || first < 0 || last < first {
		return 0, false
	}
	return last - first + 1, true
}

// read reads r up to limit bytes. Past limit it returns the first limit
// bytes when truncate is set, else a *bodyTooLargeError. The body it
// returns has no spare capacity worth keeping (see clip).
func (b *bodyBudget) read(ctx context.Context, r io.Reader, contentLength, limit int64, truncate bool) ([]byte, error) {
	buf, err := b.readReserved(ctx, r, contentLength, limit, truncate)
	return clip(buf), err
}

// clip is buf without its spare capacity, copied when that is more than
// an eighth of it. A body of unknown length (chunked, as most catalogs
// answer) is read into 64 KiB steps and doubled past that, and the body
// outlives the read: the response cache keeps it, coalesced callers share
// it. Uncopied, every 300-byte landing page would pin 64 KiB for as long
// as it is cached, which the cache, counting what it was told, did not
// see: 2,000 distinct catalog URLs grew the server by 192 MiB of RSS
// (bench/RESULTS.md).
func clip(buf []byte) []byte {
	if cap(buf)-len(buf) <= cap(buf)/8 {
		return buf
	}
	return append(make([]byte, 0, len(buf)), buf...)
}

// readReserved is read before clip. The reservation is the buffer's
// capacity, which doubles as it fills (a known Content-Length is reserved
// at once), so a body costs O(n) copying; it is given back on return.
func (b *bodyBudget) readReserved(ctx context.Context, r io.Reader, contentLength, limit int64, truncate bool) ([]byte, error) {
	if contentLength > limit && !truncate {
		return nil, &bodyTooLargeError{limit: limit}
	}
	var buf []byte
	defer func() { b.release(int64(cap(buf))) }()
	for {
		if len(buf) == cap(buf) {
			size := int64(len(buf))
			var extra []byte // a byte read past a full buffer, kept once it has grown
			if size >= limit || (contentLength >= 0 && size >= contentLength) {
				var probe [1]byte
				n, err := io.ReadFull(r, probe[:])
				switch {
				case n == 0 && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
					return buf, nil
				case n == 0:
					return nil, err
				case size >= limit && truncate:
					return buf, nil
				case size >= limit:
					return nil, &bodyTooLargeError{limit: limit}
				}
				contentLength, extra = -1, probe[:] // longer than declared: read on as if undeclared
			}
			grow := max(int64(bodyChunk), size)
			if size == 0 && contentLength >= 0 {
				grow = max(contentLength, 1)
			}
			grow = min(grow, limit-size)
			if err := b.reserve(ctx, grow, size == 0); err != nil {
				return nil, err
			}
			// The full slice expression pins the capacity to what was
			// reserved (make may round it up to a size class).
			grown := make([]byte, size, size+grow)[: size : size+grow]
			copy(grown, buf)
			buf = append(grown, extra...)
			continue
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
