package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

func TestRenderError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
		want []string
	}{
		{"param", &stacclient.ParamError{Param: "bbox", Got: "1,2", Reason: "2 numbers", Accepted: "4 numbers"},
			[]string{"search_items", `"bbox"`, "2 numbers", "Received: 1,2", "Accepted: 4 numbers"}},
		{"not found", &stacclient.Error{Kind: stacclient.KindNotFound, Status: 404, Method: "GET", URL: "https://c/collections/x", Message: "no collection x"},
			[]string{"404", "GET https://c/collections/x", "no collection x", "search_collections"}},
		{"throttled", fmt.Errorf("page 2: %w", &stacclient.Error{Kind: stacclient.KindThrottled, Status: 429, RetryAfter: 3 * time.Second}),
			[]string{"429", "Retry after 3s", "rate-limiting"}},
		{"transport", &stacclient.Error{Kind: stacclient.KindTransport, Err: errors.New("connection refused")},
			[]string{"connection refused", "catalog_url"}},
		{"denial", &reliability.Denial{Code: "circuit_open", Attempts: 0, LastStatus: 503, LastMessage: "busy", Next: "wait 30 s"},
			[]string{"circuit_open", "503", "busy", "Next: wait 30 s"}},
		{"deadline", fmt.Errorf("searching: %w", context.DeadlineExceeded), []string{"deadline", "Narrow"}},
		{"other", errors.New("boom"), []string{"search_items: boom"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			msg := renderError("search_items", c.err).Error()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}

func TestRenderErrorIsIdempotentAndKeepsTheCause(t *testing.T) {
	t.Parallel()
	cause := &stacclient.Error{Kind: stacclient.KindServer, Status: 502}
	once := renderError("get_root", cause)
	if twice := renderError("get_root", once); twice != once { //nolint:errorlint // the same error, not one that wraps it
		t.Errorf("rendering twice changed the error: %q → %q", once, twice)
	}
	var se *stacclient.Error
	if !errors.As(once, &se) || se != cause {
		t.Error("the rendered error no longer unwraps to its cause")
	}
	if renderError("x", nil) != nil {
		t.Error("renderError(nil) is not nil")
	}
}

func TestUpstreamFailuresReachTheModelWithStatusAndMessage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/collections/broken":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"code":"InternalError","description":"database exploded"}`))
		case "/collections/private":
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"Forbidden"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	cs := newTestSession(t, testSessionOptions{CatalogURL: srv.URL})
	for id, want := range map[string][]string{
		"broken":  {"500", "database exploded"},
		"private": {"403", "Forbidden", "credentials"},
	} {
		msg := callErr(t, cs, "get_collection", map[string]any{"collection_id": id})
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q lacks %q", id, msg, w)
			}
		}
	}
}

// A catalog whose landing page never answers: the timeout advice says so
// and does not tell the model to narrow a search it never got to make
// (it said "ask for less, a narrower bbox").
func TestTimeoutOnTheLandingPageIsNotBlamedOnTheSearch(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	p := testPolicy()
	p.ToolTimeout = time.Second
	p.AttemptTimeout = 0 // follows the tool timeout
	cs := newTestSession(t, testSessionOptions{CatalogURL: srv.URL + "/v1", Policy: &p})
	res := callTool(t, cs, "search_items", map[string]any{"bbox": []float64{0, 0, 1, 1}})
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "landing page (/v1)") || !strings.Contains(text, "STAC_MCP_TOOL_TIMEOUT_SECS") {
		t.Fatalf("result %q, want a timeout naming the landing page and the setting", text)
	}
	if strings.Contains(text, "bbox") || strings.Contains(text, "max_items") {
		t.Errorf("advice %q tells the model to narrow a search that never started", text)
	}
}

// A search that is still running when the call's time runs out, on a
// catalog whose landing page and conformance had just answered: the error
// must not say the catalog "could not be reached" (it did, from
// the transport error the deadline left behind), and it names the search
// and the setting that gives it more time.
func TestTimedOutSlowSearchIsNotCalledUnreachable(t *testing.T) {
	t.Parallel()
	upstream := demoServer(t, stacserver.Options{})
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			// Read the body first: net/http notices a closed connection
			// (and ends r.Context()) only once the body has been read.
			_, _ = io.Copy(io.Discard, r.Body)
			<-r.Context().Done() // slower than the call's time
			return
		}
		proxy, err := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), r.Body)
		if err != nil {
			t.Error(err)
			return
		}
		proxy.Host = r.Host
		res, err := http.DefaultClient.Do(proxy)
		if err != nil {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	}))
	t.Cleanup(front.Close)
	p := testPolicy()
	p.ToolTimeout = time.Second
	p.AttemptTimeout = 0 // follows the tool timeout
	cs := newTestSession(t, testSessionOptions{CatalogURL: front.URL, Policy: &p})
	res := callTool(t, cs, "search_items", map[string]any{"bbox": []float64{0, 0, 1, 1}})
	text := resultText(res)
	if !res.IsError || !strings.Contains(text, "search (/search)") || !strings.Contains(text, reliability.EnvToolTimeout) {
		t.Fatalf("result %q, want a timeout naming the search and the setting", text)
	}
	if strings.Contains(text, "could not be reached") {
		t.Errorf("result %q says the catalog could not be reached, though its landing page had answered", text)
	}
}

// A catalog's key in the request URL (a configured catalog's ?api_key=…)
// never reaches the tool's error text, which the model reads.
func TestCatalogErrorTextHidesTheURLsKey(t *testing.T) {
	t.Parallel()
	e := &stacclient.Error{Kind: stacclient.KindServer, Status: 502, Method: "GET",
		URL: "https://catalog.example/v1/collections?api_key=S3CRET-K3Y&limit=10"}
	msg := stacErrorMessage("get_collection", e)
	if strings.Contains(msg, "S3CRET-K3Y") || !strings.Contains(msg, "catalog.example/v1/collections") {
		t.Errorf("error text %q shows the key or lost the URL", msg)
	}
}
