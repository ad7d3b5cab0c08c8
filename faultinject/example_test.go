package faultinject_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/stacmcp/stac-mcp/faultinject"
)

// A harness keys each call with X-Fault-Tool and X-Fault-Invocation; the
// injector numbers the attempts. With a fixed seed, the journal is the same
// on every run.
func ExampleInjector_Middleware() {
	plan := faultinject.Plan{
		Seed: 7,
		Rate: 0.5,
		Mix:  faultinject.EqualMix(faultinject.KindsOf(faultinject.ClassRetryable)...),
	}
	injector, err := faultinject.New(plan)
	if err != nil {
		panic(err)
	}
	catalog := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"type":"Catalog","id":"demo"}`)
	})
	server := httptest.NewServer(injector.Middleware(catalog))
	defer server.Close()
	transport := &http.Transport{DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	for invocation := 1; invocation <= 4; invocation++ {
		for attempt := 1; attempt <= 3; attempt++ { // a naive retry loop
			req, _ := http.NewRequest(http.MethodGet, server.URL+"/", nil)
			req.Header.Set(faultinject.HeaderTool, "get_root")
			req.Header.Set(faultinject.HeaderInvocation, strconv.Itoa(invocation))
			resp, err := client.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if err == nil && resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
	}
	for _, r := range injector.Journal().Records() {
		fmt.Printf("%s #%s attempt %d: %v\n", r.Tool, r.Invocation, r.Attempt, r.Kind)
	}
	// Output:
	// get_root #1 attempt 1: http_504
	// get_root #1 attempt 2: truncated_body
	// get_root #1 attempt 3: none
	// get_root #2 attempt 1: none
	// get_root #3 attempt 1: none
	// get_root #4 attempt 1: none
}
