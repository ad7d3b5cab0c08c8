package picture_test

import (
	"path/filepath"
	"testing"

	"github.com/stacmcp/stac-mcp/tools/internal/golden"
	"github.com/stacmcp/stac-mcp/tools/internal/picture"
	"github.com/stacmcp/stac-mcp/tools/internal/picture/picturetest"
)

// root is the repository's root, from this package's directory.
var root = filepath.Join("..", "..", "..")

// Golden images: Make's output for each test image (golden.PictureCases),
// decoded and compared pixel by pixel with a tolerance
// (picturetest.CompareGolden); go generate ./... writes testdata/golden.
func TestMakeMatchesGoldenImages(t *testing.T) {
	for _, c := range golden.PictureCases() {
		t.Run(c.In+"/"+c.MIME, func(t *testing.T) {
			p, err := c.Make(root)
			if err != nil {
				t.Fatal(err)
			}
			if p.MIMEType != c.MIME || p.SourceFormat != c.Format || p.Width != c.Width || p.Height != c.Height ||
				p.SourceWidth != c.SourceWidth || p.SourceHeight != c.SourceHeight {
				t.Fatalf("got %s %dx%d from %s %dx%d, want %s %dx%d from %s %dx%d", p.MIMEType, p.Width, p.Height,
					p.SourceFormat, p.SourceWidth, p.SourceHeight, c.MIME, c.Width, c.Height, c.Format, c.SourceWidth, c.SourceHeight)
			}
			budget := c.MaxBytes
			if budget == 0 {
				budget = picture.DefaultMaxBytes
			}
			if len(p.Data) > budget {
				t.Errorf("output is %d bytes, over the %d budget", len(p.Data), budget)
			}
			picturetest.CompareGolden(t, filepath.Join(root, filepath.FromSlash(c.Golden())), p.Data, golden.PictureTolerance)
		})
	}
}
