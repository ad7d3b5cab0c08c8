package stacclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stacmcp/stac-mcp/reliability"
)

// The pager is the one pagination engine behind item search and the
// collections list. It follows the first rel=next link of each page exactly
// as the server wrote it and stops on: no next link, an empty page, the item
// or page cap, a repeated request (cycle), or a page of already-seen ids.

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
}

// pager holds the settings and the outcome of one iteration.
type pager[E any] struct {
	lim   SearchLimits
	idOf  func(*E) string
	fetch func(ctx context.Context, r Request, first bool) (pagerDoc[E], error)

	mu          sync.Mutex
	stop        StopReason
	cursor      *Cursor
	matched     *int
	firstMethod string
	seenOrder   []string // ids yielded, oldest first (for cursors)
}

// cursorAt is a cursor for r that carries the ids yielded so far, except
// those in undelivered (yielded by the engine but not received by the
// caller, who stopped early).
func (p *pager[E]) cursorAt(r Request, skip int, undelivered map[string]bool) *Cursor {
	p.mu.Lock()
	defer p.mu.Unlock()
	var seen []string
	for i := len(p.seenOrder) - 1; i >= 0 && len(seen) < MaxCursorSeenIDs; i-- {
		if id := p.seenOrder[i]; !undelivered[id] {
			seen = append(seen, id)
		}
	}
	slices.Reverse(seen)
	return &Cursor{Request: r, Skip: skip, SeenIDs: seen}
}

func (p *pager[E]) finish(stop StopReason, cur *Cursor) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stop, p.cursor = stop, cur
}

func (p *pager[E]) state() (StopReason, *Cursor, *int, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop, p.cursor, p.matched, p.firstMethod
}

// run iterates pages starting with the request first builds, skipping the
// first skip elements of the first page (a resumed cursor).
func (p *pager[E]) run(ctx context.Context, first func(context.Context) (Request, error), skip int, seen []string) iter.Seq2[*pagerPage[E], error] {
	return func(yield func(*pagerPage[E], error) bool) {
		seenIDs := make(map[string]bool, len(seen))
		for _, id := range seen {
			seenIDs[id] = true
		}
		p.mu.Lock()
		p.stop, p.cursor, p.matched, p.firstMethod = "", nil, nil, ""
		p.seenOrder = append([]string(nil), seen...)
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
		skip = max(skip, 0)

		for {
			seenRequests[requestKey(req)] = true
			doc, err := p.fetch(ctx, req, isFirst)
			if err != nil {
				p.finish(StopError, p.cursorAt(req, skip, nil))
				yield(nil, err)
				return
			}
			req = doc.req
			pages++
			p.mu.Lock()
			if isFirst {
				p.firstMethod = methodOrGet(req.Method)
			}
			if doc.matched != nil {
				p.matched = doc.matched
			}
			p.mu.Unlock()
			isFirst = false

			page := &pagerPage[E]{req: req, rawLen: len(doc.elems), matched: doc.matched}
			consumed := p.selectElems(page, doc.elems, skip, yielded, seenIDs)
			yielded += len(page.elems)
			next, nextErr := nextRequest(FindLink(doc.links, "next"), req, doc.url)
			page.next = next

			stop, cur := p.stopAfter(page, doc.elems, skip, consumed, yielded, pages, maxPages, seenRequests)
			if nextErr != nil && stop == "" {
				stop = StopError
			}
			if !yield(page, nil) {
				if stop == "" {
					stop, cur = StopConsumer, p.cursorAt(*next, 0, nil)
				}
				p.finish(stop, cur)
				return
			}
			if stop == StopError {
				p.finish(StopError, nil)
				yield(nil, nextErr)
				return
			}
			if stop != "" {
				p.finish(stop, cur)
				return
			}
			req, skip = *next, 0
		}
	}
}

// selectElems fills page.elems with the elements from skip on that are new
// and fit under MaxItems, and returns how many of the served elements were
// consumed (yielded or dropped as duplicates).
func (p *pager[E]) selectElems(page *pagerPage[E], elems []E, skip, yielded int, seenIDs map[string]bool) int {
	consumed := min(skip, len(elems))
	for i := consumed; i < len(elems); i++ {
		id := p.idOf(&elems[i])
		duplicate := id != "" && seenIDs[id]
		full := p.lim.MaxItems > 0 && yielded+len(page.elems) >= p.lim.MaxItems
		if full && !duplicate {
			break
		}
		consumed = i + 1
		if duplicate {
			page.dropped++
			continue
		}
		if id != "" {
			seenIDs[id] = true
			p.mu.Lock()
			p.seenOrder = append(p.seenOrder, id)
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
func (p *pager[E]) stopAfter(page *pagerPage[E], elems []E, skip, consumed, yielded, pages, maxPages int, seenRequests map[string]bool) (StopReason, *Cursor) {
	considered := len(elems) - min(skip, len(elems))
	switch {
	case len(elems) == 0:
		return StopEmptyPage, nil
	case page.skipped > 0:
		return StopMaxItems, p.cursorAt(page.req, consumed, nil)
	case considered > 0 && len(page.elems) == 0 && page.dropped == considered:
		return StopNoNewIDs, nil
	case page.next == nil:
		return StopNoNext, nil
	case p.lim.MaxItems > 0 && yielded >= p.lim.MaxItems:
		return StopMaxItems, p.cursorAt(*page.next, 0, nil)
	case seenRequests[requestKey(*page.next)]:
		return StopCycle, nil
	case pages >= maxPages:
		return StopMaxPages, p.cursorAt(*page.next, 0, nil)
	}
	return "", nil
}

// nextRequest turns a rel=next link into the request to send: method
// defaults to GET; a GET href is used as is (the original parameters are not
// re-added); a POST sends the link body, overlaid on the current body when
// merge is true. Relative hrefs resolve against the page URL. A nil link
// gives a nil request.
func nextRequest(link *Link, current Request, pageURL *url.URL) (*Request, error) {
	if link == nil {
		return nil, nil
	}
	href, err := resolveHref(pageURL, link.Href)
	if err != nil || strings.TrimSpace(link.Href) == "" {
		return nil, &Error{Kind: KindInvalidSTAC, Method: current.Method, URL: current.URL,
			Message: fmt.Sprintf("the next link href %q is not a valid URL; the results may continue but cannot be reached", reliability.TrimMessage(link.Href))}
	}
	if len(href) > maxNextURLLength {
		return nil, &Error{Kind: KindInvalidSTAC, Method: current.Method, URL: current.URL,
			Message: fmt.Sprintf("the next link is %d characters long (over %d); stopping to avoid a next link that grows without bound", len(href), maxNextURLLength)}
	}
	r := &Request{Method: link.LinkMethod(), URL: href, Headers: link.headerValues()}
	if r.Method == "GET" || r.Method == "HEAD" {
		return r, nil
	}
	switch {
	case link.Merge:
		merged, err := overlayJSON(current.Body, link.Body)
		if err != nil {
			return nil, &Error{Kind: KindInvalidSTAC, Method: current.Method, URL: current.URL,
				Message: "the next link asks to merge a body that is not a JSON object: " + reliability.TrimMessage(string(link.Body))}
		}
		r.Body = merged
	case len(link.Body) > 0 && string(link.Body) != "null":
		r.Body = append(json.RawMessage(nil), link.Body...)
	default:
		// A POST next link without a body repeats the current one.
		r.Body = append(json.RawMessage(nil), current.Body...)
	}
	return r, nil
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
