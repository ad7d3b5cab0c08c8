// Package gdaltest is what the tests that compare with GDAL share: GDAL
// (Debian's gdal-bin) is the reference for the pixel tools' reading,
// projections and masks (issue 26), installed by .ci/run. One helper keeps
// the rule the same everywhere: without GDAL a test skips, saying so,
// except in CI (CI=true), where the comparison must run and a missing
// command is a failure.
package gdaltest

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Need skips tb when one of commands is not installed, or fails it when
// CI=true.
func Need(tb testing.TB, commands ...string) {
	tb.Helper()
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			msg := fmt.Sprintf("%s not found: GDAL (Debian's gdal-bin) is the reference this test compares with", c)
			if os.Getenv("CI") == "true" {
				tb.Fatalf("%s; CI=true, so this is a failure (.ci/run installs gdal-bin)", msg)
			}
			tb.Skip(msg + "; skipped (apt-get install gdal-bin to run it)")
		}
	}
}
