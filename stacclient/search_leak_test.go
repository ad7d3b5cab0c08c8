package stacclient

import (
	"context"
	"net/http"
	"testing"

	"go.uber.org/goleak"
)

// Stopping an iteration early, on an error, or on a body over the cap must
// not leave response bodies open (their connections' goroutines would leak).
func TestSearchLeavesNoGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	f := newFakeSearch(t, idPages(5, 3), "POST")
	transport := &http.Transport{}
	c, err := New(f.URL, Options{HTTPClient: &http.Client{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	for range c.Search(SearchParams{}, SearchLimits{}).Items(context.Background()) { //nolint:errcheck // abandons the search after one step, whatever it yielded: the leak check is about abandoning
		break
	}
	collectIDs(t, c.Search(SearchParams{}, SearchLimits{MaxItems: 4}))
	f.nextOf = func(page int) int { return page + 10 } // a next link to a missing page: an error
	for _, err := range c.Search(SearchParams{}, SearchLimits{}).Items(context.Background()) {
		if err != nil {
			break
		}
	}
	// A page over the body cap is abandoned unread: its body must still be closed.
	small, err := New(f.URL, Options{HTTPClient: &http.Client{Transport: transport}, MaxBodyBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := small.Root(context.Background()); err == nil {
		t.Fatal("a landing page over a 100-byte cap was accepted")
	}
	transport.CloseIdleConnections()
	f.Close()
}
