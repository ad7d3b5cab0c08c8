package upstream

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMessage(t *testing.T) {
	long := strings.Repeat("word ", 100)
	cases := []struct{ contentType, body, want string }{
		{"application/json", `{"code":"NotFound","description":"Collection x not found"}`, "Collection x not found"},
		{"application/json", `{"detail":[{"loc":"bbox"}],"message":"bad bbox"}`, "bad bbox"},
		{"application/problem+json", `{"title":"Bad Request","detail":"limit too large"}`, "limit too large"},
		{"", "", ""},
		// Bodies that are not a JSON error message are described, never
		// echoed (SSRF read-back through error texts).
		{"text/html; charset=utf-8", "  <html>\n  <body>secret admin page</body></html> ", "a 49-byte text/html answer (not shown)"},
		{"", "\xff\xfe", "a 2-byte untyped answer (not shown)"},
		{"text/plain", "root:x:0:0:root:/root:/bin/bash", "a 31-byte text/plain answer (not shown)"},
		{"application/json", `{"AccessKeyId":"AKIA","SecretAccessKey":"s3cr3t"}`, "a 49-byte application/json answer (not shown), a JSON object without a message member"},
	}
	for _, c := range cases {
		got := Message(c.contentType, []byte(c.body))
		if got != c.want {
			t.Errorf("Message(%q, %q) = %q, want %q", c.contentType, c.body, got, c.want)
		}
		for _, secret := range []string{"secret admin", "root:x", "s3cr3t"} {
			if strings.Contains(got, secret) {
				t.Errorf("Message(%q) echoes %q", c.body, secret)
			}
		}
	}
	if got := Message("application/json", []byte(`{"message":"`+long+`"}`)); len([]rune(got)) != MaxMessageRunes+1 || !strings.HasSuffix(got, "…") {
		t.Errorf("long message not trimmed visibly: %d runes", len([]rune(got)))
	}
}

// Real error bodies recorded from public catalogs (testdata/real-errors).
func TestMessageOfRealErrorBodies(t *testing.T) {
	for file, want := range map[string]string{
		"earth-search-404.json": "Not Found",
		"radiant-401.json":      "Must provide API key or Bearer token to access this route.",
		"radiant-401.html":      "a 338-byte text/html answer (not shown)",
	} {
		body, err := os.ReadFile(filepath.Join("testdata", "real-errors", file))
		if err != nil {
			t.Fatal(err)
		}
		contentType := "application/json"
		if strings.HasSuffix(file, ".html") {
			contentType = "text/html"
		}
		if got := Message(contentType, body); got != want {
			t.Errorf("%s: message %q, want %q", file, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)
	cases := []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"2", 2 * time.Second, true},
		{"7", 7 * time.Second, true},
		{"99999999999", time.Duration(1<<63 - 1).Truncate(time.Second), true}, // huge: clamped, no overflow
		{" 0 ", 0, true},
		{"3600", time.Hour, true},
		{now.Add(3 * time.Second).Format(http.TimeFormat), 3 * time.Second, true},
		{"Saturday, 21-Nov-26 06:00:04 GMT", 4 * time.Second, true}, // RFC 850
		{"Sat Nov 21 06:00:05 2026", 5 * time.Second, true},         // asctime
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},    // past: now
		{"-1", 0, false},
		{"soon", 0, false},
		{"", 0, false},
		{"1.5", 0, false},
	}
	for _, c := range cases {
		got, ok := ParseRetryAfter(c.value, now)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}
