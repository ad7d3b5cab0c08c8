package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/reliability"
)

// TestReadmeCommandsRun runs every `go run ./cmd/stac-mcp …` line of the
// README in-process, so the quick start cannot silently rot.
func TestReadmeCommandsRun(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "go run ./cmd/stac-mcp "
	n := 0
	for line := range strings.Lines(string(raw)) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		n++
		args, err := shellWords(strings.TrimPrefix(line, prefix))
		if err != nil {
			t.Fatalf("README line %q: %v", line, err)
		}
		code, stdout, stderr := runForTest(t, nil, args...)
		if code != 0 || stdout == "" {
			t.Errorf("README command %q: exit %d, stdout %d bytes, stderr %s", line, code, len(stdout), stderr)
		}
	}
	if n == 0 {
		t.Fatalf("README has no %q command", prefix)
	}
}

// shellWords splits a command line on spaces, honouring single quotes (all
// the README uses).
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case quoted && r == '\'':
			quoted = false
		case quoted:
			cur.WriteRune(r)
		case r == '\'':
			quoted, inWord = true, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		return nil, os.ErrInvalid
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestReadmeListsEverySetting keeps the README's settings table complete:
// every flag and variable the command reads (reliability ones are checked
// against PolicyFromEnv in TestEveryReliabilityVariableIsASetting).
func TestReadmeListsEverySetting(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, s := range slices.Concat(flagSettings(), secretSettings) {
		if !strings.Contains(readme, "`"+s.env+"`") {
			t.Errorf("README lacks %s", s.env)
		}
		if s.flag != "" && !strings.Contains(readme, "`--"+s.flag+"`") {
			t.Errorf("README lacks --%s", s.flag)
		}
	}
}

// TestReliabilitySettingsShowTheirDefaults: --help and the README table give
// every reliability setting's default, and it is the one the policy uses
// (issue 10: the cache and bulkhead defaults were missing from both).
func TestReliabilitySettingsShowTheirDefaults(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	p := reliability.DefaultPolicy()
	defaults := map[string]string{
		"STAC_MCP_MAX_HOSTS":            fmt.Sprint(p.MaxHosts),
		"STAC_MCP_BODY_BUDGET_BYTES":    fmt.Sprint(p.BodyBudgetBytes),
		"STAC_MCP_TOOL_TIMEOUT_SECS":    fmt.Sprint(p.ToolTimeout.Seconds()),
		"STAC_MCP_ATTEMPT_TIMEOUT_SECS": fmt.Sprint(p.AttemptTimeout.Seconds()),
		"STAC_MCP_MAX_ATTEMPTS":         fmt.Sprint(p.MaxAttempts),
		"STAC_MCP_BACKOFF_BASE_SECS":    fmt.Sprint(p.BackoffBase.Seconds()),
		"STAC_MCP_RETRY_AFTER_CAP_SECS": fmt.Sprint(p.RetryAfterCap.Seconds()),
		"STAC_MCP_CACHE_TTL_SECS":       fmt.Sprint(p.CacheTTL.Seconds()),
		"STAC_MCP_CACHE_MAX_BYTES":      fmt.Sprint(p.CacheMaxBytes),
		"STAC_MCP_BULKHEAD_MAX":         fmt.Sprint(p.BulkheadMax),
		"STAC_MCP_HEDGE":                "off",
	}
	for _, s := range reliabilitySettings {
		want, ok := defaults[s.env]
		if !ok {
			t.Errorf("%s: no default known to this test", s.env)
			continue
		}
		if !containsWord(s.help, want) || !strings.Contains(s.help, "default") {
			t.Errorf("--help for %s %q does not give its default %s", s.env, s.help, want)
		}
		row := ""
		for line := range strings.Lines(string(raw)) {
			if strings.HasPrefix(line, "|") && strings.Contains(line, "`"+s.env+"`") {
				row = line
			}
		}
		if !containsWord(row, "("+want) && !containsWord(row, want+")") && !containsWord(row, "("+humanBytes(want)+")") {
			t.Errorf("README row for %s %q does not give its default (%s)", s.env, strings.TrimSpace(row), want)
		}
	}
}

// containsWord reports s containing w not glued to more digits or letters.
func containsWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(w)
		before := start == 0 || !isWordByte(s[start-1])
		after := end == len(s) || !isWordByte(s[end])
		if before && after {
			return true
		}
		i = start + 1
	}
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '.'
}

// humanBytes writes a whole number of MiB as the README does ("256 MiB");
// anything else is returned as it is.
func humanBytes(n string) string {
	var v int64
	if _, err := fmt.Sscan(n, &v); err == nil && v >= 1<<20 && v%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", v>>20)
	}
	return n
}
