package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/transport"
	"github.com/stacmcp/stac-mcp/stacclient/freetext"
)

// TestUnknownSettingsAreReported: a mistyped STAC_MCP_* name was
// silently ignored; now startup warns on stderr and names the closest
// setting.
func TestUnknownSettingsAreReported(t *testing.T) {
	t.Parallel()
	code, _, stderr := runForTest(t, map[string]string{
		"STAC_MCP_TOOL_TIMEOUT_SEC":  "30", // missing S
		"STAC_MCP_HTTP_MAX_SESSION":  "9",  // missing S
		"STAC_MCP_COMPLETELY_WRONG":  "1",
		"STAC_MCP_SLO_INVOCATIONS":   "5", // the benchmark harness's
		"STAC_MCP_TOOL_TIMEOUT_SECS": "20",
		"OTHER_VARIABLE":             "x",
	}, "--catalog", "demo", "tools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"STAC_MCP_TOOL_TIMEOUT_SEC is not a stac-mcp setting and is ignored; did you mean STAC_MCP_TOOL_TIMEOUT_SECS?",
		"STAC_MCP_HTTP_MAX_SESSION is not a stac-mcp setting and is ignored; did you mean STAC_MCP_HTTP_MAX_SESSIONS?",
		"STAC_MCP_COMPLETELY_WRONG is not a stac-mcp setting and is ignored; run stac-mcp --help",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, quiet := range []string{"STAC_MCP_SLO_INVOCATIONS", "STAC_MCP_TOOL_TIMEOUT_SECS ", "OTHER_VARIABLE"} {
		if strings.Contains(stderr, quiet) {
			t.Errorf("stderr warns about %s, which is fine:\n%s", quiet, stderr)
		}
	}
}

// TestEverySettingIsAKnownVariable: the known names come from the settings
// tables, so no documented variable is ever reported as unknown.
func TestEverySettingIsAKnownVariable(t *testing.T) {
	t.Parallel()
	var environ []string
	for _, name := range knownEnvNames() {
		environ = append(environ, name+"=x")
	}
	for _, table := range [][]settings.Setting{settings.Server, settings.HTTP, settings.Reliability, settings.Secrets} {
		if !slices.Contains(knownEnvNames(), table[0].Env) {
			t.Errorf("%s is not known: its settings table is missing from settings.WithFlags", table[0].Env)
		}
	}
	if w := unknownEnvWarnings(environ); len(w) != 0 {
		t.Errorf("documented variables reported as unknown: %v", w)
	}
	if d := freetext.EditDistance("STAC_MCP_HEDG", "STAC_MCP_HEDGE"); d != 1 {
		t.Errorf("edit distance %d, want 1", d)
	}
}

// TestRetiredSessionSettingsStartWithAWarning: the session settings of
// adr/0010 went with the sessions (adr/0015); a command line or an
// environment that still sets them starts, and the log says they do nothing.
func TestRetiredSessionSettingsStartWithAWarning(t *testing.T) {
	t.Parallel()
	env := map[string]string{"STAC_MCP_HTTP_SESSION_IDLE_SECS": "90"}
	cfg, err := loadConfig([]string{"http", "--http-max-sessions", "9"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("a retired setting refused to start: %v", err)
	}
	if len(cfg.Retired) != 2 || !strings.Contains(cfg.Retired[0], "--http-max-sessions is retired, no effect") ||
		!strings.Contains(cfg.Retired[1], "STAC_MCP_HTTP_SESSION_IDLE_SECS is retired, no effect") {
		t.Errorf("retired warnings %q; want one per retired setting set, naming it", cfg.Retired)
	}
	if w := unknownEnvWarnings([]string{"STAC_MCP_HTTP_MAX_SESSIONS=4"}); len(w) != 0 {
		t.Errorf("a retired variable is reported as unknown: %q", w)
	}
	var logs syncBuffer
	a, err := newApp(t.Context(), cfg, &logs)
	if err != nil {
		t.Fatal(err)
	}
	a.close()
	if !strings.Contains(logs.String(), `"event":"retired_setting"`) || !strings.Contains(logs.String(), "keeps no sessions") {
		t.Errorf("startup log lacks the retired-setting warning:\n%s", logs.String())
	}
}

// TestLimitSettingsParseAndValidate: every new limit is a flag and a
// variable (the flag wins), and a bad value refuses to start naming it.
func TestLimitSettingsParseAndValidate(t *testing.T) {
	t.Parallel()
	env := map[string]string{"STAC_MCP_MAX_HOSTS": "40"}
	cfg, err := loadConfig([]string{"http", "--http-max-conns", "100", "--http-max-conns-per-ip", "0",
		"--http-idle-timeout-secs", "5", "--http-body-timeout-secs", "2.5", "--http-max-body-bytes", "4096", "--body-budget-bytes", "134217728"},
		func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	want := transport.Limits{MaxConns: 100, MaxConnsPerIP: 0, IdleTimeout: 5 * time.Second, BodyTimeout: 2500 * time.Millisecond,
		MaxBodyBytes: 4096}
	if cfg.HTTP != want || cfg.Policy.MaxHosts != 40 || cfg.Policy.BodyBudgetBytes != 128<<20 {
		t.Errorf("limits %+v, max hosts %d, body budget %d; want %+v, 40, 128 MiB", cfg.HTTP, cfg.Policy.MaxHosts, cfg.Policy.BodyBudgetBytes, want)
	}
	if d := defaultHTTPLimits(); d.MaxConns != 512 || d.IdleTimeout != time.Minute {
		t.Errorf("defaults %+v", d)
	}
	for _, c := range []struct{ name, value string }{
		{"STAC_MCP_HTTP_MAX_CONNS", "lots"},
		{"STAC_MCP_HTTP_MAX_CONNS_PER_IP", "-1"},
		{"STAC_MCP_HTTP_IDLE_TIMEOUT_SECS", "0"},
		{"STAC_MCP_HTTP_BODY_TIMEOUT_SECS", "NaN"},
		{"STAC_MCP_HTTP_MAX_BODY_BYTES", "100"},
		{"STAC_MCP_MAX_HOSTS", "0"},
		{"STAC_MCP_BODY_BUDGET_BYTES", "1024"},
	} {
		code, _, stderr := runForTest(t, map[string]string{c.name: c.value}, "tools")
		if code != 2 || !strings.Contains(stderr, c.name) || !strings.Contains(stderr, c.value) {
			t.Errorf("%s=%s: exit %d, stderr %q; want 2 naming the variable and the value", c.name, c.value, code, stderr)
		}
	}
}
