package advice

import (
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
)

const testHost = "catalog.test"

// Every advice given when time ran out names the setting that would have
// given the call more time.
func TestTimeAdviceNamesTheToolTimeoutSetting(t *testing.T) {
	p := reliability.DefaultPolicy()
	advice := []string{
		nextStep(reliability.CodeDeadline, p.ToolTimeout, time.Time{}, time.Now(), false),
		timeoutNext(p.ToolTimeout, "", "", testHost),
		timeoutNext(p.ToolTimeout, "/v1/search", testHost, testHost),
		timeoutNext(p.ToolTimeout, "/v1/collections/c/items", testHost, testHost),
		timeoutNext(p.ToolTimeout, "/v1/collections/c", testHost, testHost),
		timeoutNext(p.ToolTimeout, "/b04.tif", "assets.test", testHost),
	}
	for _, a := range advice {
		if !strings.Contains(a, reliability.EnvToolTimeout) {
			t.Errorf("advice %q does not name %s", a, reliability.EnvToolTimeout)
		}
	}
	if what, search := describeRequest("/v1/collections/c/items"); what != "search" || !search {
		t.Errorf("an items listing is described as %q (search %v), want a search", what, search)
	}
	if what, _ := describeRequest("/v1/collections/c/items/x"); what != "item page" {
		t.Errorf("an item is described as %q", what)
	}
}
