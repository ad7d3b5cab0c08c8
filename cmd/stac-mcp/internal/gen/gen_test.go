package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

// These tests read the committed files and never write them: they fail
// when manifest.json or server.json differs from what `go generate ./...`
// (this package's program) would write. The docs' images are compared by
// cmd/stac-mcp's TestDocCommands, which runs their commands in-process.

// TestManifestMatchesInventoryAndSettings: manifest.json is the one the
// tools, prompts and settings make; and so is server.json, the registry
// entry, whose variables are the bundle form's.
func TestManifestMatchesInventoryAndSettings(t *testing.T) {
	root, err := reporoot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := bundleFiles(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		ok, have, err := f.upToDate(root)
		switch {
		case err != nil:
			t.Fatal(err)
		case have == nil:
			t.Errorf("%s is missing; run go generate ./...", f.path)
		case !ok:
			t.Errorf("%s is out of date with the tools, prompts or settings; run go generate ./... and review the diff:\n%s",
				f.path, firstDifference(string(have), string(f.want)))
		}
	}
}

// firstDifference shows the first differing line with a little context.
func firstDifference(committed, rendered string) string {
	c, r := strings.Split(committed, "\n"), strings.Split(rendered, "\n")
	for i := 0; i < max(len(c), len(r)); i++ {
		var cl, rl string
		if i < len(c) {
			cl = c[i]
		}
		if i < len(r) {
			rl = r[i]
		}
		if cl != rl {
			ctx := strings.Join(r[max(0, i-3):min(i, len(r))], "\n")
			return fmt.Sprintf("line %d:\n%s\n- committed: %s\n+ rendered:  %s", i+1, ctx, cl, rl)
		}
	}
	return "(equal)"
}

// TestThirdPartyLicensesAreCurrent: docs/third-party-licenses.md lists the
// modules the release binaries are built from now, with their texts.
func TestThirdPartyLicensesAreCurrent(t *testing.T) {
	root, err := reporoot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	f, err := licenseFile(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	ok, have, err := f.upToDate(root)
	switch {
	case err != nil:
		t.Fatal(err)
	case have == nil:
		t.Errorf("%s is missing; run go generate ./...", f.path)
	case !ok:
		t.Errorf("%s is out of date with go.mod; run go generate ./... and review the diff:\n%s", f.path, firstDifference(string(have), string(f.want)))
	}
	for _, mod := range []string{"github.com/modelcontextprotocol/go-sdk", "golang.org/x/image", "github.com/ncruces/go-strftime"} {
		if !strings.Contains(string(f.want), "| "+mod+" |") {
			t.Errorf("%s does not list %s, which the binaries are built from", f.path, mod)
		}
	}
}

// The platforms whose dependencies are listed are the ones the release
// builds.
func TestLicenceTargetsAreTheReleaseTargets(t *testing.T) {
	root, err := reporoot.Dir()
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var inYAML []string
	for _, line := range strings.Split(string(yaml), "\n") {
		line = strings.TrimSpace(line)
		if target, ok := strings.CutPrefix(line, "- "); ok && (strings.HasPrefix(target, "darwin_") || strings.HasPrefix(target, "linux_") || strings.HasPrefix(target, "windows_")) {
			parts := strings.Split(target, "_")
			inYAML = append(inYAML, parts[0]+"/"+parts[1])
		}
	}
	var ours []string
	for _, t := range releaseTargets {
		ours = append(ours, t[0]+"/"+t[1])
	}
	slices.Sort(inYAML)
	slices.Sort(ours)
	if !slices.Equal(inYAML, ours) {
		t.Errorf("releaseTargets %v, .goreleaser.yaml builds %v", ours, inYAML)
	}
}

func TestClassifyLicences(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Apache License\n Version 2.0, January 2004", "Apache-2.0"},
		{"Permission is hereby granted, free of charge, to any person", "MIT"},
		{"Redistribution and use in source and binary forms ... Neither the name of", "BSD-3-Clause"},
		{"Redistribution and use in source and binary forms, with or without", "BSD-2-Clause"},
		{"Mozilla Public License, version 2.0", "MPL-2.0"},
		{"GNU GENERAL PUBLIC LICENSE Version 3", ""},
		{"GNU AFFERO GENERAL PUBLIC LICENSE", ""},
	} {
		if got := classify(c.text); got != c.want {
			t.Errorf("classify(%.40q) = %q, want %q", c.text, got, c.want)
		}
	}
}

// The licence table lists the static release builds' modules: .ci/run's
// `GOFLAGS=-race go generate` must not make that go list ask for cgo.
func TestWithoutRaceKeepsTheOtherFlags(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "",
		"-race":                    "",
		"-mod=mod -race -trimpath": "-mod=mod -trimpath",
		"-race=true -count=1":      "-count=1",
	} {
		if got := withoutRace(in); got != want {
			t.Errorf("withoutRace(%q) = %q, want %q", in, got, want)
		}
	}
}
