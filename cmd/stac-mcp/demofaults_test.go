package main

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools"
)

func TestDemoFaultRateIsRefusedOutsideTheDemoCatalog(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"real catalog", map[string]string{"STAC_MCP_DEMO_FAULT_RATE": "0.2"}, []string{"--catalog", "earth-search", "tools"}, "accepted only with --catalog demo"},
		{"default catalog", map[string]string{"STAC_MCP_DEMO_FAULT_RATE": "0.2"}, []string{"tools"}, "accepted only with --catalog demo"},
		{"not a number", map[string]string{"STAC_MCP_DEMO_FAULT_RATE": "lots"}, []string{"--catalog", "demo", "tools"}, `STAC_MCP_DEMO_FAULT_RATE="lots": want a fraction from 0 to 0.9`},
		{"too high", nil, []string{"--catalog", "demo", "--demo-fault-rate", "0.95", "tools"}, `--demo-fault-rate="0.95": want a fraction from 0 to 0.9`},
		{"bad seed", map[string]string{"STAC_MCP_DEMO_FAULT_SEED": "-1"}, []string{"--catalog", "demo", "tools"}, `STAC_MCP_DEMO_FAULT_SEED="-1": want a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runForTest(t, tc.env, tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 and a message containing %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// With the demo switch on, calls on the demo catalog meet injected faults
// and the reliability layer retries them: the receipts show retries, and the
// calls still succeed.
func TestDemoFaultRateMakesRetriesVisible(t *testing.T) {
	t.Parallel()
	env := map[string]string{"STAC_MCP_DEMO_FAULT_RATE": "0.5", "STAC_MCP_BACKOFF_BASE_SECS": "0.01",
		"STAC_MCP_RETRY_AFTER_CAP_SECS": "0.01", "STAC_MCP_CACHE_TTL_SECS": "0", "STAC_MCP_MAX_ATTEMPTS": "6", "STAC_MCP_DEMO_FAULT_SEED": "7"}
	cfg, err := loadConfig([]string{"--catalog", "demo", "call"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	cs, closeAll, err := openInProcessSession(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()

	const calls = 20
	retries, failures := 0, 0
	for i := range calls {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_collection",
			Arguments: map[string]any{"collection_id": "naip"}})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if res.IsError {
			failures++
		}
		raw, err := json.Marshal(res.Meta[tools.MetaReceipt])
		if err != nil {
			t.Fatal(err)
		}
		var receipt reliability.Receipt
		if err := json.Unmarshal(raw, &receipt); err != nil {
			t.Fatalf("call %d: receipt %s: %v", i, raw, err)
		}
		retries += receipt.Retries
	}
	// At a 50 % fault rate per attempt, 20 calls without a single retry
	// would happen with probability 0.5^20.
	if retries == 0 {
		t.Fatalf("no retries in %d calls at a 50%% fault rate: faults were not injected", calls)
	}
	// Six attempts per request: a call fails only if all six are faulted.
	if failures > calls/4 {
		t.Errorf("%d of %d calls failed; with six attempts most should get through", failures, calls)
	}
	t.Logf("%d calls: %d retries, %d failures", calls, retries, failures)
}
