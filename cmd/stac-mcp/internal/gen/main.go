// Command gen writes the files derived from cmd/stac-mcp's code, so that
// the code is their one source:
//
//   - manifest.json, the MCP Bundle's manifest, and server.json, the MCP
//     Registry entry (a template scripts/release fills in): from the
//     settings table (internal/settings), what the bundle offers of it
//     (internal/bundle) and the tools and prompts a client lists;
//   - the images the docs' `go run ./cmd/stac-mcp … --image-dir DIR …`
//     commands write into DIR (docs/images/map_items-1.png), by running
//     those commands;
//   - docs/third-party-licenses.md: the Go modules the release binaries are
//     built from and their licence texts, from the module cache.
//
// It runs from `go generate ./...` (the directive is in cmd/stac-mcp/main.go),
// offline, and writes only the files whose content changed; an image only
// when doccmd.SameImage says it is not the committed one, so a platform
// whose anti-aliasing differs a little does not rewrite it. The tests of
// this package and cmd/stac-mcp's TestDocCommands fail when a committed file
// differs from what it would write.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

func main() {
	if err := generate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "cmd/stac-mcp/internal/gen:", err)
		os.Exit(1)
	}
}

func generate(ctx context.Context) error {
	root, err := reporoot.Dir()
	if err != nil {
		return err
	}
	files, err := bundleFiles(ctx)
	if err != nil {
		return err
	}
	licences, err := licenseFile(ctx, root)
	if err != nil {
		return err
	}
	files = append(files, licences)
	images, cleanup, err := docImages(ctx, root)
	defer cleanup()
	if err != nil {
		return err
	}
	for _, f := range append(files, images...) {
		changed, err := f.write(root)
		if err != nil {
			return err
		}
		if changed {
			fmt.Fprintln(os.Stderr, "cmd/stac-mcp/internal/gen: wrote", f.path)
		}
	}
	return nil
}
