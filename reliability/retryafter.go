package reliability

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// parseRetryAfter reads a Retry-After value: non-negative integer seconds or
// an HTTP date in any of the three RFC 9110 forms. A date in the past means
// "now" (0). ok is false when the header is absent or unparsable, in which
// case the jittered backoff applies alone.
func parseRetryAfter(value string, now time.Time) (wait time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > 1<<31 { // avoid overflow; anything this large is capped anyway
			secs = 1 << 31
		}
		return time.Duration(secs) * time.Second, true
	}
	when, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	if d := when.Sub(now); d > 0 {
		return d, true
	}
	return 0, true
}

// retryAfterFrom returns the Retry-After of a 429 or 503 response.
func retryAfterFrom(resp *http.Response, now time.Time) (time.Duration, bool) {
	if resp == nil || (resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable) {
		return 0, false
	}
	return parseRetryAfter(resp.Header.Get("Retry-After"), now)
}

// retryWait is the wait before retry n: the jittered wait, raised to the
// server's Retry-After capped at retryAfterCap, never lowered below the jitter.
func retryWait(jitter, retryAfter time.Duration, hasRetryAfter bool, retryAfterCap time.Duration) time.Duration {
	if !hasRetryAfter {
		return jitter
	}
	return max(jitter, min(retryAfter, retryAfterCap))
}
