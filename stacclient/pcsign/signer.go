package pcsign

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
	"golang.org/x/sync/singleflight"
)

// Options configures a Signer. The zero value is usable.
type Options struct {
	// HTTPClient makes the token requests; nil means a client with a 30 s
	// timeout. Production passes the reliability layer's client, so token
	// fetches are retried, timed and counted like every upstream request.
	HTTPClient *http.Client
	// TokenURL is the per-collection token endpoint; "" means
	// DefaultTokenURL. Tests point it at a fake endpoint.
	TokenURL string
	// RefreshBefore is how long before its expiry a cached token is
	// replaced, so that a href signed now still works while it is being
	// downloaded; 0 means DefaultRefreshBefore.
	RefreshBefore time.Duration
	// Now is the clock that expiries are compared with; nil means time.Now.
	Now func() time.Time
	// SubscriptionKey is an optional Planetary Computer API key, sent as
	// Ocp-Apim-Subscription-Key to the token endpoint only. Registered users
	// get longer-lived tokens and gentler rate limits; "" sends none.
	SubscriptionKey string
}

// DefaultRefreshBefore is the refresh margin when Options.RefreshBefore is 0:
// long enough to download a large asset with a freshly signed href.
const DefaultRefreshBefore = 5 * time.Minute

// defaultHTTPTimeout bounds a token request when no HTTPClient is given.
const defaultHTTPTimeout = 30 * time.Second

// subscriptionKeyHeader carries Options.SubscriptionKey.
const subscriptionKeyHeader = "Ocp-Apim-Subscription-Key"

// leaderCancelledRetries is how many times a caller whose own context is
// still live joins a new fetch after the fetch it waited on was cancelled by
// the caller that started it.
const leaderCancelledRetries = 2

// Signer fetches, caches and applies Planetary Computer SAS tokens. It is
// safe for concurrent use; one Signer is meant to serve the whole process.
type Signer struct {
	http            *http.Client
	tokenURL        string
	refreshBefore   time.Duration
	now             func() time.Time
	subscriptionKey string

	flight singleflight.Group

	mu     sync.Mutex
	tokens map[string]Token // by collection id; only tokens fresh when stored
}

// New builds a Signer. It fails, naming the option, when TokenURL is not an
// absolute http(s) URL or RefreshBefore is negative.
func New(opts Options) (*Signer, error) {
	tokenURL := strings.TrimSpace(opts.TokenURL)
	if tokenURL == "" {
		tokenURL = DefaultTokenURL
	}
	u, err := url.Parse(tokenURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, &stacclient.ParamError{
			Param:    "TokenURL",
			Got:      opts.TokenURL,
			Accepted: `an absolute http(s) URL without query or fragment, to which "/{collection_id}" is appended, e.g. ` + DefaultTokenURL,
			Reason:   "not such a URL",
		}
	}
	if opts.RefreshBefore < 0 {
		return nil, &stacclient.ParamError{
			Param:    "RefreshBefore",
			Got:      opts.RefreshBefore.String(),
			Accepted: "0 (the default, " + DefaultRefreshBefore.String() + ") or a positive duration",
			Reason:   "negative",
		}
	}
	s := &Signer{
		http:            opts.HTTPClient,
		tokenURL:        strings.TrimSuffix(tokenURL, "/"),
		refreshBefore:   opts.RefreshBefore,
		now:             opts.Now,
		subscriptionKey: opts.SubscriptionKey,
		tokens:          map[string]Token{},
	}
	if s.http == nil {
		s.http = &http.Client{Timeout: defaultHTTPTimeout}
	}
	if s.refreshBefore == 0 {
		s.refreshBefore = DefaultRefreshBefore
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Token returns collectionID's token: the cached one while it is more than
// RefreshBefore from expiry, otherwise a new one from the token endpoint.
// Concurrent calls for one collection share a single request. Failures are
// not cached, so the next call asks again. Errors are *Error and match
// ErrSigningFailed.
func (s *Signer) Token(ctx context.Context, collectionID string) (Token, error) {
	if strings.TrimSpace(collectionID) == "" {
		return Token{}, &Error{Collection: collectionID, Reason: "no collection id", Err: emptyCollectionError(collectionID)}
	}
	for attempt := 0; ; attempt++ {
		if token, ok := s.cached(collectionID); ok {
			return token, nil
		}
		if err := ctx.Err(); err != nil {
			return Token{}, &Error{Collection: collectionID, Reason: "not requested: the call was already cancelled or timed out", Err: err}
		}
		// The fetch runs under the context of the call that starts it; the
		// others wait on their own context and stop waiting when it ends.
		results := s.flight.DoChan(collectionID, func() (any, error) {
			if token, ok := s.cached(collectionID); ok {
				return token, nil // stored by a fetch that finished just now
			}
			token, err := s.fetch(ctx, collectionID)
			if err == nil {
				s.store(token)
			}
			return token, err
		})
		select {
		case res := <-results:
			if res.Err != nil {
				if endedWithRequester(res.Err) && ctx.Err() == nil && attempt < leaderCancelledRetries {
					continue // the caller that started the fetch gave up; we have not
				}
				return Token{}, res.Err
			}
			return res.Val.(Token), nil
		case <-ctx.Done():
			return Token{}, &Error{Collection: collectionID, URL: s.tokenURL + "/" + url.PathEscape(collectionID),
				Reason: "gave up waiting for the token: the call was cancelled or timed out", Err: ctx.Err()}
		}
	}
}

// fresh reports whether token can still be handed out: more than
// RefreshBefore before its expiry.
func (s *Signer) fresh(token Token) bool {
	return s.now().Before(token.Expiry.Add(-s.refreshBefore))
}

func (s *Signer) cached(collectionID string) (Token, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	token, ok := s.tokens[collectionID]
	if ok && s.fresh(token) {
		return token, true
	}
	return Token{}, false
}

// store caches a token if it is fresh, and drops the cached tokens that are
// not, so the cache holds at most one live token per collection in use.
// A token fetched already inside the refresh margin is used once, not kept.
func (s *Signer) store(token Token) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, old := range s.tokens {
		if !s.fresh(old) {
			delete(s.tokens, id)
		}
	}
	if s.fresh(token) {
		s.tokens[token.Collection] = token
	}
}
