package upstream

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A catalog's own short text error is shown, cleaned:
// Planetary Computer answers an unfiltered search 422 text/plain
// "collection is required", which the model needs to read.
func TestCatalogMessageShowsShortPlainText(t *testing.T) {
	cases := []struct{ name, contentType, body, want string }{
		{"planetary computer 422", "text/plain", "collection is required", "collection is required"},
		{"untyped", "", "limit must be at most 1000\n", "limit must be at most 1000"},
		{"charset", "text/plain; charset=utf-8", "bad\tdatetime:\r\n  2025-13-01", "bad datetime: 2025-13-01"},
		{"terminal escapes and bidi overrides removed", "text/plain", "bad\x1b[31m bbox\x1b[0m\u202e\u200b\x07", "bad bbox"},
		{"url key redacted", "text/plain", "upstream https://x.example/s?api_key=S3CRET failed", "upstream https://x.example/s?api_key=REDACTED failed"},
		{"assignment redacted", "text/plain", `invalid password=hunter22 for user; X-Api-Key: abcdef123`, "invalid password=REDACTED for user; X-Api-Key: REDACTED"},
		{"bearer redacted", "text/plain", "token Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig expired", "token Bearer REDACTED expired"},
		{"aws key redacted", "text/plain", "AKIAIOSFODNN7EXAMPLE is not allowed", "REDACTED is not allowed"},
		// Still described: markup, documents, binary, long bodies.
		{"html", "text/html", "<html><body>Bad Gateway</body></html>", "a 37-byte text/html answer (not shown)"},
		{"html as text", "text/plain", "<html><body>Bad Gateway</body></html>", "a 37-byte text/plain answer (not shown)"},
		{"json without message", "application/json", `{"AccessKeyId":"AKIA","SecretAccessKey":"s3cr3t"}`, "a 49-byte application/json answer (not shown), a JSON object without a message member"},
		{"binary", "", "\xff\xfe\x00\x01", "a 4-byte untyped answer (not shown)"},
		{"nul", "text/plain", "ok\x00ok", "a 5-byte text/plain answer (not shown)"},
		{"octet-stream", "application/octet-stream", "collection is required", "a 22-byte application/octet-stream answer (not shown)"},
		{"too long", "text/plain", strings.Repeat("a", MaxShownTextBytes+1), "a 2049-byte text/plain answer (not shown)"},
		{"mostly controls", "text/plain", strings.Repeat("a\x01", 20), "a 40-byte text/plain answer (not shown)"},
	}
	for _, c := range cases {
		if got := CatalogMessage(c.contentType, []byte(c.body)); got != c.want {
			t.Errorf("%s: CatalogMessage = %q, want %q", c.name, got, c.want)
		}
	}
	// A JSON message member is read as before.
	if got := CatalogMessage("application/json", []byte(`{"detail":"limit too large"}`)); got != "limit too large" {
		t.Errorf("JSON message: %q", got)
	}
	long := strings.Repeat("word ", 300)
	if got := CatalogMessage("text/plain", []byte(long)); len([]rune(got)) != MaxMessageRunes+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("long text not cut visibly: %d runes", len([]rune(got)))
	}
}

// MessageOf shows text only for an answer from the origin the request was
// marked with: a body from any other host (a redirect elsewhere, a URL a
// client named that never answered as a catalog) stays described.
func TestMessageOfShowsTextOnlyFromTheCatalogOrigin(t *testing.T) {
	resp := func(ctx context.Context, raw string) *http.Response {
		u, _ := url.Parse(raw)
		req := (&http.Request{URL: u}).WithContext(ctx)
		return &http.Response{Header: http.Header{"Content-Type": {"text/plain"}}, Request: req}
	}
	body := []byte("collection is required")
	marked := WithCatalogOrigin(context.Background(), "https://cat.example:443")
	if got := MessageOf(resp(marked, "https://cat.example/api/search"), body); got != "collection is required" {
		t.Errorf("catalog origin: %q", got)
	}
	for _, r := range []*http.Response{
		resp(marked, "https://elsewhere.example/search"),      // redirected off the catalog
		resp(context.Background(), "https://cat.example/api"), // not marked
		{Header: http.Header{"Content-Type": {"text/plain"}}}, // no request
	} {
		if got := MessageOf(r, body); got != "a 22-byte text/plain answer (not shown)" {
			t.Errorf("%v: %q, want the description", r.Request, got)
		}
	}
}

// An asset request's error answer from another origin than the catalog's
// is only described, its JSON message member included: an href may reach
// an internal service.
func TestMessageOfDescribesAssetAnswers(t *testing.T) {
	resp := func(ctx context.Context, raw string) *http.Response {
		u, _ := url.Parse(raw)
		req := (&http.Request{URL: u}).WithContext(ctx)
		return &http.Response{Header: http.Header{"Content-Type": {"application/json"}}, Request: req}
	}
	body := []byte(`{"message":"SECRET token abc"}`)
	asset := WithDescribedAnswers(WithCatalogOrigin(context.Background(), "https://cat.example:443"))
	if got := MessageOf(resp(asset, "http://10.0.0.1/x.tif"), body); got != "a 30-byte application/json answer (not shown)" {
		t.Errorf("another origin: %q, want the description", got)
	}
	if got := MessageOf(resp(asset, "https://cat.example/x.tif"), body); got != "SECRET token abc" {
		t.Errorf("the catalog's own origin: %q, want its message", got)
	}
	if got := MessageOf(resp(context.Background(), "http://10.0.0.1/x.tif"), body); got != "SECRET token abc" {
		t.Errorf("an unmarked request: %q (Message shows JSON message members)", got)
	}
}
