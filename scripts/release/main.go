// Command release builds what a stac-mcp release ships besides goreleaser's
// archives (adr/0012-release-packaging.md):
//
//	go run ./scripts/release [bundle]   cross-compile and pack dist/stac-mcp-<version>.mcpb, render dist/server.json
//	go run ./scripts/release icon       redraw icon.png
//
// bundle builds the five targets with the flags .goreleaser.yaml uses,
// stamps the version into a copy of manifest.json, packs a reproducible
// MCP Bundle (file order, times and modes fixed), checks it with the MCPB
// CLI (validate, then unpack as Claude Desktop does and run the binary it
// would start), and fills the registry entry (server.json) with the
// bundle's URL and SHA-256. It needs the pinned MCPB CLI:
// cd scripts/release && npm ci.
//
// The version is $VERSION (a release: the tag without "v"), else the one
// goreleaser's snapshot computes: the last v* tag's next patch,
// "-snapshot-" and the short commit.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	cmd := "bundle"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	fs := flag.NewFlagSet("release "+cmd, flag.ContinueOnError)
	out := fs.String("out", "dist", "bundle: output directory, relative to the repository root")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s takes no arguments, got %q", cmd, fs.Args())
	}
	root, err := reporoot.Dir()
	if err != nil {
		return err
	}
	switch cmd {
	case "bundle":
		return buildBundle(root, filepath.Join(root, *out))
	case "icon":
		return writeIcon(filepath.Join(root, "icon.png"))
	case "twins":
		return buildTwins(root, filepath.Join(root, *out, "twins"))
	}
	return fmt.Errorf("unknown command %q; accepted: bundle (default), icon, twins", cmd)
}
