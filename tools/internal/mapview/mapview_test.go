package mapview

import (
	"regexp"
	"strings"
	"testing"
)

// TestViewIsSelfContainedAndOffline: one HTML document that loads nothing
// (no external script, style, image or frame; a CSP meta forbids
// connections), so it renders offline and in a host that allows no
// domains.
func TestViewIsSelfContainedAndOffline(t *testing.T) {
	if !strings.HasPrefix(HTML, "<!doctype html>") || !strings.HasSuffix(strings.TrimSpace(HTML), "</html>") {
		t.Fatalf("view.html is not an HTML document (%d bytes)", len(HTML))
	}
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`(?i)<script[^>]*\bsrc=`), regexp.MustCompile(`(?i)<link\b`), regexp.MustCompile(`(?i)<iframe\b`),
		regexp.MustCompile(`(?i)@import`), regexp.MustCompile(`(?i)\burl\(\s*['"]?(https?:)?//`),
	} {
		if loc := bad.FindStringIndex(HTML); loc != nil {
			t.Errorf("view.html loads something: %q", HTML[loc[0]:min(loc[1]+40, len(HTML))])
		}
	}
	// The only absolute URL is the SVG namespace, an identifier never fetched.
	for _, u := range regexp.MustCompile(`https?://[^\s"'<>)]+`).FindAllString(HTML, -1) {
		if u != "http://www.w3.org/2000/svg" {
			t.Errorf("view.html names the URL %s", u)
		}
	}
	if !strings.Contains(HTML, `content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'none';`) {
		t.Error("view.html lacks its restrictive Content-Security-Policy meta")
	}
}

// TestViewNeverWritesMarkup: item ids, titles and properties come from
// catalogs, so the view only sets text (textContent) and attributes; no
// API that parses markup may appear in the bundle.
func TestViewNeverWritesMarkup(t *testing.T) {
	for _, api := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "createContextualFragment", "DOMParser", "eval(", "new Function"} {
		if strings.Contains(HTML, api) {
			t.Errorf("view.html uses %s", api)
		}
	}
}
