package bundle

import (
	"strings"
	"testing"
)

// The form's help texts name only what the form can
// set: no environment variable of another setting, no flag, no http mode,
// no write toolset (the bundle runs stdio, read-only).
func TestBundleHelpNamesOnlyWhatTheFormSets(t *testing.T) {
	for _, o := range Options {
		d := o.description()
		for _, unreachable := range []string{"STAC_MCP_", "--", "over http", "write"} {
			if strings.Contains(d, unreachable) {
				t.Errorf("%s's help mentions %q, which the bundle's form cannot set:\n%s", o.Key, unreachable, d)
			}
		}
	}
}
