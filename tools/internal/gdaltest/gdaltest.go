// Package gdaltest is what the tests that compare with GDAL share: GDAL
// (Debian's gdal-bin) is the reference for the pixel tools' reading,
// projections and masks, installed by .ci/run. One helper keeps
// the rule the same everywhere: without GDAL a test skips, saying so,
// except in CI (CI=true), where the comparison must run and a missing
// command is a failure.
package gdaltest

import (
	"context"
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

// validatorPaths are where Debian's python3-gdal puts GDAL's COG
// validator (swig/python/gdal-utils/osgeo_utils/samples in GDAL's tree).
var validatorPaths = []string{
	"/usr/lib/python3/dist-packages/osgeo_utils/samples/validate_cloud_optimized_geotiff.py",
	"/usr/share/doc/python3-gdal/examples/validate_cloud_optimized_geotiff.py",
}

// COGValidator returns a Python interpreter that imports GDAL's bindings
// and the path of GDAL's validate_cloud_optimized_geotiff.py, skipping tb
// without them (failing it when CI=true: .ci/run installs python3-gdal).
func COGValidator(tb testing.TB) (python, script string) {
	tb.Helper()
	for _, p := range validatorPaths {
		if _, err := os.Stat(p); err == nil {
			script = p
			break
		}
	}
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.CommandContext(context.Background(), py, "-c", "from osgeo import gdal").Run() == nil {
			python = py
			break
		}
	}
	if python == "" || script == "" {
		msg := "GDAL's validate_cloud_optimized_geotiff.py or its Python bindings are missing (Debian's python3-gdal)"
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s; CI=true, so this is a failure (.ci/run installs python3-gdal)", msg)
		}
		tb.Skip(msg + "; skipped")
	}
	return python, script
}
