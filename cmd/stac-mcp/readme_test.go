package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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
