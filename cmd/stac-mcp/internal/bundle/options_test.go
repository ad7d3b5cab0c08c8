package bundle

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/settings"
	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools/advice"
)

// TestEverySettingIsClassifiedForTheBundle: a setting added to the
// settings table must be offered by the bundle or left out with a reason.
func TestEverySettingIsClassifiedForTheBundle(t *testing.T) {
	offered := map[string]bool{}
	for _, o := range Options {
		if _, ok := settings.ByEnv(o.Env); !ok {
			t.Errorf("bundle option %s maps to %s, which is not a setting", o.Key, o.Env)
		}
		if o.Default == nil {
			t.Errorf("bundle option %s has no default: the host would pass the literal ${user_config.%s} when it is left empty", o.Key, o.Key)
		}
		if _, dup := LeftOut[o.Env]; dup {
			t.Errorf("%s is both offered by the bundle and left out of it", o.Env)
		}
		offered[o.Env] = true
	}
	for env := range LeftOut {
		if _, ok := settings.ByEnv(env); !ok {
			t.Errorf("LeftOut names %s, which is not a setting", env)
		}
	}
	for _, s := range settings.All() {
		if _, out := LeftOut[s.Env]; !offered[s.Env] && !out {
			t.Errorf("setting %s is neither offered by the bundle (Options) nor left out with a reason (LeftOut) "+
				"in cmd/stac-mcp/internal/bundle/options.go; decide, then go generate ./...", s.Env)
		}
	}
}

// TestReadmeInstallListsTheBundleSettings: the README's Claude Desktop
// install steps show every setting the bundle's form asks for.
func TestReadmeInstallListsTheBundleSettings(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	start := strings.Index(readme, "### Claude Desktop: the MCP Bundle")
	end := strings.Index(readme, "### Other MCP clients")
	if start < 0 || end < start {
		t.Fatal("README.md lacks the Claude Desktop install section followed by Other MCP clients")
	}
	for _, o := range Options {
		if !strings.Contains(readme[start:end], "`"+o.Env+"`") {
			t.Errorf("the README's bundle settings table lacks %s (%s)", o.Env, o.Title)
		}
	}
}

// TestTimeoutAdviceSettingsAreOffered: every setting the advice after a
// timeout tells the user to change can be changed in the bundle's form,
// under the title the advice quotes (the advice named a setting
// the Claude Desktop extension could not set).
func TestTimeoutAdviceSettingsAreOffered(t *testing.T) {
	p := reliability.DefaultPolicy()
	var texts []string
	for _, path := range []string{"", "/v1/search", "/v1", "/v1/collections/c/items/i"} {
		texts = append(texts, advice.Next(&reliability.Denial{Code: reliability.CodeTimeout, Host: "catalog.test"},
			reliability.Situation{Now: time.Now(), ToolTimeout: p.ToolTimeout, CallTimedOut: true, WaitingPath: path, WaitingHost: "catalog.test"}))
	}
	texts = append(texts, advice.Next(&reliability.Denial{Code: reliability.CodeDeadline, Host: "catalog.test"},
		reliability.Situation{Now: time.Now(), ToolTimeout: p.ToolTimeout}))
	named := regexp.MustCompile(`STAC_MCP_[A-Z_]+`)
	for n, text := range texts {
		names := named.FindAllString(text, -1)
		if len(names) == 0 {
			t.Errorf("advice %q names no setting", text)
		}
		for _, env := range names {
			i := slices.IndexFunc(Options, func(o Option) bool { return o.Env == env })
			if i < 0 {
				t.Errorf("advice %q names %s, which the bundle's form does not offer", text, env)
				continue
			}
			// The timeout's advice quotes the form; the deadline's (last)
			// names the variable alone.
			if n < len(texts)-1 && !strings.Contains(text, `"`+Options[i].Title+`"`) {
				t.Errorf("advice %q does not quote the form's title %q for %s", text, Options[i].Title, env)
			}
		}
	}
}
