package catalog

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// A mistyped preset gets "did you mean", and over http
// the refusal of a name does not list local paths as accepted right after
// saying they are not.
func TestMistypedNamesAndHTTPAcceptedForms(t *testing.T) {
	for _, untrusted := range []bool{false, true} {
		cats := New(Options{HTTPClient: &http.Client{}, UntrustedCallers: untrusted})
		_, err := cats.Resolve(context.Background(), "planetary")
		if err == nil || !strings.Contains(err.Error(), "(did you mean planetary-computer?)") {
			t.Errorf("untrusted %v: %v, want a did-you-mean", untrusted, err)
		}
		if untrusted && err != nil && strings.Contains(err.Error(), "path of a local static catalog") {
			t.Errorf("over http the error lists local paths as accepted: %v", err)
		}
		if !untrusted && err != nil && !strings.Contains(err.Error(), "path of a local static catalog") {
			t.Errorf("over stdio the error does not list local paths: %v", err)
		}
		if _, err := cats.Resolve(context.Background(), "https://"); err == nil || (untrusted && strings.Contains(err.Error(), "local static catalog")) {
			t.Errorf("untrusted %v: bad URL error %v", untrusted, err)
		}
		if _, err := cats.Resolve(context.Background(), "demp"); err == nil || !strings.Contains(err.Error(), "did you mean demo?") {
			t.Errorf("untrusted %v: demp: %v", untrusted, err)
		}
		_ = cats.Close()
	}
}
