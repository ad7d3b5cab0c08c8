package main

import (
	"slices"
	"strings"
	"testing"
)

// TestUnknownSettingsAreReported (issue 10): a mistyped STAC_MCP_* name was
// silently ignored; now startup warns on stderr and names the closest
// setting.
func TestUnknownSettingsAreReported(t *testing.T) {
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
	var environ []string
	for _, name := range knownEnvNames() {
		environ = append(environ, name+"=x")
	}
	for _, table := range [][]setting{serverSettings, httpSettings, reliabilitySettings, secretSettings} {
		if !slices.Contains(knownEnvNames(), table[0].env) {
			t.Errorf("%s is not known: its settings table is missing from flagSettings", table[0].env)
		}
	}
	if w := unknownEnvWarnings(environ); len(w) != 0 {
		t.Errorf("documented variables reported as unknown: %v", w)
	}
	if d := editDistance("STAC_MCP_HEDG", "STAC_MCP_HEDGE"); d != 1 {
		t.Errorf("edit distance %d, want 1", d)
	}
}
