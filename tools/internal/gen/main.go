// Command gen writes the files derived from the tools' inventory, so that
// the code is their one source:
//
//   - tools/__toolsnaps__/<tool>.snap: every tool's definition as clients
//     see it in tools/list (write tools included), for review;
//   - the tool and toolset tables between <!-- name:start --> and
//     <!-- name:end --> markers in README.md, docs/tools.md, docs/writes.md
//     and docs/configuration.md;
//   - the tools/list cost figures stated in docs/configuration.md;
//   - the golden images of tools/internal/picture and tools/internal/mapimage
//     (tools/internal/golden lists them).
//
// It runs from `go generate ./...` (the directive is in tools/inventory.go),
// offline, and writes only the files whose content changed (a golden image
// only when the committed one is missing or beyond its test's tolerance, so
// a platform whose encoders differ a little does not rewrite it); the tests
// of this package, picture and mapimage fail when a committed file differs
// from what it would write.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

func main() {
	if err := generate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "tools/internal/gen:", err)
		os.Exit(1)
	}
}

func generate(ctx context.Context) error {
	root, err := reporoot.Dir()
	if err != nil {
		return err
	}
	files, err := derivedFiles(ctx, root)
	if err != nil {
		return err
	}
	for _, f := range files {
		changed, err := f.write(root)
		if err != nil {
			return err
		}
		switch {
		case changed && f.want == nil:
			fmt.Fprintln(os.Stderr, "tools/internal/gen: removed", f.path)
		case changed:
			fmt.Fprintln(os.Stderr, "tools/internal/gen: wrote", f.path)
		}
	}
	return nil
}
