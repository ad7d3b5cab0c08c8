package pcsign

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
)

func TestTokenIsFetchedOncePerCollectionWhileValid(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{RefreshBefore: 5 * time.Minute})
	ctx := context.Background()

	first, err := signer.Token(ctx, "naip")
	if err != nil {
		t.Fatalf("Token: %v", err)
	}
	wantExpiry := testEpoch.Add(time.Hour)
	if first.Collection != "naip" || first.Value != tokenValue("naip", 1) || !first.Expiry.Equal(wantExpiry) {
		t.Errorf("Token = %+v; want collection naip, value %q, expiry %s", first, tokenValue("naip", 1), wantExpiry)
	}
	for range 3 {
		clock.Advance(10 * time.Minute)
		again, err := signer.Token(ctx, "naip")
		if err != nil || again != first {
			t.Fatalf("Token at %s = %+v, %v; want the cached %+v", clock.Now(), again, err, first)
		}
	}
	if _, err := signer.Token(ctx, "landsat-c2-l2"); err != nil {
		t.Fatalf("Token(landsat-c2-l2): %v", err)
	}
	if n, m := endpoint.count("naip"), endpoint.count("landsat-c2-l2"); n != 1 || m != 1 {
		t.Errorf("token requests: naip %d, landsat-c2-l2 %d; want one each", n, m)
	}
}

func TestTokenIsRefetchedWithinRefreshBeforeOfExpiry(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{RefreshBefore: 5 * time.Minute})
	ctx := context.Background()

	if _, err := signer.Token(ctx, "naip"); err != nil {
		t.Fatal(err)
	}
	// One second before the refresh point the cached token is still used.
	clock.Advance(55*time.Minute - time.Second)
	if token, err := signer.Token(ctx, "naip"); err != nil || token.Value != tokenValue("naip", 1) {
		t.Fatalf("Token just before the refresh point = %+v, %v; want the first token", token, err)
	}
	// At expiry minus RefreshBefore it is replaced.
	clock.Advance(time.Second)
	refreshed, err := signer.Token(ctx, "naip")
	if err != nil {
		t.Fatal(err)
	}
	if refreshed.Value != tokenValue("naip", 2) || !refreshed.Expiry.Equal(clock.Now().Add(time.Hour)) {
		t.Errorf("Token at the refresh point = %+v; want the second token, valid for an hour", refreshed)
	}
	if n := endpoint.count("naip"); n != 2 {
		t.Errorf("token requests = %d, want 2", n)
	}
	// The new token is cached in turn.
	clock.Advance(time.Minute)
	if token, err := signer.Token(ctx, "naip"); err != nil || token != refreshed {
		t.Errorf("Token after refresh = %+v, %v; want the cached second token", token, err)
	}
	if n := endpoint.count("naip"); n != 2 {
		t.Errorf("token requests = %d, want still 2", n)
	}
}

func TestDefaultRefreshBeforeIsFiveMinutes(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{})
	ctx := context.Background()
	if _, err := signer.Token(ctx, "naip"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(55*time.Minute - time.Second)
	if _, err := signer.Token(ctx, "naip"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if _, err := signer.Token(ctx, "naip"); err != nil {
		t.Fatal(err)
	}
	if n := endpoint.count("naip"); n != 2 {
		t.Errorf("token requests = %d, want 2 (refetch exactly %s before expiry)", n, DefaultRefreshBefore)
	}
}

func TestShortLivedTokenIsUsedButNotCached(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	endpoint.tokenLifetime = 2 * time.Minute // already inside the 5-minute margin
	signer := startSigner(t, endpoint, clock, Options{RefreshBefore: 5 * time.Minute})

	for i := 1; i <= 2; i++ {
		token, err := signer.Token(context.Background(), "naip")
		if err != nil || token.Value != tokenValue("naip", i) {
			t.Fatalf("call %d: Token = %+v, %v; want token %d", i, token, err, i)
		}
	}
	if n := endpoint.count("naip"); n != 2 {
		t.Errorf("token requests = %d, want 2: a token inside the margin must not be cached", n)
	}
}

func TestTokenEndpointFailuresAreTypedAndNotCached(t *testing.T) {
	longBody := `{"detail":"` + strings.Repeat("overloaded ", 100) + `"}`
	cases := []struct {
		name       string
		answer     answer
		wantStatus int
		wantInText []string
		wantCause  func(error) bool
	}{
		{
			name:       "server error",
			answer:     answer{500, `{"detail":"Internal Server Error: token service unavailable"}`},
			wantStatus: 500,
			wantInText: []string{"HTTP 500", "error status", "token service unavailable"},
		},
		{
			name:       "unknown collection",
			answer:     answer{404, `{"detail":"Collection no-such-collection not found"}`},
			wantStatus: 404,
			wantInText: []string{"HTTP 404", "not found"},
		},
		{
			name:       "long error body is trimmed and says so",
			answer:     answer{502, longBody},
			wantStatus: 502,
			wantInText: []string{"HTTP 502", "(trimmed; " + strconv.Itoa(len(longBody)) + " bytes in all)"},
		},
		{
			name:       "invalid JSON",
			answer:     answer{200, `<html>maintenance</html>`},
			wantStatus: 200,
			wantInText: []string{"not JSON", "<html>maintenance</html>"},
			wantCause: func(err error) bool {
				var syntax *json.SyntaxError
				return errors.As(err, &syntax)
			},
		},
		{
			name:       "no token member",
			answer:     answer{200, `{"msft:expiry":"2026-11-21T07:00:00Z"}`},
			wantStatus: 200,
			wantInText: []string{`no "token" member`},
		},
		{
			name:       "token without signature",
			answer:     answer{200, `{"msft:expiry":"2026-11-21T07:00:00Z","token":"st=a&se=b&sp=rl"}`},
			wantStatus: 200,
			wantInText: []string{"no sig parameter"},
		},
		{
			name:       "expiry not RFC 3339",
			answer:     answer{200, `{"msft:expiry":"tomorrow","token":"se=b&sig=c"}`},
			wantStatus: 200,
			wantInText: []string{`"msft:expiry" is missing or not an RFC 3339 time`},
		},
		{
			name:       "token already expired",
			answer:     answer{200, `{"msft:expiry":"2026-11-21T05:59:59Z","token":"se=b&sig=c"}`},
			wantStatus: 200,
			wantInText: []string{"token expired at 2026-11-21T05:59:59Z", "now 2026-11-21T06:00:00Z"},
		},
		{
			name:       "oversized answer",
			answer:     answer{200, `{"token":"` + strings.Repeat("a", maxTokenResponseBytes) + `"}`},
			wantStatus: 200,
			wantInText: []string{"larger than 65536 bytes", "trimmed;"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := newFakeClock()
			endpoint := newFakeEndpoint(clock)
			endpoint.setRespond(func(string, int) answer { return c.answer })
			signer := startSigner(t, endpoint, clock, Options{})

			_, err := signer.Token(context.Background(), "naip")
			var signErr *Error
			if !errors.As(err, &signErr) {
				t.Fatalf("Token error = %v (%T); want *Error", err, err)
			}
			if !errors.Is(err, ErrSigningFailed) {
				t.Errorf("error does not match ErrSigningFailed")
			}
			if signErr.Status != c.wantStatus || signErr.Collection != "naip" || !strings.HasSuffix(signErr.URL, tokenPath+"naip") {
				t.Errorf("Error = %+v; want status %d, collection naip, the token URL", signErr, c.wantStatus)
			}
			text := err.Error()
			for _, want := range append([]string{"asset hrefs left unsigned", `collection "naip"`}, c.wantInText...) {
				if !strings.Contains(text, want) {
					t.Errorf("error text lacks %q:\n%s", want, text)
				}
			}
			if len(text) > 1000 {
				t.Errorf("error text is %d characters long; the body should be trimmed", len(text))
			}
			if c.wantCause != nil && !c.wantCause(err) {
				t.Errorf("error %v lacks the expected cause", err)
			}

			// The failure is not cached: the next call asks again and gets
			// the token the endpoint now hands out.
			endpoint.setRespond(nil)
			token, err := signer.Token(context.Background(), "naip")
			if err != nil || token.Value != tokenValue("naip", 2) {
				t.Errorf("Token after the failure = %+v, %v; want the second request's token", token, err)
			}
			if n := endpoint.count("naip"); n != 2 {
				t.Errorf("token requests = %d, want 2", n)
			}
		})
	}
}

func TestTokenTransportFailure(t *testing.T) {
	server := httptest.NewServer(http.NotFoundHandler())
	tokenURL := server.URL + "/api/sas/v1/token"
	client := server.Client()
	server.Close() // nothing listens there any more

	signer, err := New(Options{HTTPClient: client, TokenURL: tokenURL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = signer.Token(context.Background(), "naip")
	var signErr *Error
	if !errors.As(err, &signErr) || signErr.Status != 0 || !errors.Is(err, ErrSigningFailed) {
		t.Fatalf("Token error = %v; want an *Error without status matching ErrSigningFailed", err)
	}
	if !strings.Contains(err.Error(), "the request got no usable answer") {
		t.Errorf("error text does not say there was no answer: %s", err)
	}
}

func TestTokenRejectsEmptyCollection(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{})
	for _, id := range []string{"", "  "} {
		_, err := signer.Token(context.Background(), id)
		var param *stacclient.ParamError
		if !errors.As(err, &param) || param.Param != "collection_id" || !errors.Is(err, ErrSigningFailed) {
			t.Errorf("Token(%q) error = %v; want a collection_id ParamError inside an *Error", id, err)
		}
	}
	if n := endpoint.total(); n != 0 {
		t.Errorf("%d requests were sent for an empty collection id", n)
	}
}

func TestTokenRequestShape(t *testing.T) {
	clock := newFakeClock()
	endpoint := newFakeEndpoint(clock)
	signer := startSigner(t, endpoint, clock, Options{SubscriptionKey: "test-key"})

	if _, err := signer.Token(context.Background(), "weird/id"); err != nil {
		t.Fatal(err)
	}
	if got, want := endpoint.lastPath(), tokenPath+"weird%2Fid"; got != want {
		t.Errorf("request path = %q, want %q (the id is one escaped segment)", got, want)
	}
	header := endpoint.lastHeader()
	if got := header.Get("Ocp-Apim-Subscription-Key"); got != "test-key" {
		t.Errorf("subscription key header = %q, want test-key", got)
	}
	if got := header.Get("User-Agent"); got != stacclient.DefaultUserAgent {
		t.Errorf("User-Agent = %q, want %q", got, stacclient.DefaultUserAgent)
	}

	plain := startSigner(t, endpoint, clock, Options{})
	if _, err := plain.Token(context.Background(), "naip"); err != nil {
		t.Fatal(err)
	}
	if _, sent := endpoint.lastHeader()["Ocp-Apim-Subscription-Key"]; sent {
		t.Errorf("a subscription key header was sent without a key")
	}
}

func TestNewValidatesOptions(t *testing.T) {
	cases := []struct {
		name      string
		opts      Options
		wantParam string
	}{
		{"relative token URL", Options{TokenURL: "/api/sas/v1/token"}, "TokenURL"},
		{"ftp token URL", Options{TokenURL: "ftp://example.com/token"}, "TokenURL"},
		{"token URL with query", Options{TokenURL: "https://example.com/token?x=1"}, "TokenURL"},
		{"negative refresh margin", Options{RefreshBefore: -time.Minute}, "RefreshBefore"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(c.opts)
			var param *stacclient.ParamError
			if !errors.As(err, &param) || param.Param != c.wantParam || param.Accepted == "" {
				t.Errorf("New error = %v; want a ParamError naming %s with the accepted forms", err, c.wantParam)
			}
		})
	}

	signer, err := New(Options{})
	if err != nil {
		t.Fatalf("New(zero Options): %v", err)
	}
	if signer.tokenURL != DefaultTokenURL || signer.refreshBefore != DefaultRefreshBefore || signer.http == nil || signer.http.Timeout == 0 {
		t.Errorf("defaults: token URL %q, refresh %s, client %v; want %q, %s and a client with a timeout",
			signer.tokenURL, signer.refreshBefore, signer.http, DefaultTokenURL, DefaultRefreshBefore)
	}
}
