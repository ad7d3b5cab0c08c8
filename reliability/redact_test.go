package reliability

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactSecrets(t *testing.T) {
	for in, want := range map[string]string{
		"https://stac.example/v1?api_key=SECRET":                        "https://stac.example/v1?api_key=REDACTED",
		"GET https://h/v1/search?limit=5&access_token=SECRET&x=1: 500":  "GET https://h/v1/search?limit=5&access_token=REDACTED&x=1: 500",
		"https://user:SECRET@stac.example/v1":                           "https://REDACTED@stac.example/v1",
		"https://a.blob/x.tif?st=2024&se=2025&sp=r&sig=SECRET%2Bx":      "https://a.blob/x.tif?st=2024&se=2025&sp=r&sig=REDACTED",
		"https://h/x?X-Amz-Signature=SECRET&X-Amz-Credential=SECRET2":   "https://h/x?X-Amz-Signature=REDACTED&X-Amz-Credential=REDACTED",
		"https://earth-search.aws.element84.com/v1/search?limit=10&q=a": "https://earth-search.aws.element84.com/v1/search?limit=10&q=a",
	} {
		if got := RedactSecrets(in); got != want {
			t.Errorf("RedactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDenialTextIsRedacted(t *testing.T) {
	d := &Denial{Code: CodeNotRetryable, Host: "h", Attempts: 1, Err: errors.New(`Get "https://h/stac?api_key=SECRET": refused`)}
	if got := d.Error(); strings.Contains(got, "SECRET") || !strings.Contains(got, "api_key=REDACTED") {
		t.Errorf("denial text %q", got)
	}
}
