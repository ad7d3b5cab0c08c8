package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
)

func TestEveryLogLineOfACallSharesItsCorrelationID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, "busy"))
		rc, _, _ := tl.get("search_items", "/v1/search")
		events := tl.logs.events(t)
		names := map[string]int{}
		for _, e := range events {
			if e["correlation_id"] != rc.CorrelationID || e["tool_name"] != "search_items" {
				t.Errorf("log line %v lacks correlation_id %s or tool_name", e, rc.CorrelationID)
			}
			names[e["event"].(string)]++
		}
		if names[eventRetryAttempt] != 2 || names[eventRetryGiveUp] != 1 || names[eventToolComplete] != 1 {
			t.Errorf("events %v, want 2 retry_attempt, 1 retry_give_up, 1 tool_complete", names)
		}
		for i, e := range tl.logs.named(t, eventRetryAttempt) {
			if int(e["attempt"].(float64)) != i+2 || e["error_class"] != classHTTP5xx || int(e["status"].(float64)) != 503 ||
				e["url_path"] != "/v1/search" {
				t.Errorf("retry_attempt %d = %v, want attempt %d, class http_5xx, status 503, path /v1/search", i+1, e, i+2)
			}
		}
		for i, h := range tl.up.headers {
			if h.Get(correlationHeader) != rc.CorrelationID {
				t.Errorf("attempt %d sent X-Correlation-ID %q, want %q", i+1, h.Get(correlationHeader), rc.CorrelationID)
			}
		}
	})
}

func TestConcurrentCallsKeepTheirOwnCorrelationIDs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(500, "x"))
		ids := make(chan string, 2)
		for _, path := range []string{"/a", "/b"} {
			go func() {
				rc, _, _ := tl.get("tool"+path, path)
				ids <- rc.CorrelationID
			}()
		}
		a, b := <-ids, <-ids
		if a == b {
			t.Fatal("two calls got the same correlation id")
		}
		for _, e := range tl.logs.events(t) {
			id, tool := e["correlation_id"], e["tool_name"].(string)
			if id != a && id != b {
				t.Errorf("line with unknown correlation id: %v", e)
			}
			// Each id must only appear with its own tool.
			for _, other := range tl.logs.events(t) {
				if other["correlation_id"] == id && other["tool_name"] != tool {
					t.Fatalf("correlation id %v logged for %s and %s", id, tool, other["tool_name"])
				}
			}
		}
	})
}

func TestNewLogger(t *testing.T) {
	var buf bytes.Buffer
	log, err := NewLogger("", "", &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Debug().Msg("hidden")
	log.Info().Str("event", "x").Msg("shown")
	if out := buf.String(); strings.Contains(out, "hidden") || !strings.HasPrefix(out, "{") || !strings.Contains(out, `"event":"x"`) {
		t.Errorf("default logger wrote %q, want one JSON line at info", out)
	}
	buf.Reset()
	log, _ = NewLogger("debug", "console", &buf)
	log.Debug().Msg("visible")
	if out := buf.String(); !strings.Contains(out, "visible") || strings.HasPrefix(out, "{") {
		t.Errorf("console debug logger wrote %q", out)
	}
	for _, c := range []struct{ level, format, want string }{
		{"loud", "", `STAC_MCP_LOG_LEVEL="loud"`},
		{"info", "xml", `STAC_MCP_LOG_FORMAT="xml"`},
	} {
		if _, err := NewLogger(c.level, c.format, &buf); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "accepted") {
			t.Errorf("NewLogger(%q, %q) error %v, want one naming %s and the accepted values", c.level, c.format, err, c.want)
		}
	}
}

func TestMetricsHandlerServesTheRequiredNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tl := newTestLayer(t, noCache(), always(503, ""))
		_, _, _ = tl.get("search_items", "/v1/search")
		_, _ = tl.Run(context.Background(), "noop", testHost, func(context.Context) error { return nil })
		rec := &responseRecorder{header: http.Header{}}
		req, _ := http.NewRequest(http.MethodGet, "/metrics", nil)
		tl.MetricsHandler().ServeHTTP(rec, req)
		for _, want := range []string{
			`retries_attempted_total{tool_name="search_items"} 2`,
			`retry_exhausted_total{tool_name="search_items"} 1`,
			`tool_calls_total{outcome="retry_exhausted",tool_name="search_items"} 1`,
			`tool_calls_total{outcome="ok",tool_name="noop"} 1`,
			`upstream_requests_total{host="catalog.test",status_class="5xx"} 3`,
			`breaker_state{host="catalog.test"} 0`,
			`retry_budget_tokens{host="catalog.test"} 490`,
			"tool_duration_seconds_bucket",
			`timeouts_total{tool_name="noop"} 0`,
		} {
			if !strings.Contains(rec.body.String(), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

// responseRecorder is a minimal http.ResponseWriter (httptest would do, but
// this keeps the test free of sockets and goroutines).
type responseRecorder struct {
	header http.Header
	body   bytes.Buffer
	status int
}

func (r *responseRecorder) Header() http.Header         { return r.header }
func (r *responseRecorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *responseRecorder) WriteHeader(s int)           { r.status = s }

// A log line with a huge URL is capped: every string of
// the line keeps at most MaxLoggedString bytes, and the line stays one
// valid JSON object with its fields in order.
func TestLogLineWithHugeURLIsCapped(t *testing.T) {
	for _, format := range []string{"json", "console"} {
		var buf bytes.Buffer
		logger, err := NewLogger("info", format, &buf)
		if err != nil {
			t.Fatal(err)
		}
		huge := "https://stac.example/" + strings.Repeat("a", 900<<10)
		logger.Warn().Str("event", "retry_give_up").Str("url_path", huge).Str("error", "GET "+huge+": refused").Msg("gave up")
		line := buf.String()
		if len(line) > 4*MaxLoggedString {
			t.Errorf("%s: a log line with a 900 KB URL is %d bytes", format, len(line))
		}
		if !strings.Contains(line, "cut: ") || !strings.Contains(line, "retry_give_up") {
			t.Errorf("%s: capped line does not say what was cut: %.300s", format, line)
		}
		if format == "json" {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil || m["message"] != "gave up" {
				t.Errorf("capped line is not the same JSON object: %v %.300s", err, line)
			}
			if i, j := strings.Index(line, `"event"`), strings.Index(line, `"url_path"`); i < 0 || j < i {
				t.Errorf("field order changed: %.300s", line)
			}
		}
	}
}
