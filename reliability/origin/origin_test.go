package origin

import (
	"net/http"
	"net/url"
	"testing"
)

func TestCheckRedirectOriginRules(t *testing.T) {
	req := func(raw string) *http.Request {
		u, _ := url.Parse(raw)
		return &http.Request{URL: u, Header: http.Header{"Authorization": {"x"}, "X-Api-Key": {"k"}, "User-Agent": {"ua"}}}
	}
	cases := []struct {
		name  string
		chain []string // first request ... the redirect being checked
		keeps bool
	}{
		{"same origin", []string{"https://a.example/v1", "https://a.example/v2"}, true},
		{"default port spelled out", []string{"https://a.example/v1", "https://A.example:443/v2"}, true},
		{"https to http downgrade", []string{"https://a.example/v1", "http://a.example/v1"}, false},
		{"another port", []string{"https://a.example/v1", "https://a.example:8443/v1"}, false},
		{"another host", []string{"https://a.example/v1", "https://b.example/v1"}, false},
		{"back to the origin after leaving it", []string{"https://a.example/v1", "https://b.example/x", "https://a.example/v1"}, false},
	}
	for _, c := range cases {
		var via []*http.Request
		for _, u := range c.chain[:len(c.chain)-1] {
			via = append(via, req(u))
		}
		next := req(c.chain[len(c.chain)-1])
		if err := CheckRedirect(next, via); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		kept := next.Header.Get("Authorization") != "" && next.Header.Get("X-Api-Key") != ""
		if kept != c.keeps || next.Header.Get("User-Agent") != "ua" {
			t.Errorf("%s: credentials kept = %v, want %v (headers %v)", c.name, kept, c.keeps, next.Header)
		}
	}
}
