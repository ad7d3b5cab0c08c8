package reliability

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// snapshot is a fully buffered response, shareable between coalesced callers
// and storable in the cache. Each caller gets its own *http.Response.
type snapshot struct {
	status        int
	statusText    string // "200 OK", as the server sent it
	proto         string
	header        http.Header
	contentLength int64
	body          []byte
}

func (s *snapshot) response(req *http.Request) *http.Response {
	return &http.Response{
		Status:        s.statusText,
		StatusCode:    s.status,
		Proto:         s.proto,
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        s.header.Clone(),
		ContentLength: s.contentLength,
		Body:          io.NopCloser(bytes.NewReader(s.body)),
		Request:       req,
	}
}

// What a cache entry holds besides its body and header bytes, so that the
// cache's bound is on memory, not on bytes received: with small answers
// the bookkeeping outweighs the body (TestCacheCountsWhatItsEntriesHold).
const (
	// entryOverhead: the entry, its list element and map slot, the
	// snapshot, the hex key, and the header map, which net/http sizes for
	// eight headers however few came.
	entryOverhead = 1024
	// headerOverhead: a header's map slot and value slice.
	headerOverhead = 64
	// valueOverhead: one header value's string.
	valueOverhead = 16
)

// size is what s holds in memory as a cache entry: the body's capacity,
// not its length, and the bookkeeping around it.
func (s *snapshot) size() int64 {
	n := int64(cap(s.body)) + entryOverhead
	for k, vs := range s.header {
		n += int64(len(k)) + headerOverhead
		for _, v := range vs {
			n += int64(len(v)) + valueOverhead
		}
	}
	return n
}

// isRead reports the requests that may be coalesced and cached: GET, HEAD,
// and POST to a /search or /aggregate endpoint (STAC item search and
// aggregation are reads sent as POST to carry a JSON body).
func isRead(method, path string) bool {
	switch method {
	case http.MethodGet, http.MethodHead:
		return true
	case http.MethodPost:
		p := strings.TrimSuffix(path, "/")
		return strings.HasSuffix(p, "/search") || strings.HasSuffix(p, "/aggregate")
	}
	return false
}

// headersIgnoredInKey are per-call headers that do not change the answer.
// Cache-Control and Pragma say how fresh it must be, not what it is, so a
// no-cache request refreshes the entry that plain reads then share.
var headersIgnoredInKey = map[string]bool{
	"X-Correlation-Id": true, "User-Agent": true, "Traceparent": true, "Tracestate": true, "Idempotency-Key": true,
	"Cache-Control": true, "Pragma": true,
}

// requestKey identifies a read: method, URL, canonical JSON body (so that key
// order and spacing do not matter) and every header that can change the
// answer (Accept, Authorization, API keys …). It is a hash so that secrets in
// headers are not kept in memory as map keys.
func requestKey(req *http.Request, body []byte) string {
	h := sha256.New()
	io.WriteString(h, req.Method+" "+req.URL.String()+"\n")
	names := make([]string, 0, len(req.Header))
	for name := range req.Header {
		if !headersIgnoredInKey[http.CanonicalHeaderKey(name)] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		io.WriteString(h, http.CanonicalHeaderKey(name)+": "+strings.Join(req.Header.Values(name), ",")+"\n")
	}
	h.Write([]byte{0})
	h.Write(canonicalJSON(body))
	return hex.EncodeToString(h.Sum(nil))
}

func canonicalJSON(body []byte) []byte {
	var v any
	if len(body) == 0 || json.Unmarshal(body, &v) != nil {
		return body
	}
	out, err := json.Marshal(v) // map keys come out sorted
	if err != nil {
		return body
	}
	return out
}

// responseCache keeps successful reads for a short TTL, least recently used
// first out once maxBytes is reached. Failures are never stored.
//
// Every write to a host moves that host's generation on (invalidate), and
// an entry is served only in the generation its read started in: a read
// after a write never gets the answer from before it, whatever the TTL.
type responseCache struct {
	mu       sync.Mutex
	ttl      time.Duration
	maxBytes int64
	used     int64
	order    *list.List // front = most recently used
	entries  map[string]*list.Element
	gens     map[string]uint64 // write generation per host
	// nextSweep is when putFor next drops every expired entry: an entry
	// no read asks for again is otherwise only dropped when the byte
	// bound pushes it out, and a server that once saw many distinct URLs
	// would hold up to maxBytes of dead answers for good.
	nextSweep time.Time
}

type cacheEntry struct {
	key     string
	host    string
	gen     uint64 // the host's generation when the read started
	snap    *snapshot
	expires time.Time
	size    int64
}

func newResponseCache(ttl time.Duration, maxBytes int64) *responseCache {
	return &responseCache{ttl: ttl, maxBytes: maxBytes, order: list.New(), entries: map[string]*list.Element{}, gens: map[string]uint64{}}
}

// generation is host's write generation: read it before a read is sent.
func (c *responseCache) generation(host string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[host]
}

// maxGenerationHosts bounds the hosts whose write generation is kept.
const maxGenerationHosts = 4096

// invalidate makes every answer from host read so far stale. Past
// maxGenerationHosts hosts written to, the whole cache is dropped with
// the generations (a host whose count was forgotten must not see an entry
// from before its writes as current again).
func (c *responseCache) invalidate(host string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, known := c.gens[host]; !known && len(c.gens) >= maxGenerationHosts {
		c.gens = map[string]uint64{}
		c.order.Init()
		c.entries = map[string]*list.Element{}
		c.used = 0
	}
	c.gens[host]++
}

// clear drops every entry (the generations stay).
func (c *responseCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	c.entries = map[string]*list.Element{}
	c.used = 0
}

func (c *responseCache) enabled() bool { return c.ttl > 0 && c.maxBytes > 0 }

func (c *responseCache) get(key string, now time.Time) (*snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !now.Before(e.expires) || e.gen != c.gens[e.host] {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.snap, true
}

// putFor stores a 2xx snapshot of a read of host that started in write
// generation gen, for ttl (0: not stored; see storeTTL). An answer from
// before the host's latest write is not stored, and an entry larger than a
// quarter of the cache is not either, so one huge page cannot flush
// everything else.
func (c *responseCache) putFor(key, host string, gen uint64, s *snapshot, now time.Time, ttl time.Duration) {
	if !cacheable(s, ttl) {
		return
	}
	size := s.size()
	if size > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !now.Before(c.nextSweep) {
		c.sweepLocked(now)
	}
	if gen != c.gens[host] {
		return
	}
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, host: host, gen: gen, snap: s, expires: now.Add(ttl), size: size})
	c.used += size
	for c.used > c.maxBytes {
		c.remove(c.order.Back())
	}
}

// sweepLocked drops every entry expired at now, at most once per TTL, so
// that its cost, one pass over the entries, is spread over a TTL of puts.
func (c *responseCache) sweepLocked(now time.Time) {
	for el := c.order.Back(); el != nil; {
		prev := el.Prev()
		if !now.Before(el.Value.(*cacheEntry).expires) {
			c.remove(el)
		}
		el = prev
	}
	c.nextSweep = now.Add(c.ttl)
}

func (c *responseCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.used -= e.size
}

func (c *responseCache) bytesUsed() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
