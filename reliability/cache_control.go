package reliability

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// cacheDirectives are the parts of a Cache-Control header the response
// cache honours. The cache is a short-lived de-duplication aid, not an HTTP
// cache, but an answer that says it must not be reused (a SAS token, a
// per-user page) must not be replayed for CacheTTL.
type cacheDirectives struct {
	noStore bool // no-store, no-cache or private: never reuse
	// literalNoStore is "no-store" itself: on a request it forbids keeping
	// the answer, where a request's no-cache only asks for a fresh one.
	literalNoStore bool
	maxAge         time.Duration
	hasAge         bool
}

func parseCacheControl(h http.Header) cacheDirectives {
	var d cacheDirectives
	for _, line := range h.Values("Cache-Control") {
		for part := range strings.SplitSeq(line, ",") {
			name, value, _ := strings.Cut(strings.TrimSpace(part), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store":
				d.noStore, d.literalNoStore = true, true
			case "no-cache", "private":
				d.noStore = true
			case "max-age", "s-maxage":
				secs, err := strconv.Atoi(strings.Trim(strings.TrimSpace(value), `"`))
				if err != nil || secs < 0 {
					// An unreadable max-age is treated as 0, as RFC 9111
					// §4.2.1 asks: stale at once.
					secs = 0
				}
				age := time.Duration(secs) * time.Second
				if !d.hasAge || age < d.maxAge {
					d.maxAge, d.hasAge = age, true
				}
			}
		}
	}
	// HTTP/1.0 caches' spelling of no-cache, still sent by some servers.
	if !d.noStore && len(h.Values("Cache-Control")) == 0 && strings.EqualFold(strings.TrimSpace(h.Get("Pragma")), "no-cache") {
		d.noStore = true
	}
	return d
}

// bypassesCache reports a request that asks for a fresh answer
// (Cache-Control: no-cache / no-store / max-age=0): it is neither served
// from the cache nor coalesced with an identical request already in flight,
// which may have started before the caller's reason to ask again.
func bypassesCache(req *http.Request) bool {
	d := parseCacheControl(req.Header)
	return d.noStore || (d.hasAge && d.maxAge == 0)
}

// storeTTL is how long an answer to req may be kept: the policy's TTL,
// shortened by the response's max-age, and 0 (not stored) when either side
// says no-store or no-cache.
func storeTTL(ttl time.Duration, req *http.Request, respHeader http.Header) time.Duration {
	if req != nil && parseCacheControl(req.Header).literalNoStore {
		return 0
	}
	d := parseCacheControl(respHeader)
	if d.noStore {
		return 0
	}
	if d.hasAge && d.maxAge < ttl {
		return d.maxAge
	}
	return ttl
}
