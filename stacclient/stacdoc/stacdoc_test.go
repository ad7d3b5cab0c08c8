package stacdoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

const goodItem = `{
  "type": "Feature", "stac_version": "1.0.0", "id": "scene-1", "collection": "c",
  "geometry": {"type": "Polygon", "coordinates": [[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]},
  "bbox": [10, 50, 11, 51],
  "properties": {"datetime": "2024-06-01T10:00:00Z"},
  "links": [], "assets": {"data": {"href": "https://example.com/scene-1.tif"}}
}`

const goodCollection = `{
  "type": "Collection", "stac_version": "1.0.0", "id": "c", "description": "Scenes", "license": "CC-BY-4.0",
  "extent": {"spatial": {"bbox": [[-180, -90, 180, 90]]}, "temporal": {"interval": [["2024-01-01T00:00:00Z", null]]}},
  "links": []
}`

func TestValidDocumentsPass(t *testing.T) {
	if err := CheckItem(decode(t, goodItem)); err != nil {
		t.Errorf("item: %v", err)
	}
	if err := CheckCollection(decode(t, goodCollection)); err != nil {
		t.Errorf("collection: %v", err)
	}
	// Null geometry without bbox; a time range instead of datetime; an
	// antimeridian bbox; a 3D bbox; float64 numbers (no UseNumber).
	for _, doc := range []string{
		strings.Replace(strings.Replace(goodItem, `"geometry": {"type": "Polygon", "coordinates": [[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]},`, `"geometry": null,`, 1), `"bbox": [10, 50, 11, 51],`, "", 1),
		strings.Replace(goodItem, `"datetime": "2024-06-01T10:00:00Z"`, `"datetime": null, "start_datetime": "2024-06-01T00:00:00Z", "end_datetime": "2024-06-02T00:00:00Z"`, 1),
		strings.Replace(strings.Replace(goodItem, `[[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]`, `[[[179, 50], [-179, 50], [-179, 51], [179, 51], [179, 50]]]`, 1), `[10, 50, 11, 51]`, `[179, 50, -179, 51]`, 1),
		strings.Replace(goodItem, `[10, 50, 11, 51]`, `[10, 50, 0, 11, 51, 100]`, 1),
	} {
		var m map[string]any
		if err := json.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if err := CheckItem(m); err != nil {
			t.Errorf("%v\n%s", err, doc)
		}
	}
}

func TestBadItemsListEveryProblem(t *testing.T) {
	for _, c := range []struct {
		name, from, to string
		want           []string // paths that must be reported
	}{
		{"wrong type and no version", `"type": "Feature", "stac_version": "1.0.0"`, `"type": "Collection"`, []string{"type", "stac_version"}},
		{"id with a slash", `"id": "scene-1"`, `"id": "a/b"`, []string{"id"}},
		{"lat and lon swapped", `[10, 50, 11, 51]`, `[50, 10, 51, 100]`, []string{"bbox"}},
		{"latitude out of range", `[[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]`, `[[[50, 100], [51, 100], [51, 101], [50, 101], [50, 100]]]`, []string{"geometry"}},
		{"geometry but no bbox", `"bbox": [10, 50, 11, 51],`, ``, []string{"bbox"}},
		{"null geometry with a bbox", `"geometry": {"type": "Polygon", "coordinates": [[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]},`, `"geometry": null,`, []string{"bbox"}},
		{"not GeoJSON", `{"type": "Polygon", "coordinates": [[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]}`, `{"type": "Circle", "radius": 3}`, []string{"geometry"}},
		{"datetime not RFC 3339", `"2024-06-01T10:00:00Z"`, `"June 1st"`, []string{"properties.datetime"}},
		{"null datetime without a range", `"datetime": "2024-06-01T10:00:00Z"`, `"datetime": null`, []string{"properties.datetime"}},
		{"no assets, no links", `"links": [], "assets": {"data": {"href": "https://example.com/scene-1.tif"}}`, `"x": 1`, []string{"links", "assets"}},
		{"asset without href", `{"href": "https://example.com/scene-1.tif"}`, `{"type": "image/tiff"}`, []string{"assets.data.href"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(goodItem, c.from, c.to, 1)
			if doc == goodItem {
				t.Fatalf("replacement %q not found", c.from)
			}
			err := CheckItem(decode(t, doc))
			var de *Error
			if !errors.As(err, &de) {
				t.Fatalf("CheckItem = %v, want an *Error", err)
			}
			paths := map[string]bool{}
			for _, p := range de.Problems {
				paths[p.Path] = true
			}
			for _, want := range c.want {
				if !paths[want] {
					t.Errorf("problems %v lack %q", de.Problems, want)
				}
			}
			if !strings.Contains(err.Error(), "not a valid STAC Item") {
				t.Errorf("message %q", err)
			}
		})
	}
}

func TestBadCollections(t *testing.T) {
	for _, c := range []struct{ from, to, path string }{
		{`"license": "CC-BY-4.0"`, `"license": ""`, "license"},
		{`"description": "Scenes"`, `"description": 3`, "description"},
		{`[[-180, -90, 180, 90]]`, `[]`, "extent.spatial.bbox"},
		{`[[-180, -90, 180, 90]]`, `[[-180, 90, 180, -90]]`, "extent.spatial.bbox[0]"},
		{`[["2024-01-01T00:00:00Z", null]]`, `[["2024-02-01T00:00:00Z", "2024-01-01T00:00:00Z"]]`, "extent.temporal.interval[0]"},
		{`[["2024-01-01T00:00:00Z", null]]`, `[["2024", null]]`, "extent.temporal.interval[0][0]"},
	} {
		doc := strings.Replace(goodCollection, c.from, c.to, 1)
		err := CheckCollection(decode(t, doc))
		var de *Error
		if !errors.As(err, &de) {
			t.Errorf("%s → %s: %v, want an error", c.from, c.to, err)
			continue
		}
		found := false
		for _, p := range de.Problems {
			found = found || p.Path == c.path
		}
		if !found {
			t.Errorf("%s → %s: problems %v lack %s", c.from, c.to, de.Problems, c.path)
		}
	}
}

func TestIDProblem(t *testing.T) {
	for id, bad := range map[string]bool{
		"S2B_24MUA_20250731_0_L2A": false, "a b": false, "ünïcode": false,
		"": true, " x": true, "..": true, "a/b": true, `a\b`: true, "a\nb": true, strings.Repeat("x", MaxIDLength+1): true,
	} {
		if got := IDProblem(id) != ""; got != bad {
			t.Errorf("IDProblem(%q) = %q", id, IDProblem(id))
		}
	}
}

// TestRealDocumentsPass: every item and collection of the stacserver
// test data (the STAC specification's examples, joplin) passes as written
// through the Transaction API, the spec's proj-example with a warning
// (its bbox does not contain its geometry), and so does every STAC 1.0.0
// document of the demo catalog except those the official schemas refuse
// (listed with the reason). The demo's older versions are not checked:
// they are served as recorded, never written.
func TestRealDocumentsPass(t *testing.T) {
	knownInvalid := map[string]string{
		"landsat-8-l1/collection.json": `stac_extensions "eo", "view": short names, not schema URLs (format iri)`,
		"landsat-8-l1/items/LC8":       `eo:bands common_name "lwir2" is not in the eo extension's list`,
	}
	checked := 0
	for _, root := range []string{"../stacserver/demo/catalog", "../stacserver/testdata"} {
		err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".geojson")) {
				return err
			}
			raw, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				return err
			}
			var doc map[string]any
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if dec.Decode(&doc) != nil {
				return nil //nolint:nilerr // a file that is not one JSON object is not a document this test checks
			}
			docs := []map[string]any{doc}
			if features, ok := doc["features"].([]any); ok {
				for _, f := range features {
					if m, ok := f.(map[string]any); ok {
						docs = append(docs, m)
					}
				}
			}
			for _, d := range docs {
				if d["stac_version"] != "1.0.0" {
					continue
				}
				var r *Result
				switch d["type"] {
				case "Feature":
					r = ValidateItem(d)
				case "Collection":
					r = ValidateCollection(d)
				default:
					continue
				}
				checked++
				invalid := false
				for prefix := range knownInvalid {
					invalid = invalid || strings.HasPrefix(p, prefix)
				}
				if err := r.Err(); (err != nil) != invalid {
					t.Errorf("%s/%s: %v (listed as invalid: %v)", root, p, err, invalid)
				}
				if strings.HasSuffix(p, "proj-example.json") && len(r.Warnings) == 0 {
					t.Errorf("%s: the spec example's inconsistent bbox passed without a warning", p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 60 {
		t.Fatalf("only %d documents checked", checked)
	}
}

func TestMergePatch(t *testing.T) {
	doc := map[string]any{"id": "a", "properties": map[string]any{"datetime": "x", "gsd": 10.0, "old": true}, "assets": map[string]any{"a": 1}}
	got := MergePatch(doc, map[string]any{"properties": map[string]any{"gsd": 5.0, "old": nil, "new": "y"}, "assets": nil, "title": "T"})
	want := `{"id":"a","properties":{"datetime":"x","gsd":5,"new":"y"},"title":"T"}`
	raw, _ := json.Marshal(got)
	if string(raw) != want {
		t.Errorf("MergePatch = %s, want %s", raw, want)
	}
	if _, changed := doc["title"]; changed || doc["properties"].(map[string]any)["old"] != true {
		t.Error("MergePatch changed its input")
	}
}
