package reliability

import (
	"errors"
	"strings"
	"testing"
)

func TestDenialTextIsRedacted(t *testing.T) {
	d := &Denial{Code: CodeNotRetryable, Host: "h", Attempts: 1, Err: errors.New(`Get "https://h/stac?api_key=SECRET": refused`)}
	if got := d.Error(); strings.Contains(got, "SECRET") || !strings.Contains(got, "api_key=REDACTED") {
		t.Errorf("denial text %q", got)
	}
}
