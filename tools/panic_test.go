package tools

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type panicIn struct{ CatalogArg }

type panicOut struct {
	OK bool `json:"ok"`
}

// panickingTool is a test-only tool whose handler panics the way a bounds
// bug does.
func panickingTool() Tool {
	return define(&mcp.Tool{Name: "panic_test", Description: "test only: panics"}, false,
		func(ctx context.Context, c *Call, in panicIn) (panicOut, string, error) {
			var page []int
			n := -1
			return panicOut{OK: len(page[:n]) > 0}, "", nil
		})
}

// TestPanicsBecomeErrorsAndTheServerKeepsServing: a panic in a tool, a
// resource, a prompt or the completion handler is an error answer with
// the stack in the log (error level), never a process exit.
func TestPanicsBecomeErrorsAndTheServerKeepsServing(t *testing.T) {
	t.Parallel()
	d := newTestDeps(t, testSessionOptions{})
	var logs syncBuffer
	d.Logger = zerolog.New(&logs).Level(zerolog.WarnLevel)
	s := newServer(d, "test", append(Inventory(), panickingTool()))
	s.AddResource(&mcp.Resource{URI: "stac://panic", Name: "panic"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		panic("resource bug")
	})
	s.AddPrompt(&mcp.Prompt{Name: "panic"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		panic("prompt bug")
	})
	cs := connect(t, s)
	ctx := context.Background()

	res := callTool(t, cs, "panic_test", map[string]any{})
	if !res.IsError || !strings.Contains(resultText(res), "internal error") {
		t.Errorf("panicking tool: isError %v, text %q; want an internal-error result", res.IsError, resultText(res))
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "stac://panic"}); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("panicking resource: err %v, want an internal error", err)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "panic"}); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("panicking prompt: err %v, want an internal error", err)
	}
	// The completion handler panics on Deps without catalogs.
	d.Catalogs, d.collectionIDs.ids = nil, nil
	if _, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: ResourceCollectionTmpl},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: "s"}}); err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Errorf("panicking completion: err %v, want an internal error", err)
	}

	log := logs.String()
	for _, want := range []string{`"level":"error"`, "slice bounds out of range", "panic_test.go", "resource bug", "prompt bug", "completions.go"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

// A panic in a goroutine a tool starts (the HEAD probes of
// estimate_data_size) marks that unit of work failed and is logged; the
// process goes on.
func TestPanicInAToolGoroutineIsContained(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	ctx := zerolog.New(&logs).WithContext(context.Background())
	probes := []*headProbe{{href: "https://example.test/a.tif"}, {href: "https://example.test/b.tif"}}
	probeSizes(ctx, nil, probes) // a nil client panics in every probe
	for _, p := range probes {
		if p.bytes != 0 || !strings.Contains(p.reason, "internal error") {
			t.Errorf("probe %s: bytes %d, reason %q; want it unsized with an internal-error reason", p.href, p.bytes, p.reason)
		}
	}
	if log := logs.String(); !strings.Contains(log, `"level":"error"`) || !strings.Contains(log, "HEAD probe") || !strings.Contains(log, "goroutine") {
		t.Errorf("log lacks the panic with its stack:\n%s", log)
	}
}
