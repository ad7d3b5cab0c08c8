package main

import (
	"strings"
	"testing"
)

// STAC_MCP_READ_PIXELS (--read-pixels) sets the pixel tools' budget per
// band read; out-of-range values refuse to start, naming the range.
func TestReadPixelsSetting(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	cfg, err := loadConfig([]string{"stdio"}, env(map[string]string{"STAC_MCP_READ_PIXELS": "262144"}))
	if err != nil || cfg.ReadPixels != 262144 {
		t.Fatalf("cfg.ReadPixels %v, err %v", cfg, err)
	}
	cfg, err = loadConfig([]string{"stdio", "--read-pixels", "65536"}, env(nil))
	if err != nil || cfg.ReadPixels != 65536 {
		t.Fatalf("flag: %v, err %v", cfg, err)
	}
	if cfg, err = loadConfig([]string{"stdio"}, env(nil)); err != nil || cfg.ReadPixels != 0 {
		t.Fatalf("default: %v, err %v", cfg, err)
	}
	for _, bad := range []string{"1000", "99999999", "many"} {
		_, err := loadConfig([]string{"stdio"}, env(map[string]string{"STAC_MCP_READ_PIXELS": bad}))
		if err == nil || !strings.Contains(err.Error(), "from 65536 to 4194304") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
