package places

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// BesideFile is the gazetteer's file name where a bundle keeps it: in the
// folder above the binary's own (server/places.bin.zst for
// server/linux-amd64/stac-mcp).
const BesideFile = "places.bin.zst"

// DataEnv names the gazetteer file explicitly (a build that reads it
// beside the binary; tests).
const DataEnv = "STAC_MCP_PLACES_DATA"

// maxDataFile bounds the file read: the data is 3.4 MB.
const maxDataFile = 64 << 20

// readPlacesBeside reads the gazetteer from DataEnv's path, else from
// BesideFile in the folder above the executable's.
func readPlacesBeside() ([]byte, error) {
	path := os.Getenv(DataEnv)
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("place names: this build reads its gazetteer beside its binary, but the binary's path is unknown: %w", err)
		}
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		path = filepath.Join(filepath.Dir(filepath.Dir(exe)), BesideFile)
	}
	return readDataFile(path)
}

// readDataFile reads a gazetteer file, bounded.
func readDataFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("place names: the gazetteer %s could not be read (this build keeps it beside its binary, as the MCP bundle lays it out; %s names another path): %w", path, DataEnv, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDataFile+1))
	if err != nil {
		return nil, fmt.Errorf("place names: reading the gazetteer %s: %w", path, err)
	}
	if len(b) > maxDataFile {
		return nil, fmt.Errorf("place names: the gazetteer %s is over %d bytes: not this build's data", path, maxDataFile)
	}
	return b, nil
}
