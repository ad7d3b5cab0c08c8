// Package gdaltest forwards to internal/gdaltest, where the helpers of the
// tests that compare with GDAL live once (shared with bench/, which cannot
// import a package under tools/internal). It stays only for the tests of
// tools and tools/internal/pixel that still import this path; new tests
// import internal/gdaltest, and this package goes once they all do.
package gdaltest

import (
	"testing"

	"github.com/stacmcp/stac-mcp/internal/gdaltest"
)

// Need is gdaltest.Need.
func Need(tb testing.TB, commands ...string) {
	tb.Helper()
	gdaltest.Need(tb, commands...)
}

// COGValidator is gdaltest.COGValidator.
func COGValidator(tb testing.TB) (python, script string) {
	tb.Helper()
	return gdaltest.COGValidator(tb)
}
