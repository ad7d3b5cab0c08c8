package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/cmd/stac-mcp/internal/bundle"
	"github.com/stacmcp/stac-mcp/tools"
)

// The MCP Bundle's manifest.json and the registry's server.json are
// written by internal/gen (go generate ./...) from internal/bundle, which
// lists a server built from the tools package directly. These tests hold
// that to what this command builds and accepts.

// TestManifestListsWhatTheServerLists: the tools and prompts the bundle's
// manifest is rendered from (bundle.Surface) are the ones a client of
// `stac-mcp stdio` with the defaults lists, through this command's wiring.
func TestManifestListsWhatTheServerLists(t *testing.T) {
	ctx := context.Background()
	cfg, err := loadConfig(nil, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	cs, closeSession, err := openInProcessSession(ctx, cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSession()
	var served []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		served = append(served, tool.Name+": "+tool.Description)
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		served = append(served, promptSummary(p))
	}
	listed, prompts, err := bundle.Surface(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, tool := range listed {
		rendered = append(rendered, tool.Name+": "+tool.Description)
	}
	for _, p := range prompts {
		rendered = append(rendered, promptSummary(p))
	}
	if !slices.Equal(served, rendered) {
		t.Errorf("the server lists\n%q\nbut the manifest is rendered from\n%q", served, rendered)
	}
}

func promptSummary(p *mcp.Prompt) string {
	s := "prompt " + p.Name + ": " + p.Description
	for _, a := range p.Arguments {
		s += " [" + a.Name + "]"
	}
	return s
}

// TestBundleDefaultsStartTheServer: the environment the host builds from
// the form's defaults (unset optional fields arrive as "") is a
// configuration the server accepts, and each default is what the server
// would use anyway.
func TestBundleDefaultsStartTheServer(t *testing.T) {
	env := map[string]string{}
	for _, o := range bundle.Options {
		env[o.Env] = fmt.Sprint(o.Default)
	}
	cfg, err := loadConfig([]string{"stdio"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("the bundle's default environment %v refuses to start: %v", env, err)
	}
	dflt, err := loadConfig([]string{"stdio"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Policy != dflt.Policy || cfg.Headers != nil || cfg.NamedCatalogs != nil || cfg.Catalog != tools.DefaultCatalog {
		t.Errorf("the bundle defaults differ from the server's own: %+v vs %+v", cfg, dflt)
	}
}

// TestBundleNumberRangesAreTheServers: the form's min and max are exactly
// the range the server accepts, so the form never offers a value that
// refuses to start (nor forbids one that works).
func TestBundleNumberRangesAreTheServers(t *testing.T) {
	for _, o := range bundle.Options {
		if o.Kind != "number" {
			continue
		}
		try := func(v float64) error {
			env := map[string]string{
				o.Env: fmt.Sprint(v),
				// Only this variable's own range is under test: keep the
				// attempt timeout within any tool timeout tried.
				"STAC_MCP_ATTEMPT_TIMEOUT_SECS": "1",
			}
			_, err := loadConfig([]string{"stdio"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
			return err
		}
		for _, v := range []float64{o.Min, o.Max} {
			if err := try(v); err != nil {
				t.Errorf("%s=%v (the form's bound) is refused: %v", o.Env, v, err)
			}
		}
		for _, v := range []float64{o.Min - 0.01, o.Max + 0.01} {
			if try(v) == nil {
				t.Errorf("%s=%v (outside the form's %v..%v) is accepted: the form's range is narrower than the server's", o.Env, v, o.Min, o.Max)
			}
		}
	}
}

// TestBundleChoicesStartTheServer: every value the registry entry offers
// for a setting is one the server accepts.
func TestBundleChoicesStartTheServer(t *testing.T) {
	for _, o := range bundle.Options {
		for _, c := range o.Choices {
			env := map[string]string{o.Env: c}
			if _, err := loadConfig([]string{"stdio"}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
				t.Errorf("%s=%s (a choice server.json offers) is refused: %v", o.Env, c, err)
			}
		}
	}
}
