package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// originalAPIHosts are the hosts the data was recorded from. Links to them would send a client
// back to the live (or defunct) API instead of the embedded copy, so none may remain.
var originalAPIHosts = []string{
	"earth-search.aws.element84.com",
	"eod-catalog-svc-prod.astraea.earth",
	"stac.sage.uvt.ro",
	"api.radiant.earth",
	"explorer.digitalearth.africa",
	"raw.githubusercontent.com",
	"stac-api.example.com",
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

type document struct {
	Type        string          `json:"type"`
	ID          string          `json:"id"`
	StacVersion string          `json:"stac_version"`
	Collection  string          `json:"collection"`
	Geometry    json.RawMessage `json:"geometry"`
	BBox        []float64       `json:"bbox"`
	Properties  map[string]any  `json:"properties"`
	Assets      map[string]any  `json:"assets"`
	Links       []link          `json:"links"`
}

// catalogReport is what checkCatalog found: item counts per collection, and every problem.
type catalogReport struct {
	itemsPerCollection map[string]int
	problems           []string
}

func (r *catalogReport) addf(format string, args ...any) {
	r.problems = append(r.problems, fmt.Sprintf(format, args...))
}

func (r *catalogReport) totalItems() int {
	total := 0
	for _, n := range r.itemsPerCollection {
		total += n
	}
	return total
}

// checkCatalog validates a static STAC catalog laid out as
// RootFile, <collection>/collection.json and <collection>/items/<item>.json.
func checkCatalog(fsys fs.FS) *catalogReport {
	report := &catalogReport{itemsPerCollection: map[string]int{}}
	root, err := readDocument(fsys, RootFile)
	if err != nil {
		report.addf("%v", err)
		return report
	}
	if root.Type != "Catalog" || root.ID == "" {
		report.addf("%s: want a Catalog with an id, got type %q id %q", RootFile, root.Type, root.ID)
	}
	checkLinks(fsys, RootFile, root.Links, report)

	linkedCollections := map[string]bool{}
	for _, l := range root.Links {
		if l.Rel == "child" {
			linkedCollections[path.Join(path.Dir(RootFile), l.Href)] = true
		}
	}

	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		report.addf("read root directory: %v", err)
		return report
	}
	seen := map[[2]string]string{}
	for _, entry := range entries {
		if !entry.IsDir() {
			if entry.Name() != RootFile {
				report.addf("unexpected file %q at the catalog root", entry.Name())
			}
			continue
		}
		collectionID := entry.Name()
		collectionFile := path.Join(collectionID, "collection.json")
		if !linkedCollections[collectionFile] {
			report.addf("%s is not linked as a child of %s", collectionFile, RootFile)
		}
		checkCollection(fsys, collectionID, seen, report)
	}
	for file := range linkedCollections {
		if _, err := fs.Stat(fsys, file); err != nil {
			report.addf("%s links child %s, which does not exist", RootFile, file)
		}
	}
	sort.Strings(report.problems)
	return report
}

func checkCollection(fsys fs.FS, collectionID string, seen map[[2]string]string, report *catalogReport) {
	collectionFile := path.Join(collectionID, "collection.json")
	collection, err := readDocument(fsys, collectionFile)
	if err != nil {
		report.addf("%v", err)
		return
	}
	if collection.Type != "Collection" || collection.ID != collectionID {
		report.addf("%s: want type Collection with id %q, got type %q id %q",
			collectionFile, collectionID, collection.Type, collection.ID)
	}
	checkLinks(fsys, collectionFile, collection.Links, report)
	linkedItems := map[string]bool{}
	for _, l := range collection.Links {
		if l.Rel == "item" {
			linkedItems[resolve(collectionFile, l.Href)] = true
		}
	}

	itemFiles, err := fs.Glob(fsys, path.Join(collectionID, "items", "*"))
	if err != nil {
		report.addf("list items of %s: %v", collectionID, err)
		return
	}
	if len(itemFiles) != len(linkedItems) {
		report.addf("%s links %d items but its items directory holds %d files",
			collectionFile, len(linkedItems), len(itemFiles))
	}
	report.itemsPerCollection[collectionID] = 0 // so an empty collection is still counted and reported
	for _, itemFile := range itemFiles {
		if !linkedItems[itemFile] {
			report.addf("%s is not linked as an item of %s", itemFile, collectionFile)
		}
		item, err := readDocument(fsys, itemFile)
		if err != nil {
			report.addf("%v", err)
			continue
		}
		checkItem(itemFile, collectionID, item, report)
		checkLinks(fsys, itemFile, item.Links, report)
		key := [2]string{item.Collection, item.ID}
		if previous, dup := seen[key]; dup {
			report.addf("duplicate item (collection %q, id %q) in %s and %s", key[0], key[1], previous, itemFile)
		}
		seen[key] = itemFile
		report.itemsPerCollection[collectionID]++
	}
}

func checkItem(itemFile, collectionID string, item *document, report *catalogReport) {
	if item.Type != "Feature" {
		report.addf("%s: type is %q, want Feature", itemFile, item.Type)
	}
	if item.ID == "" || path.Base(itemFile) != item.ID+".json" {
		report.addf("%s: id %q does not match the file name", itemFile, item.ID)
	}
	if item.Collection != collectionID {
		report.addf("%s: collection is %q, want the folder's collection %q", itemFile, item.Collection, collectionID)
	}
	if item.StacVersion == "" {
		report.addf("%s: stac_version is missing", itemFile)
	}
	if len(item.Assets) == 0 {
		report.addf("%s: has no assets", itemFile)
	}
	geometryIsNull := len(item.Geometry) == 0 || string(item.Geometry) == "null"
	if geometryIsNull && item.BBox != nil {
		report.addf("%s: has a bbox but no geometry", itemFile)
	}
	_, hasDatetime := item.Properties["datetime"]
	hasDatetime = hasDatetime && item.Properties["datetime"] != nil
	hasRange := item.Properties["start_datetime"] != nil && item.Properties["end_datetime"] != nil
	if !hasDatetime && !hasRange {
		report.addf("%s: properties need datetime or start_datetime and end_datetime", itemFile)
	}
}

// checkLinks requires every relative link to name a file in fsys and no link to point at an
// original API host.
func checkLinks(fsys fs.FS, file string, links []link, report *catalogReport) {
	for _, l := range links {
		u, err := url.Parse(l.Href)
		if err != nil {
			report.addf("%s: link rel %q has an unparsable href %q: %v", file, l.Rel, l.Href, err)
			continue
		}
		if u.IsAbs() || u.Host != "" {
			for _, host := range originalAPIHosts {
				if strings.EqualFold(u.Hostname(), host) {
					report.addf("%s: link rel %q still points at the original API: %s", file, l.Rel, l.Href)
				}
			}
			continue
		}
		target := resolve(file, u.Path)
		if !fs.ValidPath(target) {
			report.addf("%s: link rel %q href %q leaves the catalog", file, l.Rel, l.Href)
			continue
		}
		if _, err := fs.Stat(fsys, target); err != nil {
			report.addf("%s: link rel %q href %q does not resolve to a file (%s)", file, l.Rel, l.Href, target)
		}
	}
}

// resolve interprets a relative href against the directory of the file holding it.
func resolve(file, href string) string {
	if unescaped, err := url.PathUnescape(href); err == nil {
		href = unescaped
	}
	return path.Join(path.Dir(file), href)
}

func readDocument(fsys fs.FS, file string) (*document, error) {
	data, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	var doc document
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid STAC JSON: %w", file, err)
	}
	return &doc, nil
}

func TestDemoCatalogIsAValidStaticCatalog(t *testing.T) {
	report := checkCatalog(FS)
	for _, problem := range report.problems {
		t.Error(problem)
	}
	if got := len(report.itemsPerCollection); got < 3 {
		t.Errorf("catalog has %d collections, want at least 3", got)
	}
	if got := report.totalItems(); got < 100 {
		t.Errorf("catalog has %d items, want at least 100", got)
	}
	for collection, n := range report.itemsPerCollection {
		if n == 0 {
			t.Errorf("collection %s has no items", collection)
		}
	}
	t.Logf("%d items in %d collections: %v", report.totalItems(), len(report.itemsPerCollection), report.itemsPerCollection)
}

func TestRootFileIsTheDemoCatalog(t *testing.T) {
	root, err := readDocument(FS, RootFile)
	if err != nil {
		t.Fatal(err)
	}
	if root.ID != "stac-mcp-demo" || root.Type != "Catalog" {
		t.Fatalf("%s: got type %q id %q, want Catalog stac-mcp-demo", RootFile, root.Type, root.ID)
	}
}

// The validator above is only worth something if it notices broken catalogs.
func TestCheckCatalogReportsBrokenCatalogs(t *testing.T) {
	const goodItem = `{"type":"Feature","stac_version":"1.0.0","id":"a","collection":"c",
		"geometry":{"type":"Point","coordinates":[0,0]},"bbox":[0,0,0,0],
		"properties":{"datetime":"2020-01-01T00:00:00Z"},"assets":{"data":{"href":"https://example.org/a.tif"}},
		"links":[{"rel":"root","href":"../../catalog.json"},{"rel":"collection","href":"../collection.json"}]}`
	const goodCollection = `{"type":"Collection","id":"c","links":[{"rel":"root","href":"../catalog.json"},
		{"rel":"item","href":"./items/a.json"}]}`
	const goodRoot = `{"type":"Catalog","id":"x","links":[{"rel":"child","href":"./c/collection.json"}]}`
	valid := func() fstest.MapFS {
		return fstest.MapFS{
			"catalog.json":      {Data: []byte(goodRoot)},
			"c/collection.json": {Data: []byte(goodCollection)},
			"c/items/a.json":    {Data: []byte(goodItem)},
		}
	}
	if report := checkCatalog(valid()); len(report.problems) != 0 || report.totalItems() != 1 {
		t.Fatalf("a valid one-item catalog was rejected: %v (items %d)", report.problems, report.totalItems())
	}

	cases := []struct {
		name         string
		breakCatalog func(fstest.MapFS)
		want         string
	}{
		{"dangling relative link", func(m fstest.MapFS) {
			m["c/items/a.json"] = &fstest.MapFile{Data: []byte(strings.Replace(goodItem, "../collection.json", "../missing.json", 1))}
		}, "does not resolve"},
		{"link to an original API host", func(m fstest.MapFS) {
			m["c/items/a.json"] = &fstest.MapFile{Data: []byte(strings.Replace(goodItem, "../../catalog.json",
				"https://earth-search.aws.element84.com/v1", 1))}
		}, "original API"},
		{"item in the wrong collection folder", func(m fstest.MapFS) {
			m["c/items/a.json"] = &fstest.MapFile{Data: []byte(strings.Replace(goodItem, `"collection":"c"`, `"collection":"d"`, 1))}
		}, "want the folder's collection"},
		{"item without a datetime", func(m fstest.MapFS) {
			m["c/items/a.json"] = &fstest.MapFile{Data: []byte(strings.Replace(goodItem, `"datetime"`, `"created"`, 1))}
		}, "need datetime"},
		{"item that is not a Feature", func(m fstest.MapFS) {
			m["c/items/a.json"] = &fstest.MapFile{Data: []byte(strings.Replace(goodItem, `"Feature"`, `"Collection"`, 1))}
		}, "want Feature"},
		{"item that is not JSON", func(m fstest.MapFS) {
			m["c/items/a.json"] = &fstest.MapFile{Data: []byte(`{"type":`)}
		}, "not valid STAC JSON"},
		{"unlinked item file", func(m fstest.MapFS) {
			m["c/items/b.json"] = &fstest.MapFile{Data: []byte(strings.Replace(goodItem, `"id":"a"`, `"id":"b"`, 1))}
		}, "is not linked as an item"},
		{"duplicate (collection, id)", func(m fstest.MapFS) {
			m["c/items/b.json"] = &fstest.MapFile{Data: []byte(goodItem)}
			m["c/collection.json"] = &fstest.MapFile{Data: []byte(strings.Replace(goodCollection,
				`{"rel":"item","href":"./items/a.json"}`, `{"rel":"item","href":"./items/a.json"},{"rel":"item","href":"./items/b.json"}`, 1))}
		}, "duplicate item"},
		{"collection missing from the root", func(m fstest.MapFS) {
			m["catalog.json"] = &fstest.MapFile{Data: []byte(`{"type":"Catalog","id":"x","links":[]}`)}
		}, "is not linked as a child"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			broken := valid()
			tc.breakCatalog(broken)
			report := checkCatalog(broken)
			if !containsProblem(report.problems, tc.want) {
				t.Fatalf("want a problem mentioning %q, got %v", tc.want, report.problems)
			}
		})
	}
}

func containsProblem(problems []string, want string) bool {
	for _, p := range problems {
		if strings.Contains(p, want) {
			return true
		}
	}
	return false
}

// The synthetic Sentinel-2 collection's assets are files of the catalog
// (served by the demo's in-process server): every relative asset href names
// a GeoTIFF in the catalog, and the pixels stay small enough to embed.
func TestDemoAssetFilesAreEmbeddedGeoTIFFs(t *testing.T) {
	items, err := fs.Glob(FS, "sentinel-2-l2a-synthetic/items/*.json")
	if err != nil || len(items) < 2 {
		t.Fatalf("synthetic items: %v %v, want at least 2", items, err)
	}
	series, err := fs.Glob(FS, "sentinel-2-l2a-synthetic-series/items/*.json")
	if err != nil || len(series) < 10 {
		t.Fatalf("synthetic series items: %v %v, want at least 10", series, err)
	}
	items = append(items, series...)
	var total int64
	for _, file := range items {
		item, err := readDocument(FS, file)
		if err != nil {
			t.Fatal(err)
		}
		for key, v := range item.Assets {
			href, _ := v.(map[string]any)["href"].(string)
			if strings.Contains(href, "://") {
				t.Errorf("%s asset %s: href %q is not a file of the demo", file, key, href)
				continue
			}
			data, err := fs.ReadFile(FS, resolve(file, href))
			if err != nil {
				t.Errorf("%s asset %s: %v", file, key, err)
				continue
			}
			if !bytes.HasPrefix(data, []byte("II*\x00")) && !bytes.HasPrefix(data, []byte("II+\x00")) {
				t.Errorf("%s asset %s: %s is not a little-endian TIFF", file, key, href)
			}
			total += int64(len(data))
		}
	}
	if total > 3800_000 {
		t.Errorf("demo pixels take %d bytes; keep the embedded assets under 3.8 MB", total)
	}
	t.Logf("demo pixels: %d bytes", total)
}
