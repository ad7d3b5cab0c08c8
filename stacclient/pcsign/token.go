package pcsign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Token is a SAS token for the assets of one collection.
type Token struct {
	Collection string
	// Value is the query string to append to a href ("st=…&se=…&sig=…"),
	// without a leading "?".
	Value string
	// Expiry is the token's msft:expiry: after it, signed hrefs stop working.
	Expiry time.Time
}

// tokenResponse is the Data Authentication API's answer.
type tokenResponse struct {
	Expiry string `json:"msft:expiry"`
	Token  string `json:"token"`
}

// maxTokenResponseBytes caps the answer read: a real one is under 1 KiB, so
// anything near the cap is not a token response.
const maxTokenResponseBytes = 64 << 10

// fetch asks the token endpoint for collectionID's token. Every failure is
// an *Error naming the request and, when there was an answer, its status
// and trimmed body.
func (s *Signer) fetch(ctx context.Context, collectionID string) (Token, error) {
	tokenURL := s.tokenURL + "/" + url.PathEscape(collectionID)
	fail := func(status int, body []byte, reason string, cause error) *Error {
		e := &Error{Collection: collectionID, URL: tokenURL, Status: status, Reason: reason, Err: cause}
		if len(body) > 0 {
			e.Body = trimBody(body)
		}
		return e
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, tokenURL, nil)
	if err != nil {
		return Token{}, fail(0, nil, "building the request", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", stacclient.DefaultUserAgent)
	// We only ask when our own cached token is stale, so an answer replayed
	// by a response cache (the reliability layer's, or a proxy's) would be
	// the stale token again.
	req.Header.Set("Cache-Control", "no-cache")
	if s.subscriptionKey != "" {
		req.Header.Set(subscriptionKeyHeader, s.subscriptionKey)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			// Name the context error itself, so errors.Is(err,
			// context.DeadlineExceeded) holds whatever the client wrapped.
			failure := fail(0, nil, "no answer before the request was cancelled or timed out", ctxErr)
			failure.requesterEnded = true
			return Token{}, failure
		}
		// The reliability layer's client ends here too when its retries are
		// spent; its error names the last status or transport failure.
		return Token{}, fail(0, nil, "the request got no usable answer", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponseBytes+1))
	if err != nil {
		failure := fail(resp.StatusCode, body, "reading the answer", err)
		failure.requesterEnded = ctx.Err() != nil
		return Token{}, failure
	}
	if len(body) > maxTokenResponseBytes {
		return Token{}, fail(resp.StatusCode, body, fmt.Sprintf("answer larger than %d bytes, which is not a token response", maxTokenResponseBytes), nil)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Token{}, fail(resp.StatusCode, body, "token endpoint answered with an error status", nil)
	}
	return s.decodeToken(collectionID, resp.StatusCode, body, fail)
}

// decodeToken checks that the answer is a usable token: JSON with a token
// that carries a signature and an RFC 3339 expiry that has not passed.
func (s *Signer) decodeToken(collectionID string, status int, body []byte,
	fail func(int, []byte, string, error) *Error) (Token, error) {
	var answer tokenResponse
	if err := json.Unmarshal(body, &answer); err != nil {
		return Token{}, fail(status, body, `answer is not JSON of the form {"msft:expiry": "<RFC 3339 time>", "token": "<query string>"}`, err)
	}
	value := strings.TrimPrefix(strings.TrimSpace(answer.Token), "?")
	if value == "" {
		return Token{}, fail(status, body, `answer has no "token" member`, nil)
	}
	query, err := url.ParseQuery(value)
	if err != nil {
		return Token{}, fail(status, body, `"token" is not a URL query string`, err)
	}
	if !query.Has(signatureParam) {
		// Without a sig parameter a signed href would look unsigned and be
		// signed again on every call.
		return Token{}, fail(status, body, `"token" has no sig parameter, so it is not a SAS token`, nil)
	}
	expiry, err := time.Parse(time.RFC3339, strings.TrimSpace(answer.Expiry))
	if err != nil {
		return Token{}, fail(status, body, `"msft:expiry" is missing or not an RFC 3339 time`, err)
	}
	if now := s.now(); !now.Before(expiry) {
		// A response cache in front of the endpoint can replay an old answer.
		return Token{}, fail(status, nil, fmt.Sprintf("token expired at %s, before it could be used (now %s)",
			expiry.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)), nil)
	}
	return Token{Collection: collectionID, Value: value, Expiry: expiry}, nil
}

// emptyCollectionError is the cause when no collection id was given.
func emptyCollectionError(got string) error {
	return &stacclient.ParamError{
		Param:    "collection_id",
		Got:      got,
		Accepted: `a Planetary Computer collection id, e.g. "sentinel-2-l2a" or "naip"`,
		Reason:   "empty; the token is issued per collection",
	}
}

// endedWithRequester reports whether err means only that the caller who made
// the request stopped waiting, not that the endpoint failed.
func endedWithRequester(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.requesterEnded
}
