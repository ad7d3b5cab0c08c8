package reliability

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// readGen is the write generation a read started in: of the shared cache
// when the store answered, else of the local cache. An answer is stored
// only in the cache, and the generation, its read started in.
type readGen struct {
	shared bool
	token  string // the store's generation token (shared)
	local  uint64 // the local cache's generation (not shared)
}

// String tells generations apart in coalescing keys.
func (g readGen) String() string {
	if g.shared {
		return "s" + g.token
	}
	return "l" + strconv.FormatUint(g.local, 10)
}

// lookup returns the generation of host for a read of key and, when
// withEntry is set, its cached answer. With a shared store the shared
// cache is the only one used: a local entry could not see writes made
// through other replicas. When the store does not answer, the local cache
// stands in.
func (l *Layer) lookup(ctx context.Context, host, key string, withEntry bool) (readGen, *snapshot, bool) {
	if l.shared != nil && l.cache.enabled() {
		if gen, snap, err := l.sharedLookup(ctx, host, key, withEntry); err == nil {
			return gen, snap, snap != nil
		}
	}
	gen := readGen{local: l.cache.generation(host)}
	if !withEntry {
		return gen, nil, false
	}
	snap, ok := l.cache.get(key, l.now())
	return gen, snap, ok
}

// sharedLookup reads host's shared generation and, with withEntry, the
// entry under key if it was stored in that generation.
func (l *Layer) sharedLookup(ctx context.Context, host, key string, withEntry bool) (readGen, *snapshot, error) {
	if !withEntry {
		key = ""
	}
	var token string
	var entry []byte
	err := l.shared.do(ctx, "cache_read", func(ctx context.Context) (err error) {
		token, entry, err = l.shared.store.CacheRead(ctx, host, key)
		return err
	})
	if err != nil {
		return readGen{}, nil, err
	}
	gen := readGen{shared: true, token: token}
	if entry == nil {
		return gen, nil, nil
	}
	snap, err := decodeEntry(token, entry)
	if err != nil {
		// Stored in another generation (stale after a write), or not
		// ours: a miss either way.
		return gen, nil, nil //nolint:nilerr // an entry that does not decode is a miss, not a failure of the store
	}
	return gen, snap, nil
}

// remember stores a read's answer for as long as the policy and both sides'
// Cache-Control allow (storeTTL), in the cache its read started in: only
// 2xx answers, and none whose host was written to since gen.
func (l *Layer) remember(key string, gen readGen, req *http.Request, snap *snapshot) {
	if !l.cache.enabled() {
		return
	}
	ttl := storeTTL(l.policy.CacheTTL, req, snap.header)
	if !gen.shared {
		l.cache.putFor(key, req.URL.Host, gen.local, snap, l.now(), ttl)
		return
	}
	if !cacheable(snap, ttl) {
		return
	}
	entry := encodeEntry(gen.token, snap)
	if int64(len(entry)) > l.policy.CacheMaxBytes/4 {
		return // as in the local cache: one huge page must not flush the rest
	}
	_ = l.shared.do(req.Context(), "cache_write", func(ctx context.Context) error {
		_, err := l.shared.store.CacheWrite(ctx, req.URL.Host, key, gen.token, entry, ttl, l.policy.CacheMaxBytes)
		return err
	})
}

// invalidate makes every answer from host read so far stale, in the local
// cache and in the shared one (see sharedState.invalidate when the store
// is away).
func (l *Layer) invalidate(ctx context.Context, host string) {
	l.cache.invalidate(host)
	if l.shared != nil && l.cache.enabled() {
		l.shared.invalidate(ctx, host)
	}
}

// Cross-replica coalescing: the replica that misses the shared cache
// first claims the read (a short lock in the store) and fetches it; the
// others wait for its answer to appear in the shared cache, polling, for
// at most the attempt timeout. A claim lasts at most the tool timeout (a
// leader that dies does not hold the others longer).
const (
	peerPollFirst = 5 * time.Millisecond
	peerPollMax   = 50 * time.Millisecond
)

// leadOrWait is called by the one request of this process that is about
// to fetch key in shared generation gen. It returns the answer another
// replica fetched meanwhile, or nil and a release func: the caller
// fetches, stores the answer, then releases its claim (a no-op when it
// holds none: the store failed, or it stopped waiting).
func (l *Layer) leadOrWait(ctx context.Context, host, key string, gen readGen) (*snapshot, func()) {
	noop := func() {}
	claim := key + "@" + gen.token
	token := newClaimToken()
	lead := func() (bool, error) {
		var ok bool
		err := l.shared.do(ctx, "lead", func(c context.Context) (err error) {
			ok, err = l.shared.store.Lead(c, claim, token, l.policy.ToolTimeout)
			return err
		})
		return ok, err
	}
	release := func() {
		_ = l.shared.do(ctx, "lead", func(c context.Context) error { return l.shared.store.Unlead(c, claim, token) })
	}
	// fetchUnderClaim is taken when this replica holds the claim: the
	// replica that held it before may have stored its answer between our
	// cache miss and our claim (it stores, then releases), so the cache is
	// read once more before asking the catalog.
	fetchUnderClaim := func() (*snapshot, func()) {
		now, snap, err := l.sharedLookup(ctx, host, key, true)
		if err == nil && now.token == gen.token && snap != nil {
			release()
			return snap, noop
		}
		return nil, release
	}
	if ok, err := lead(); err != nil {
		return nil, noop
	} else if ok {
		return fetchUnderClaim()
	}
	waitUntil := time.Now().Add(l.policy.AttemptTimeout)
	if deadline, ok := ctx.Deadline(); ok && deadline.Add(-l.policy.AttemptTimeout).Before(waitUntil) {
		waitUntil = deadline.Add(-l.policy.AttemptTimeout) // leave time for one attempt of our own
	}
	poll := peerPollFirst
	for time.Now().Add(poll).Before(waitUntil) {
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, noop
		case <-t.C:
		}
		poll = min(2*poll, peerPollMax)
		now, snap, err := l.sharedLookup(ctx, host, key, true)
		switch {
		case err != nil || now.token != gen.token:
			return nil, noop // the store is away, or a write moved the host on
		case snap != nil:
			return snap, noop
		}
		// No answer yet. If the claim is free, its holder finished without
		// a cacheable answer (or died): this replica fetches, under the claim.
		if ok, err := lead(); err != nil {
			return nil, noop
		} else if ok {
			return fetchUnderClaim()
		}
	}
	return nil, noop
}

func newClaimToken() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// cacheable reports an answer the cache may keep for ttl: 2xx only.
func cacheable(s *snapshot, ttl time.Duration) bool {
	return s.status >= 200 && s.status <= 299 && ttl > 0
}

// Shared cache entries: the generation token, a newline, the response
// head as one line of JSON, a newline, the body.
type entryHead struct {
	Status        int         `json:"s"`
	StatusText    string      `json:"t"`
	Proto         string      `json:"p"`
	Header        http.Header `json:"h"`
	ContentLength int64       `json:"n"`
}

var errForeignEntry = errors.New("shared cache entry of another generation or format")

func encodeEntry(gen string, s *snapshot) []byte {
	head, _ := json.Marshal(entryHead{Status: s.status, StatusText: s.statusText, Proto: s.proto, Header: s.header, ContentLength: s.contentLength})
	out := make([]byte, 0, len(gen)+len(head)+len(s.body)+2)
	out = append(out, gen...)
	out = append(out, '\n')
	out = append(out, head...)
	out = append(out, '\n')
	return append(out, s.body...)
}

// decodeEntry reads an entry stored in generation gen.
func decodeEntry(gen string, entry []byte) (*snapshot, error) {
	rest, ok := bytes.CutPrefix(entry, []byte(gen+"\n"))
	if !ok {
		return nil, errForeignEntry
	}
	head, body, ok := bytes.Cut(rest, []byte{'\n'})
	if !ok {
		return nil, errForeignEntry
	}
	var h entryHead
	if err := json.Unmarshal(head, &h); err != nil || h.Status < 100 || h.Status > 999 {
		return nil, errForeignEntry
	}
	if h.Header == nil {
		h.Header = http.Header{}
	}
	return &snapshot{status: h.Status, statusText: h.StatusText, proto: h.Proto, header: h.Header, contentLength: h.ContentLength, body: body}, nil
}
