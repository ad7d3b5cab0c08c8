package redact

import (
	"strings"
	"testing"
)

func TestSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"https://stac.example/v1?api_key=SECRET":                        "https://stac.example/v1?api_key=REDACTED",
		"GET https://h/v1/search?limit=5&access_token=SECRET&x=1: 500":  "GET https://h/v1/search?limit=5&access_token=REDACTED&x=1: 500",
		"https://user:SECRET@stac.example/v1":                           "https://REDACTED@stac.example/v1",
		"https://a.blob/x.tif?st=2024&se=2025&sp=r&sig=SECRET%2Bx":      "https://a.blob/x.tif?st=2024&se=2025&sp=r&sig=REDACTED",
		"https://h/x?X-Amz-Signature=SECRET&X-Amz-Credential=SECRET2":   "https://h/x?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED",
		"https://earth-search.aws.element84.com/v1/search?limit=10&q=a": "https://earth-search.aws.element84.com/v1/search?limit=10&q=a",
	} {
		if got := Secrets(in); got != want {
			t.Errorf("Secrets(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"redis://user:hunter2@h:6379/0":        "redis://REDACTED@h:6379/0",
		"redis://:hunter2@h:6379/0":            "redis://REDACTED@h:6379/0",
		"redis://:p@ss'hunter2@h:6379/0":       "redis://REDACTED@h:6379/0", // characters that end Secrets' pattern
		"rediss://h:6379/0?dial_timeout=1s":    "rediss://h:6379/0?dial_timeout=1s",
		"https://h/stac?api_key=hunter2":       "https://h/stac?api_key=REDACTED",
		"redis://user:hunter2@h:6379/0\x7f%zz": "(an unparsable URL, not shown)",
	} {
		if got := URL(in); got != want || strings.Contains(got, "hunter2") {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPassword(t *testing.T) {
	got := Password(`invalid URL scheme in "http://user:hunter2@h/"; password hunter2`, "http://user:hunter2@h/")
	if strings.Contains(got, "hunter2") || !strings.Contains(got, "password REDACTED") {
		t.Errorf("Password kept the password: %s", got)
	}
}
