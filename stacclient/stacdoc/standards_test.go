package stacdoc

import (
	"strings"
	"testing"
	"time"
)

// The false accepts and rejects of issue 23 (a differential run against
// stac-node-validator with the official schemas), each through CheckItem,
// the check every write makes. Each failed before the schemas were used.
func TestIssue23Verdicts(t *testing.T) {
	const eo = `"stac_extensions": ["https://stac-extensions.github.io/eo/v1.0.0/schema.json"], `
	for _, c := range []struct {
		name, from, to string
		path           string // the member the error names; "" = valid
		warn           string // a warning that must be given
	}{
		{"gsd -1", `"datetime": "2024-06-01T10:00:00Z"`, `"datetime": "2024-06-01T10:00:00Z", "gsd": -1`, "properties.gsd", ""},
		{"cloud cover 150", `"datetime": "2024-06-01T10:00:00Z"`, `"datetime": "2024-06-01T10:00:00Z", "eo:cloud_cover": 150`, "properties.eo:cloud_cover", ""},
		{"offset datetime", `"2024-06-01T10:00:00Z"`, `"2024-06-01T11:00:00+01:00"`, "properties.datetime", ""},
		{"instruments as a string", `"datetime": "2024-06-01T10:00:00Z"`, `"datetime": "2024-06-01T10:00:00Z", "instruments": "msi"`, "properties.instruments", ""},
		{"3-position ring", `[[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]`, `[[[10, 50], [11, 50], [10, 50]]]`, "geometry.coordinates[0]", ""},
		{"stac_version 2.0.0", `"stac_version": "1.0.0"`, `"stac_version": "2.0.0"`, "stac_version", ""},
		{"stac_extensions not unique", `"id": "scene-1",`, `"id": "scene-1", "stac_extensions": ["https://stac-extensions.github.io/eo/v1.0.0/schema.json", "https://stac-extensions.github.io/eo/v1.0.0/schema.json"],`, "stac_extensions", ""},
		{"a rel=collection link without the member", `"collection": "c",`, ``, "collection", ""},
		// False rejects.
		{"leap second", `"2024-06-01T10:00:00Z"`, `"2016-12-31T23:59:60Z"`, "", ""},
		{"leap second with a fraction", `"2024-06-01T10:00:00Z"`, `"2016-12-31T23:59:60.5Z"`, "", ""},
		{"empty polygon", `[[[10, 50], [11, 50], [11, 51], [10, 51], [10, 50]]]`, `[]`, "", "geometry"},
		{"bbox not containing the geometry", `[10, 50, 11, 51]`, `[10, 50, 10.5, 51]`, "", "bbox"},
		// Reported, not silently passed.
		{"extension without an embedded schema", `"id": "scene-1",`, `"id": "scene-1", "stac_extensions": ["https://example.com/my-ext/v1.0.0/schema.json"],`, "", "stac_extensions[0]"},
		{"STAC 1.1.0", `"stac_version": "1.0.0"`, `"stac_version": "1.1.0"`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(goodItem, c.from, c.to, 1)
			if c.name == "a rel=collection link without the member" {
				doc = strings.Replace(doc, `"links": []`, `"links": [{"rel": "collection", "href": "../c/collection.json"}]`, 1)
			}
			if c.name == "cloud cover 150" {
				doc = strings.Replace(doc, `"id": "scene-1",`, `"id": "scene-1", `+eo, 1)
			}
			if doc == goodItem {
				t.Fatalf("replacement %q not found", c.from)
			}
			r := ValidateItem(decode(t, doc))
			if c.path == "" {
				if err := r.Err(); err != nil {
					t.Fatalf("refused: %v", err)
				}
			} else {
				found := false
				for _, p := range r.Errors {
					found = found || p.Path == c.path
				}
				if !found {
					t.Fatalf("errors %v do not name %s", r.Errors, c.path)
				}
				if err := CheckItem(decode(t, doc)); err == nil || !strings.Contains(err.Error(), c.path) {
					t.Errorf("CheckItem = %v", err)
				}
			}
			if c.warn != "" {
				found := false
				for _, p := range r.Warnings {
					found = found || p.Path == c.warn
				}
				if !found {
					t.Errorf("warnings %v do not name %s", r.Warnings, c.warn)
				}
			}
		})
	}
}

// An extension's schema that is not embedded is named in the warning.
func TestNotValidatedNamesTheURL(t *testing.T) {
	doc := strings.Replace(goodItem, `"id": "scene-1",`, `"id": "scene-1", "stac_extensions": ["https://example.com/x/v1/schema.json"],`, 1)
	r := ValidateItem(decode(t, doc))
	if got := strings.Join(r.WarningTexts(), "\n"); !strings.Contains(got, "not validated: https://example.com/x/v1/schema.json") {
		t.Errorf("warnings %q", got)
	}
}

// The item spec: collection is required with a rel=collection link and
// not allowed without one. A published file is held to that; a write is
// checked as the catalog serves it, with its collection link.
func TestCollectionMemberAndLink(t *testing.T) {
	doc := decode(t, goodItem) // collection "c", no links
	if err := ValidateDocument(doc).Err(); err == nil || !strings.Contains(err.Error(), "collection:") {
		t.Errorf("as a file: %v, want the collection member named", err)
	}
	if err := CheckItem(doc); err != nil {
		t.Errorf("as a write: %v", err)
	}
	if _, changed := doc["links"].([]any); !changed || len(doc["links"].([]any)) != 0 {
		t.Errorf("the write check changed its input: %v", doc["links"])
	}
}

func TestParseTime(t *testing.T) {
	for s, want := range map[string]string{
		"2024-06-01T10:00:00Z":           "2024-06-01T10:00:00Z",
		"2024-06-01t10:00:00z":           "2024-06-01T10:00:00Z",
		"2024-06-01T10:00:00.5Z":         "2024-06-01T10:00:00.5Z",
		"2024-06-01T12:00:00+02:00":      "2024-06-01T10:00:00Z",
		"2016-12-31T23:59:60Z":           "2016-12-31T23:59:59.999999999Z",
		"2016-12-31T23:59:60.25Z":        "2016-12-31T23:59:59.999999999Z",
		"2017-01-01T00:59:60+01:00":      "2016-12-31T23:59:59.999999999Z",
		"2024-06-01T10:00:00.123456789Z": "2024-06-01T10:00:00.123456789Z",
	} {
		got, err := ParseTime(s)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", s, err)
			continue
		}
		if g := got.UTC().Format(time.RFC3339Nano); g != want {
			t.Errorf("ParseTime(%q) = %s, want %s", s, g, want)
		}
	}
	for _, s := range []string{
		"2024-06-01T10:00:00,5Z", // comma decimal: ISO 8601, not RFC 3339
		"2024-06-01T10:00:00",    // no zone
		"2024-06-01 10:00:00Z",
		"2024-02-30T10:00:00Z",
		"2024-06-01T10:00:60Z", // a leap second only at 23:59 UTC
		"2024-06-01T10:00:00.Z",
		"2024-06-01",
	} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) accepted", s)
		}
	}
}
