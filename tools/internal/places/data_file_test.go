//go:build !places_beside

package places

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// A bundle's binary reads the gazetteer beside it: the file read is the
// embedded data, and a missing one is an error that says where it looked
// and how to name another path.
func TestGazetteerReadBesideTheBinary(t *testing.T) {
	t.Setenv(DataEnv, filepath.Join("data", BesideFile))
	b, err := readPlacesBeside()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, embeddedPlaces) {
		t.Fatalf("read %d bytes, not the %d embedded", len(b), len(embeddedPlaces))
	}
	if _, err := Decode(b); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), BesideFile)
	t.Setenv(DataEnv, missing)
	if _, err := readPlacesBeside(); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), DataEnv) {
		t.Errorf("a missing gazetteer: %v", err)
	}
	// Without the variable it looks in the folder above the executable's
	// (the test binary's: there is none there).
	t.Setenv(DataEnv, "")
	if _, err := readPlacesBeside(); err == nil || !strings.Contains(err.Error(), BesideFile) {
		t.Errorf("beside the test binary: %v", err)
	}
}
