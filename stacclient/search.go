package stacclient

import (
	"context"
	"iter"
)

// Search is one item search in progress. Iterate it once with Pages or Items.
type Search struct{}

// Page is one page of results after duplicate ids were dropped.
type Page struct {
	Request Request // the request that produced this page
	Items   []Item  // items not seen on an earlier page, at most what MaxItems still allows
	Skipped int     // items of this page not yielded because MaxItems was reached
	Matched *int    // numberMatched or context.matched, when the server says
	Next    *Request
	Dropped int // duplicate ids dropped from this page
}

// StopReason says why an iteration ended.
type StopReason string

const (
	StopNoNext    StopReason = "no_next_link"
	StopEmptyPage StopReason = "empty_page"
	StopMaxItems  StopReason = "max_items"
	StopMaxPages  StopReason = "max_pages"
	StopCycle     StopReason = "cycle"      // a next link repeated an earlier request
	StopNoNewIDs  StopReason = "no_new_ids" // a page held only ids already seen
	StopError     StopReason = "error"
)

// Pages yields each page; iteration ends at the first error.
func (s *Search) Pages(ctx context.Context) iter.Seq2[*Page, error] { panic("unimplemented") }

// Items yields each item across pages.
func (s *Search) Items(ctx context.Context) iter.Seq2[*Item, error] { panic("unimplemented") }

// StopReason is why the last iteration ended.
func (s *Search) StopReason() StopReason { panic("unimplemented") }

// Cursor is where to continue, or nil when the results are exhausted.
func (s *Search) Cursor() *Cursor { panic("unimplemented") }

// Matched is the server's total match count from the last page that had one.
func (s *Search) Matched() (int, bool) { panic("unimplemented") }

// Method is the HTTP method of the first request (POST when the landing
// page's search link allows it, GET otherwise, GET after a POST 405).
func (s *Search) Method() string { panic("unimplemented") }
