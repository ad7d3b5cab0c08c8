// Package doccmd reads the commands the docs show (README.md, docs/,
// bench/RESULTS.md): a Markdown file cut into fenced blocks and prose
// lines, a `go run ./cmd/stac-mcp …` line split into its arguments, and
// the rule by which an image such a command writes is the committed one.
// cmd/stac-mcp's docs tests run the commands and compare what they print
// and write; cmd/stac-mcp/internal/gen (go generate) writes the images.
package doccmd

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// GoRunPrefix starts every command line the docs show and the tests run.
const GoRunPrefix = "go run ./cmd/stac-mcp "

// Files lists the Markdown files whose commands are run: README.md,
// CONTRIBUTING.md, bench/RESULTS.md and docs/*.md, slash-separated,
// relative to root (the repository's).
func Files(root string) ([]string, error) {
	files := []string{"README.md", "CONTRIBUTING.md", "bench/RESULTS.md"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		return nil, err
	}
	if len(pages) == 0 {
		return nil, errors.New("docs/ has no pages")
	}
	for _, p := range pages {
		files = append(files, "docs/"+filepath.Base(p))
	}
	return files, nil
}

// Block is a part of a Markdown file: a fenced code block (Fenced true,
// Lang its info string's first word) or one line of prose.
type Block struct {
	Fenced   bool
	Unclosed bool // a fence that runs to the end of the file
	Lang     string
	Text     string // the block's lines, or the prose line
	Line     int    // 1-based line of the opening fence or of the prose line
}

// Split cuts a Markdown file into fenced blocks and prose lines.
// Fences are the ``` kind at the start of a line, all the docs use.
func Split(doc string) []Block {
	var blocks []Block
	var cur *Block
	var body strings.Builder
	n := 0
	for line := range strings.Lines(doc) {
		n++
		trimmed := strings.TrimRight(line, "\r\n")
		if cur != nil {
			if strings.HasPrefix(trimmed, "```") {
				cur.Text = body.String()
				blocks = append(blocks, *cur)
				cur = nil
				body.Reset()
				continue
			}
			body.WriteString(line)
			continue
		}
		if info, ok := strings.CutPrefix(trimmed, "```"); ok {
			lang, _, _ := strings.Cut(strings.TrimSpace(info), " ")
			cur = &Block{Fenced: true, Lang: lang, Line: n}
			continue
		}
		blocks = append(blocks, Block{Text: trimmed, Line: n})
	}
	if cur != nil {
		cur.Text, cur.Unclosed = body.String(), true
		blocks = append(blocks, *cur)
	}
	return blocks
}

// Command is a `go run ./cmd/stac-mcp …` line of a sh block.
type Command struct {
	Line int      // 1-based line in the doc
	Text string   // the line as written (trimmed)
	Args []string // its arguments after "go run ./cmd/stac-mcp"
}

// Commands lists the command lines of b: none unless it is a sh block.
// An error names the line whose quotes do not close.
func Commands(b Block) ([]Command, error) {
	if !b.Fenced || b.Lang != "sh" {
		return nil, nil
	}
	var cmds []Command
	for j, line := range strings.Split(b.Text, "\n") {
		line = strings.TrimSpace(line)
		rest, ok := strings.CutPrefix(line, GoRunPrefix)
		if !ok {
			continue
		}
		args, err := ShellWords(rest)
		if err != nil {
			return nil, fmt.Errorf("%d: %q: %w", b.Line+1+j, line, err)
		}
		cmds = append(cmds, Command{Line: b.Line + 1 + j, Text: line, Args: args})
	}
	return cmds, nil
}

// ImageDir is the directory the command's --image-dir names, or "".
func (c Command) ImageDir() string {
	for i := 0; i+1 < len(c.Args); i++ {
		if c.Args[i] == "--image-dir" {
			return c.Args[i+1]
		}
	}
	return ""
}

// WithImageDir is the command's arguments with dir for its --image-dir.
func (c Command) WithImageDir(dir string) []string {
	args := slices.Clone(c.Args)
	for i := 0; i+1 < len(args); i++ {
		if args[i] == "--image-dir" {
			args[i+1] = dir
		}
	}
	return args
}

// ShellWords splits a command line on spaces, honouring single quotes (all
// the docs use).
func ShellWords(s string) ([]string, error) {
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

// SameImage compares byte for byte on amd64, where the committed images
// are made; elsewhere fused multiply-adds may change a few anti-aliased
// pixels, so only the dimensions must match.
func SameImage(committed, got []byte) bool {
	if runtime.GOARCH == "amd64" {
		return bytes.Equal(committed, got)
	}
	a, errA := png.DecodeConfig(bytes.NewReader(committed))
	b, errB := png.DecodeConfig(bytes.NewReader(got))
	return errA == nil && errB == nil && a.Width == b.Width && a.Height == b.Height
}
