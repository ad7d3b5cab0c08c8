package reliability

import (
	"net/http"
	"time"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// retryAfterFrom returns the Retry-After of a 429 or 503 response.
func retryAfterFrom(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return 0, false
	}
	return upstream.ParseRetryAfter(resp.Header.Get("Retry-After"), now)
}

// retryWait is the wait before retry n: the jittered wait, raised to the
// server's Retry-After capped at retryAfterCap, never lowered below the jitter.
func retryWait(jitter, retryAfter time.Duration, hasRetryAfter bool, retryAfterCap time.Duration) time.Duration {
	if !hasRetryAfter {
		return jitter
	}
	return max(jitter, min(retryAfter, retryAfterCap))
}
