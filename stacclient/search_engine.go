package stacclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stacmcp/stac-mcp/reliability/upstream"
)

// The pager is the one pagination engine behind item search and the
// collections list. It follows the first rel=next link of each page as the
// server wrote it, within the catalog's scope (scope.go), and stops on: no
// next link, a next link it may not follow, an empty page, the item or page
// cap, a repeated request (cycle), or a page of already-seen items.

// maxNextURLLength stops next links that grow without bound
// (pystac-client#680): no real catalog needs a longer one.
const maxNextURLLength = 16 << 10

// pagerDoc is what the engine needs from one fetched page.
type pagerDoc[E any] struct {
	req     Request  // the request actually sent (a 405 fallback may change it)
	url     *url.URL // the URL that answered, for resolving relative hrefs
	elems   []E
	links   []Link
	matched *int
	// unusableMatched is a match count the page sent that is not a count
	// (ItemCollection.UnusableMatched), for a note.
	unusableMatched string
}

// pagerPage is one page after de-duplication and the MaxItems cut.
type pagerPage[E any] struct {
	req      Request
	elems    []E
	rawIndex []int // position of each of elems in the page as served
	rawLen   int
	skipped  int
	dropped  int
	matched  *int
	next     *Request
	refused  string // why the page's next link was not followed
	offset   int    // items served on the pages before this one
}

// pagerStart is where an iteration begins (see Position): how many elements
// of the first request's page were consumed already, the fingerprints of
// keys yielded before, how many elements the pages before it served, and
// whether to page from the search's start to offset+skip first.
type pagerStart struct {
	skip   int
	seen   []uint32
	offset int
	replay bool
}

// pager holds the settings and the outcome of one iteration.
type pager[E any] struct {
	client *Client // whose scope next links must stay in
	lim    SearchLimits
	keyOf  func(*E) string // de-duplication key; "" never counts as a duplicate
	fetch  func(ctx context.Context, r Request, first bool) (pagerDoc[E], error)

	mu          sync.Mutex
	stop        StopReason
	refused     string
	position    *Position
	matched     *int
	unusable    string // the last unusable match count a page sent
	firstMethod string
	seenOrder   []uint32 // fingerprints of keys yielded, oldest first (for positions)
}

// positionAt is the position at r (whose page starts offset elements into the
// results) that carries the keys yielded so far, except those in
// undelivered (yielded by the engine but not received by the caller, who
// stopped early).
func (p *pager[E]) positionAt(r Request, skip, offset int, undelivered map[uint32]bool) *Position {
	p.mu.Lock()
	defer p.mu.Unlock()
	var seen []uint32
	for i := len(p.seenOrder) - 1; i >= 0 && len(seen) < MaxPositionSeen; i-- {
		if fp := p.seenOrder[i]; !undelivered[fp] {
			seen = append(seen, fp)
		}
	}
	slices.Reverse(seen)
	return &Position{Request: r, Skip: skip, Seen: seen, Offset: offset}
}

func (p *pager[E]) finish(stop StopReason, cur *Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop, p.position = stop, cur
}

func (p *pager[E]) state() (StopReason, *Position, *int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop, p.position, p.matched, p.firstMethod
}

func (p *pager[E]) refusal() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// run iterates pages starting with the request first builds.
func (p *pager[E]) run(ctx context.Context, first func(context.Context) (Request, error), start pagerStart) iter.Seq2[*pagerPage[E], error] {
	return func(yield func(*pagerPage[E], error) bool) {
		seenKeys := make(map[string]bool)
		carried := make(map[uint32]bool, len(start.seen))
		for _, fp := range start.seen {
			carried[fp] = true
		}
		p.mu.Lock()
		p.stop, p.refused, p.position, p.matched, p.unusable, p.firstMethod = "", "", nil, nil, "", ""
		p.seenOrder = append([]uint32(nil), start.seen...)
		p.mu.Unlock()

		if err := p.lim.validate(); err != nil {
			p.finish(StopError, nil)
			yield(nil, err)
			return
		}
		req, err := first(ctx)
		if err != nil {
			p.finish(StopError, nil)
			yield(nil, err)
			return
		}
		maxPages := p.lim.MaxPages
		if maxPages <= 0 {
			maxPages = DefaultMaxPages
		}
		seenRequests := make(map[string]bool)
		yielded, pages := 0, 0
		isFirst := true
		skip, offset := max(start.skip, 0), max(start.offset, 0)
		var prefetched *pagerDoc[E]
		if start.replay {
			// Page back to the position: what lies before it was yielded by
			// an earlier call, so it counts neither as pages nor as items.
			var stop StopReason
			prefetched, skip, offset, stop, err = p.replay(ctx, req, offset+skip)
			switch {
			case err != nil:
				p.finish(StopError, nil)
				yield(nil, err)
				return
			case stop != "":
				p.finish(stop, nil) // the results end before the position
				return
			}
			req, isFirst = prefetched.req, false
		}

		for {
			seenRequests[requestKey(req)] = true
			var doc pagerDoc[E]
			if prefetched != nil {
				doc, prefetched = *prefetched, nil
			} else if doc, err = p.fetch(ctx, req, isFirst); err != nil {
				p.finish(StopError, p.positionAt(req, skip, offset, nil))
				yield(nil, err)
				return
			}
			req = doc.req
			pages++
			p.noteFetched(doc, isFirst)
			isFirst = false

			page := &pagerPage[E]{req: req, rawLen: len(doc.elems), matched: doc.matched, offset: offset}
			consumed := p.selectElems(page, doc.elems, skip, yielded, seenKeys, carried)
			yielded += len(page.elems)
			page.next, page.refused = p.client.nextRequest(FindLink(doc.links, "next"), req, doc.url)

			stop, cur := p.stopAfter(page, doc.elems, skip, consumed, yielded, pages, maxPages, seenRequests)
			if stop == StopNextRefused {
				p.setRefused(page.refused)
			}
			if !yield(page, nil) {
				if stop == "" {
					stop, cur = StopConsumer, p.positionAt(*page.next, 0, offset+page.rawLen, nil)
				}
				p.finish(stop, cur)
				return
			}
			if stop != "" {
				p.finish(stop, cur)
				return
			}
			req, skip, offset = *page.next, 0, offset+page.rawLen
		}
	}
}

// noteFetched records the first request's method and the latest match count.
func (p *pager[E]) noteFetched(doc pagerDoc[E], first bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if first {
		p.firstMethod = methodOrGet(doc.req.Method)
	}
	if doc.matched != nil {
		p.matched = doc.matched
	}
	if doc.unusableMatched != "" {
		p.unusable = doc.unusableMatched
	}
}

func (p *pager[E]) setRefused(why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refused = why
}

// replay pages from the first request req to the page holding element
// target (counted as served), and returns that page, how many of its
// elements come before target, and how many the pages before it served.
// A stop reason says the results end before target.
func (p *pager[E]) replay(ctx context.Context, req Request, target int) (*pagerDoc[E], int, int, StopReason, error) {
	offset := 0
	for first := true; ; first = false {
		doc, err := p.fetch(ctx, req, first)
		if err != nil {
			return nil, 0, 0, "", err
		}
		p.noteFetched(doc, first)
		if len(doc.elems) == 0 {
			return nil, 0, 0, StopEmptyPage, nil
		}
		if offset+len(doc.elems) > target {
			return &doc, target - offset, offset, "", nil
		}
		next, refused := p.client.nextRequest(FindLink(doc.links, "next"), doc.req, doc.url)
		if next == nil {
			if refused != "" {
				p.setRefused(refused)
				return nil, 0, 0, StopNextRefused, nil
			}
			return nil, 0, 0, StopNoNext, nil
		}
		offset += len(doc.elems)
		req = *next
	}
}

// selectElems fills page.elems with the elements from skip on that are new
// and fit under MaxItems, and returns how many of the served elements were
// consumed (yielded or dropped as duplicates). A key counts as seen when
// this iteration yielded it, or when its fingerprint came in the position continued from.
func (p *pager[E]) selectElems(page *pagerPage[E], elems []E, skip, yielded int, seenKeys map[string]bool, carried map[uint32]bool) int {
	consumed := min(skip, len(elems))
	for i := consumed; i < len(elems); i++ {
		key := p.keyOf(&elems[i])
		var fp uint32
		if key != "" {
			fp = keyFingerprint(key)
		}
		duplicate := key != "" && (seenKeys[key] || carried[fp])
		full := p.lim.MaxItems > 0 && yielded+len(page.elems) >= p.lim.MaxItems
		if full && !duplicate {
			break
		}
		consumed = i + 1
		if duplicate {
			page.dropped++
			continue
		}
		if key != "" {
			seenKeys[key] = true
			p.mu.Lock()
			p.seenOrder = append(p.seenOrder, fp)
			p.mu.Unlock()
		}
		page.elems = append(page.elems, elems[i])
		page.rawIndex = append(page.rawIndex, i)
	}
	page.skipped = len(elems) - consumed
	return consumed
}

// stopAfter decides whether the iteration ends after page, and where a
// later call would continue.
func (p *pager[E]) stopAfter(page *pagerPage[E], elems []E, skip, consumed, yielded, pages, maxPages int, seenRequests map[string]bool) (StopReason, *Position) {
	considered := len(elems) - min(skip, len(elems))
	switch {
	case len(elems) == 0:
		return StopEmptyPage, nil
	case page.skipped > 0:
		return StopMaxItems, p.positionAt(page.req, consumed, page.offset, nil)
	case considered > 0 && len(page.elems) == 0 && page.dropped == considered:
		return StopNoNewIDs, nil
	case page.next == nil && page.refused != "":
		return StopNextRefused, nil
	case page.next == nil:
		return StopNoNext, nil
	case p.lim.MaxItems > 0 && yielded >= p.lim.MaxItems:
		return StopMaxItems, p.positionAt(*page.next, 0, page.offset+page.rawLen, nil)
	case seenRequests[requestKey(*page.next)]:
		return StopCycle, nil
	case pages >= maxPages:
		return StopMaxPages, p.positionAt(*page.next, 0, page.offset+page.rawLen, nil)
	}
	return "", nil
}

// nextRequest turns a rel=next link into the request to send: method
// defaults to GET; a GET href is used as is (the original parameters are not
// re-added); a POST sends the link body, overlaid on the current body when
// merge is true. Relative hrefs resolve against the page URL. A nil link
// gives a nil request. A link that cannot or may not be followed (not a
// URL, over maxNextURLLength, another method than GET or POST, outside the
// catalog's scope) gives a nil request and the reason.
func (c *Client) nextRequest(link *Link, current Request, pageURL *url.URL) (*Request, string) {
	if link == nil {
		return nil, ""
	}
	const notFollowed = "the catalog's next link was not followed: "
	href, err := resolveHref(pageURL, link.Href)
	if err != nil || strings.TrimSpace(link.Href) == "" {
		return nil, fmt.Sprintf(notFollowed+"its href %q is not a valid URL", upstream.TrimMessage(link.Href))
	}
	if len(href) > maxNextURLLength {
		return nil, fmt.Sprintf(notFollowed+"it is %d characters long (over %d), a next link that grows without bound", len(href), maxNextURLLength)
	}
	u, err := url.Parse(href)
	if err != nil {
		return nil, fmt.Sprintf(notFollowed+"its href %q is not a valid URL", upstream.TrimMessage(link.Href))
	}
	c.upgradeToCatalogScheme(u)
	r := &Request{Method: link.LinkMethod(), URL: u.String(), Headers: link.headerValues()}
	if why, _ := c.checkScope(*r); why != "" {
		return nil, notFollowed + why
	}
	if r.Method == http.MethodGet {
		return r, ""
	}
	switch {
	case link.Merge:
		merged, err := overlayJSON(current.Body, link.Body)
		if err != nil {
			return nil, notFollowed + "it asks to merge a body that is not a JSON object: " + upstream.TrimMessage(string(link.Body))
		}
		r.Body = merged
	case len(link.Body) > 0 && string(link.Body) != "null":
		r.Body = append(json.RawMessage(nil), link.Body...)
	default:
		// A POST next link without a body repeats the current one.
		r.Body = append(json.RawMessage(nil), current.Body...)
	}
	return r, ""
}

// overlayJSON returns base with the members of overlay set over it.
func overlayJSON(base, overlay json.RawMessage) (json.RawMessage, error) {
	merged := make(map[string]json.RawMessage)
	if len(bytes.TrimSpace(base)) > 0 {
		if err := json.Unmarshal(base, &merged); err != nil {
			return nil, err
		}
	}
	if len(bytes.TrimSpace(overlay)) > 0 && string(overlay) != "null" {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(overlay, &top); err != nil {
			return nil, err
		}
		for k, v := range top {
			merged[k] = v
		}
	}
	return json.Marshal(merged)
}

// requestKey identifies a request for cycle detection: method, URL and the
// canonical JSON of the body (keys sorted, no whitespace).
func requestKey(r Request) string {
	return methodOrGet(r.Method) + " " + r.URL + " " + canonicalJSON(r.Body)
}

// canonicalJSON re-encodes JSON with sorted keys and no whitespace; numbers
// keep their literal text. Invalid JSON is returned as is.
func canonicalJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(raw)
	}
	return string(out)
}

// validate rejects negative limits (zero means the default).
func (lim SearchLimits) validate() error {
	if lim.MaxItems < 0 {
		return &ParamError{Param: "max_items", Got: strconv.Itoa(lim.MaxItems), Accepted: "0 (no cap) or a positive number of items", Reason: "negative"}
	}
	if lim.MaxPages < 0 {
		return &ParamError{Param: "max_pages", Got: strconv.Itoa(lim.MaxPages), Accepted: "0 (the default, " + strconv.Itoa(DefaultMaxPages) + ") or a positive number of pages", Reason: "negative"}
	}
	return nil
}
