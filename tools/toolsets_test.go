package tools

import (
	"slices"
	"strings"
	"testing"
)

func toolNames(tools []Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.Def.Name)
	}
	return names
}

func TestEveryToolIsInADocumentedToolset(t *testing.T) {
	t.Parallel()
	sets := toolsetNames()
	for _, tool := range Inventory() {
		if !slices.Contains(sets, tool.Toolset) {
			t.Errorf("%s is in toolset %q, not one of %v", tool.Def.Name, tool.Toolset, sets)
		}
	}
}

func TestNewSurfaceSelectsToolsetsAndTools(t *testing.T) {
	t.Parallel()
	all := Inventory()
	for _, c := range []struct {
		name string
		opts SurfaceOptions
		want []string
	}{
		{"default: everything", SurfaceOptions{}, toolNames(all)},
		{"all", SurfaceOptions{Toolsets: []string{"all"}}, toolNames(all)},
		{"one toolset", SurfaceOptions{Toolsets: []string{"search"}}, []string{"search_items", "get_item", "get_aggregations"}},
		{"toolsets, any case and spaces", SurfaceOptions{Toolsets: []string{" Size", "ops "}}, []string{"estimate_data_size", "get_service_health"}},
		{"tools alone", SurfaceOptions{Tools: []string{"get_item", "search_items"}}, []string{"search_items", "get_item"}},
		{"toolset plus a tool", SurfaceOptions{Toolsets: []string{"size"}, Tools: []string{"get_collection"}}, []string{"get_collection", "estimate_data_size"}},
		{"read-only keeps every read tool", SurfaceOptions{ReadOnly: true, WritesAllowed: true}, toolNames(all)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewSurface(all, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(s.Select(all)); !slices.Equal(got, c.want) {
				t.Errorf("selected %v, want %v", got, c.want)
			}
		})
	}
}

// TestSurfaceWithWrites: with writes allowed the write toolset is part of
// "all" and can be named alone; --read-only drops it whatever is asked.
func TestSurfaceWithWrites(t *testing.T) {
	t.Parallel()
	candidates := Candidates(true)
	writes := toolNames(WriteTools())
	for _, c := range []struct {
		name string
		opts SurfaceOptions
		want []string
	}{
		{"all lists the writes", SurfaceOptions{WritesAllowed: true}, toolNames(candidates)},
		{"the write toolset alone", SurfaceOptions{Toolsets: []string{"write"}, WritesAllowed: true}, writes},
		{"read-only wins", SurfaceOptions{WritesAllowed: true, ReadOnly: true}, toolNames(Inventory())},
		{"read-only with toolsets all", SurfaceOptions{Toolsets: []string{"all"}, WritesAllowed: true, ReadOnly: true}, toolNames(Inventory())},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := NewSurface(candidates, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(s.Select(candidates)); !slices.Equal(got, c.want) {
				t.Errorf("selected %v, want %v", got, c.want)
			}
		})
	}
	withWrites, readOnly := Instructions(candidates), Instructions(Inventory())
	for _, tool := range WriteTools() {
		if !strings.Contains(withWrites, "`"+tool.Def.Name+"`") || strings.Contains(readOnly, tool.Def.Name) {
			t.Errorf("instructions mention %s with writes: %v, without: %v; want only with", tool.Def.Name,
				strings.Contains(withWrites, tool.Def.Name), strings.Contains(readOnly, tool.Def.Name))
		}
		if tool.Toolset != ToolsetWrite {
			t.Errorf("%s is in toolset %q, want write", tool.Def.Name, tool.Toolset)
		}
	}
	if !strings.Contains(withWrites, "SAME key") || strings.Contains(readOnly, "idempotency_key") {
		t.Error("the idempotency key is explained only when write tools are listed")
	}
	if _, err := NewSurface(candidates, SurfaceOptions{Tools: []string{"delete_item"}, WritesAllowed: true, ReadOnly: true}); err == nil ||
		!strings.Contains(err.Error(), "read-only") {
		t.Errorf("naming a write tool on a read-only server: %v, want a read-only error", err)
	}
}

func TestNewSurfaceRefusesUnknownNamesListingTheValidOnes(t *testing.T) {
	t.Parallel()
	all := Inventory()
	for _, c := range []struct {
		opts SurfaceOptions
		want []string
	}{
		{SurfaceOptions{Toolsets: []string{"discovery"}}, []string{`unknown toolset "discovery"`, "all, discover, search, size, visual, pixels, export, ops, write"}},
		{SurfaceOptions{Tools: []string{"search_item"}}, []string{`unknown tool "search_item"`, "search_items", "get_service_health"}},
		{SurfaceOptions{Toolsets: []string{"write"}}, []string{"write toolset", "--allow-writes"}},
		{SurfaceOptions{Toolsets: []string{"write"}, WritesAllowed: true, ReadOnly: true}, []string{"read-only"}},
		{SurfaceOptions{Tools: []string{"create_item"}}, []string{"create_item", "--allow-writes"}},
		{SurfaceOptions{Tools: []string{"create_item"}, ReadOnly: true}, []string{"create_item", "read-only"}},
	} {
		_, err := NewSurface(all, c.opts)
		if err == nil {
			t.Errorf("%+v: no error", c.opts)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: error %q lacks %q", c.opts, err, w)
			}
		}
	}
}

// TestServerListsAndInstructsOnlyTheSurface: tools/list holds exactly the
// selected tools and the instructions name those and no other.
func TestServerListsAndInstructsOnlyTheSurface(t *testing.T) {
	t.Parallel()
	all := Inventory()
	for _, opts := range []SurfaceOptions{
		{},
		{Toolsets: []string{"discover"}},
		{Toolsets: []string{"search"}},
		{Tools: []string{"get_item"}},
		{Toolsets: []string{"size", "ops"}},
	} {
		surface, err := NewSurface(all, opts)
		if err != nil {
			t.Fatal(err)
		}
		d := newTestDeps(t, testSessionOptions{})
		d.Surface = surface
		cs := connect(t, NewServer(d, "test"))
		var listed []string
		for _, tool := range listTools(t, cs) {
			listed = append(listed, tool.Name)
		}
		want := toolNames(surface.Select(all))
		slices.Sort(listed)
		sorted := slices.Sorted(slices.Values(want))
		if !slices.Equal(listed, sorted) {
			t.Errorf("%+v: tools/list %v, want %v", opts, listed, sorted)
		}
		instructions := cs.InitializeResult().Instructions
		for _, tool := range all {
			mentioned := strings.Contains(instructions, "`"+tool.Def.Name+"`")
			if enabled := slices.Contains(want, tool.Def.Name); mentioned != enabled {
				t.Errorf("%+v: instructions mention %s: %v, but it is enabled: %v", opts, tool.Def.Name, mentioned, enabled)
			}
		}
	}
}
