package stacdoc

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The STAC specification's own 1.1.0 examples (testdata/stac-examples/
// stac-spec-v1.1.0, see its README) pass the embedded 1.1.0 core schemas,
// with no "not validated" warning for the core schema.
func TestValidateSTAC110Examples(t *testing.T) {
	const dir = "testdata/stac-examples/stac-spec-v1.1.0"
	checked := 0
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		raw, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return err
		}
		r := ValidateDocument(doc)
		if err := r.Err(); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		for _, w := range r.WarningTexts() {
			if strings.Contains(w, "not validated") {
				t.Errorf("%s: %s", p, w)
			}
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 10 {
		t.Fatalf("only %d documents checked", checked)
	}
}

// A STAC 1.1.0 item is held to the 1.1.0 core schemas: before they were
// embedded these were accepted with a "not validated" warning.
func TestValidateSTAC110Refuses(t *testing.T) {
	raw, err := os.ReadFile("testdata/stac-examples/stac-spec-v1.1.0/simple-item.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		mutate func(doc, props, asset map[string]any)
		path   string // the member the error names
	}{
		{"gsd -1", func(_, p, _ map[string]any) { p["gsd"] = -1.0 }, "properties.gsd"},
		// bands is new in 1.1.0 (bands.json): an array of objects.
		{"asset bands not an array", func(_, _, a map[string]any) { a["bands"] = map[string]any{"name": "b1"} }, "assets.visual.bands"},
		{"band not an object", func(_, _, a map[string]any) { a["bands"] = []any{"b1"} }, "assets.visual.bands[0]"},
		// data_type (data-values.json) is an enumeration.
		{"band data_type not in the list", func(_, _, a map[string]any) {
			a["bands"] = []any{map[string]any{"name": "b1", "data_type": "float99"}}
		}, "assets.visual.bands[0].data_type"},
		{"properties bands malformed", func(_, p, _ map[string]any) { p["bands"] = "red" }, "properties.bands"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			if err := ValidateDocument(doc).Err(); err != nil {
				t.Fatalf("the example itself is refused: %v", err)
			}
			asset := doc["assets"].(map[string]any)["visual"].(map[string]any)
			c.mutate(doc, doc["properties"].(map[string]any), asset)
			r := ValidateDocument(doc)
			found := false
			for _, p := range r.Errors {
				found = found || p.Path == c.path
			}
			if !found {
				t.Fatalf("errors %v do not name %s (warnings %v)", r.Errors, c.path, r.WarningTexts())
			}
			if err := CheckItem(doc); err == nil || !strings.Contains(err.Error(), c.path) {
				t.Errorf("CheckItem = %v", err)
			}
		})
	}
}
