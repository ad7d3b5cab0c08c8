package tools

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func complete(t *testing.T, cs *mcp.ClientSession, ref *mcp.CompleteReference, arg, value string) mcp.CompletionResultDetails {
	t.Helper()
	res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
	if err != nil {
		t.Fatalf("complete %s=%q: %v", arg, value, err)
	}
	return res.Completion
}

func TestCollectionIDsAreCompletedForPromptsAndTemplates(t *testing.T) {
	t.Parallel()
	rec := &callRecorder{}
	cs := newTestSession(t, testSessionOptions{Transport: rec})

	prompt := &mcp.CompleteReference{Type: "ref/prompt", Name: "estimate_download"}
	got := complete(t, cs, prompt, "collection", "sentinel-2")
	if len(got.Values) < 2 || got.Total != len(got.Values) {
		t.Fatalf("prompt completion of sentinel-2: %+v, want the demo's sentinel-2-* collections", got)
	}
	for _, v := range got.Values {
		if len(v) < len("sentinel-2") || v[:len("sentinel-2")] != "sentinel-2" {
			t.Errorf("completion %q does not start with the prefix", v)
		}
	}
	if !slices.IsSorted(got.Values) {
		t.Errorf("values not sorted: %v", got.Values)
	}

	template := &mcp.CompleteReference{Type: "ref/resource", URI: ResourceQueryablesTmpl}
	if tmpl := complete(t, cs, template, "id", "JOP"); !slices.Equal(tmpl.Values, []string{"joplin"}) {
		t.Errorf("template completion of JOP (case-insensitive): %v, want [joplin]", tmpl.Values)
	}
	requests := len(rec.snapshot())
	if requests == 0 {
		t.Fatal("no upstream request for the collection ids")
	}
	for _, c := range rec.snapshot() {
		if !c.insideRun || c.tool != "completion:collection_id" {
			t.Errorf("upstream %s as tool %q inside Run %v, want completion:collection_id inside Run", c.path, c.tool, c.insideRun)
		}
	}
	// Cached: a second keystroke costs no request.
	complete(t, cs, prompt, "collection", "n")
	if n := len(rec.snapshot()); n != requests {
		t.Errorf("%d upstream requests after a cached completion, want still %d", n, requests)
	}
}

func TestOtherArgumentsGetNoCompletions(t *testing.T) {
	t.Parallel()
	rec := &callRecorder{}
	cs := newTestSession(t, testSessionOptions{Transport: rec})
	for _, c := range []struct {
		ref *mcp.CompleteReference
		arg string
	}{
		{&mcp.CompleteReference{Type: "ref/prompt", Name: "find_imagery"}, "period"},
		{&mcp.CompleteReference{Type: "ref/resource", URI: "stac://other/{id}"}, "id"},
	} {
		if got := complete(t, cs, c.ref, c.arg, ""); len(got.Values) != 0 {
			t.Errorf("%+v %s: values %v, want none", c.ref, c.arg, got.Values)
		}
	}
	if n := len(rec.snapshot()); n != 0 {
		t.Errorf("%d upstream requests for arguments that are not collections", n)
	}
}
