// Package fedtest builds, for tests, STAC APIs that name, date, lay out
// and page their items the way Earth Search and Planetary Computer do:
// the items are real (recorded answers of both catalogs, testdata/), each
// served by stacserver with the catalog's own paging style, and where a
// test needs one scene in both catalogs, the other catalog's copy is made
// from that catalog's own recorded item (template), as it writes every
// scene (CopyInPlanetaryComputer, CopyInEarthSearch). See testdata/README.md.
package fedtest

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

//go:embed testdata/real-stac
var recordings embed.FS

// Item is a STAC Item as decoded JSON.
type Item = map[string]any

// Catalog hosts and roots, as the presets name them.
const (
	EarthSearchHost       = "earth-search.aws.element84.com"
	EarthSearchPath       = "/v1"
	PlanetaryComputerHost = "planetarycomputer.microsoft.com"
	PlanetaryComputerPath = "/api/stac/v1"
)

func features(path string) []Item {
	raw, err := recordings.ReadFile("testdata/real-stac/" + path)
	if err != nil {
		panic(err)
	}
	var rec struct {
		Body struct {
			Features []Item `json:"features"`
		} `json:"body"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		panic(err)
	}
	return rec.Body.Features
}

// EarthSearchItems are the items of three recorded Earth Search search
// pages (Sentinel-1 GRD, Sentinel-2 L2A, C1-L2A and L1C of 31 July 2025;
// Landsat C2 L2 and Sentinel-2 L2A of 8 October 2023), each once.
func EarthSearchItems() []Item {
	var out []Item
	seen := map[string]bool{}
	for _, f := range []string{"0005-POST-v1-search-b80653.json", "0006-POST-v1-search-264dd1.json", "0019-POST-v1-search-6026bb.json"} {
		for _, it := range features(EarthSearchHost + "/" + f) {
			key := fmt.Sprint(it["collection"], "/", it["id"])
			if !seen[key] {
				seen[key] = true
				out = append(out, it)
			}
		}
	}
	return out
}

// PlanetaryComputerItems are the 33 Sentinel-2 L2A items of one recorded
// Planetary Computer search page (one datatake of 1 January 2019).
func PlanetaryComputerItems() []Item {
	return features(PlanetaryComputerHost + "/0036-POST-api-stac-v1-search-bbb629.json")
}

// Find returns the item with id, or nil.
func Find(items []Item, id string) Item {
	for _, it := range items {
		if it["id"] == id {
			return it
		}
	}
	return nil
}

// InCollection keeps the items of one collection.
func InCollection(items []Item, collection string) []Item {
	var out []Item
	for _, it := range items {
		if it["collection"] == collection {
			out = append(out, it)
		}
	}
	return out
}

func clone(it Item) Item {
	b, err := json.Marshal(it)
	if err != nil {
		panic(err)
	}
	var out Item
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

func props(it Item) map[string]any { return it["properties"].(map[string]any) }

// s2Product reads an ESA product name: S2B_MSIL2A_20250731T130249_N0511_R095_T24MUV_20250731T132745.SAFE.
var s2Product = regexp.MustCompile(`^(S2[A-D])_MSI(L2A|L1C)_(\d{8}T\d{6})_(N\d{4})_R(\d{3})_T(\d{2}[A-Z]{3})_(\d{8}T\d{6})`)

// CopyInPlanetaryComputer is an Earth Search Sentinel-2 L2A or Landsat
// C2 L2 item as Planetary Computer publishes the same scene: the id, the
// datetime (a Sentinel-2 datatake's start, not the tile's sensing time),
// the properties and the asset hrefs (Azure Blob HTTPS) as its recorded
// item writes them, with the scene's footprint.
func CopyInPlanetaryComputer(es Item) Item {
	p := props(es)
	switch es["collection"] {
	case "sentinel-2-l2a", "sentinel-2-c1-l2a":
		m := s2Product.FindStringSubmatch(p["s2:product_uri"].(string))
		if m == nil {
			panic("no product uri in " + es["id"].(string))
		}
		platform, datatake, baseline, orbit, tile, generated := m[1], m[3], m[4], m[5], m[6], m[7]
		pc := clone(PlanetaryComputerItems()[0])
		id := fmt.Sprintf("%s_MSIL2A_%s_R%s_T%s_%s", platform, datatake, orbit, tile, generated)
		start, _ := time.Parse("20060102T150405", datatake)
		pp := props(pc)
		pp["datetime"] = start.Add(24 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000000Z")
		pp["platform"] = "Sentinel-2" + platform[2:]
		pp["s2:mgrs_tile"] = tile
		pp["sat:relative_orbit"] = json.Number(strings.TrimLeft(orbit, "0"))
		pp["s2:product_uri"] = p["s2:product_uri"]
		pp["s2:datatake_id"] = p["s2:datatake_id"]
		pp["s2:processing_baseline"] = baseline[1:3] + "." + baseline[3:]
		pp["eo:cloud_cover"] = p["eo:cloud_cover"]
		pp["proj:epsg"] = p["proj:epsg"]
		// The template's ids of its own granule, datastrip and processing
		// run name another scene: not copied.
		delete(pp, "s2:granule_id")
		delete(pp, "s2:datastrip_id")
		delete(pp, "s2:generation_time")
		oldID := PlanetaryComputerItems()[0]["id"].(string)
		oldURI := PlanetaryComputerItems()[0]["properties"].(map[string]any)["s2:product_uri"].(string)
		for k, a := range pc["assets"].(map[string]any) {
			asset := a.(map[string]any)
			href := asset["href"].(string)
			href = strings.ReplaceAll(href, oldURI, p["s2:product_uri"].(string))
			href = strings.ReplaceAll(href, "/60/V/UK/2019/01/01/", fmt.Sprintf("/%s/%s/%s/%s/%s/%s/", tile[:2], tile[2:3], tile[3:], datatake[:4], datatake[4:6], datatake[6:8]))
			href = strings.ReplaceAll(href, oldID, id)
			href = strings.ReplaceAll(href, "T60VUK", "T"+tile)
			asset["href"] = href
			pc["assets"].(map[string]any)[k] = asset
		}
		pc["id"], pc["collection"] = id, "sentinel-2-l2a"
		pc["geometry"], pc["bbox"] = es["geometry"], es["bbox"]
		pc["links"] = pcLinks("sentinel-2-l2a", id)
		return pc
	case "landsat-c2-l2":
		pc := clone(es)
		id := es["id"].(string)
		pp := props(pc)
		delete(pp, "earthsearch:payload_id")
		pp["platform"] = p["platform"]
		for k, a := range pc["assets"].(map[string]any) {
			asset := a.(map[string]any)
			href := asset["href"].(string)
			href = strings.Replace(href, "s3://usgs-landsat/collection02/", "https://landsateuwest.blob.core.windows.net/landsat-c2/", 1)
			asset["href"] = href
			for key := range asset {
				if strings.HasPrefix(key, "storage:") || key == "alternate" {
					delete(asset, key)
				}
			}
			pc["assets"].(map[string]any)[k] = asset
		}
		pc["stac_extensions"] = slices.DeleteFunc(slices.Clone(anySlice(pc["stac_extensions"])), func(v any) bool {
			return strings.Contains(fmt.Sprint(v), "/storage/")
		})
		pc["links"] = pcLinks("landsat-c2-l2", id)
		return pc
	}
	panic(fmt.Sprintf("no Planetary Computer layout for collection %v", es["collection"]))
}

// CopyInEarthSearch is a Planetary Computer Sentinel-2 L2A item as Earth
// Search publishes the scene in its sentinel-2-l2a collection: its id
// (platform, tile, date, sequence), dated at the tile's sensing time
// (here: offset gives how long after the datatake's start), with the
// mgrs:* and grid:code properties and COG hrefs on its public bucket.
func CopyInEarthSearch(pc Item, offset time.Duration) Item {
	p := props(pc)
	m := s2Product.FindStringSubmatch(p["s2:product_uri"].(string))
	if m == nil {
		panic("no product uri in " + pc["id"].(string))
	}
	platform, datatake, tile := m[1], m[3], m[6]
	es := clone(Find(EarthSearchItems(), "S2B_24MUV_20250731_0_L2A"))
	start, _ := time.Parse("20060102T150405", datatake)
	sensed := start.Add(offset)
	id := fmt.Sprintf("%s_%s_%s_0_L2A", platform, tile, sensed.Format("20060102"))
	ep := props(es)
	ep["datetime"] = sensed.UTC().Format("2006-01-02T15:04:05.000000Z")
	ep["platform"] = "sentinel-2" + strings.ToLower(platform[2:])
	ep["mgrs:utm_zone"] = json.Number(strings.TrimLeft(tile[:2], "0"))
	ep["mgrs:latitude_band"], ep["mgrs:grid_square"] = tile[2:3], tile[3:]
	ep["grid:code"] = "MGRS-" + tile
	ep["s2:product_uri"] = p["s2:product_uri"]
	ep["s2:datatake_id"] = p["s2:datatake_id"]
	ep["eo:cloud_cover"] = p["eo:cloud_cover"]
	ep["proj:epsg"] = p["proj:epsg"]
	for k, a := range es["assets"].(map[string]any) {
		asset := a.(map[string]any)
		href := asset["href"].(string)
		href = strings.ReplaceAll(href, "/24/M/UV/2025/7/S2B_24MUV_20250731_0_L2A/", fmt.Sprintf("/%s/%s/%s/%s/%d/%s/", strings.TrimLeft(tile[:2], "0"), tile[2:3], tile[3:], sensed.Format("2006"), int(sensed.Month()), id))
		asset["href"] = href
		es["assets"].(map[string]any)[k] = asset
	}
	es["id"], es["collection"] = id, "sentinel-2-l2a"
	es["geometry"], es["bbox"] = pc["geometry"], pc["bbox"]
	es["links"] = []any{
		map[string]any{"rel": "self", "type": "application/geo+json", "href": "https://" + EarthSearchHost + EarthSearchPath + "/collections/sentinel-2-l2a/items/" + id},
		map[string]any{"rel": "collection", "type": "application/json", "href": "https://" + EarthSearchHost + EarthSearchPath + "/collections/sentinel-2-l2a"},
	}
	return es
}

func anySlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func pcLinks(collection, id string) []any {
	base := "https://" + PlanetaryComputerHost + PlanetaryComputerPath
	return []any{
		map[string]any{"rel": "collection", "type": "application/json", "href": base + "/collections/" + collection},
		map[string]any{"rel": "self", "type": "application/geo+json", "href": base + "/collections/" + collection + "/items/" + id},
	}
}

// WithID is it under another id (and datetime, when given): a second,
// distinct item of the same catalog, for paging tests.
func WithID(it Item, id string, datetime time.Time) Item {
	c := clone(it)
	c["id"] = id
	if !datetime.IsZero() {
		props(c)["datetime"] = datetime.UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	return c
}

// Style is how a catalog pages and what it insists on.
type Style struct {
	Host, BasePath string
	Options        stacserver.Options
}

// EarthSearch is stac-server behind Earth Search's root: POST next links
// with merge false and the full body plus a next token; a limit above the
// maximum is clamped.
func EarthSearch() Style {
	return Style{Host: EarthSearchHost, BasePath: EarthSearchPath, Options: stacserver.Options{
		ID: "earth-search-aws", Title: "Earth Search by Element 84", BasePath: EarthSearchPath,
		NextLinkStyle: stacserver.NextPOSTMergeFalse, DefaultLimit: 10, MaxLimit: 250, LimitMode: stacserver.LimitClamp,
	}}
}

// PlanetaryComputer is pgstac behind Planetary Computer's root: POST next
// links carrying the query and a "next:…" token; searches need
// collections; a limit above 1000 is refused.
func PlanetaryComputer() Style {
	return Style{Host: PlanetaryComputerHost, BasePath: PlanetaryComputerPath, Options: stacserver.Options{
		ID: "microsoft-pc", Title: "Microsoft Planetary Computer STAC API", BasePath: PlanetaryComputerPath,
		NextLinkStyle: stacserver.NextPOSTBodyToken, DefaultLimit: 250, MaxLimit: 1000, LimitMode: stacserver.LimitReject,
		RequireCollections: true,
	}}
}

// Server serves items (with a minimal collection document for each
// collection they name, extent taken from them) in the given style.
func Server(style Style, items []Item) (*stacserver.Server, error) {
	store := stacserver.NewStore()
	byCollection := map[string][]Item{}
	for _, it := range items {
		c := fmt.Sprint(it["collection"])
		byCollection[c] = append(byCollection[c], it)
	}
	for _, c := range slices.Sorted(maps.Keys(byCollection)) {
		doc := map[string]any{"type": "Collection", "stac_version": "1.0.0", "id": c, "description": c + " (test copy)",
			"license": "proprietary", "links": []any{},
			"extent": map[string]any{"spatial": map[string]any{"bbox": []any{[]any{-180, -90, 180, 90}}},
				"temporal": map[string]any{"interval": []any{[]any{"2015-06-27T00:00:00Z", nil}}}}}
		raw, _ := json.Marshal(doc)
		if err := store.AddCollection(raw); err != nil {
			return nil, err
		}
		for _, it := range byCollection[c] {
			raw, err := json.Marshal(it)
			if err != nil {
				return nil, err
			}
			if err := store.AddItem(raw); err != nil {
				return nil, fmt.Errorf("item %v: %w", it["id"], err)
			}
		}
	}
	return stacserver.New(store, style.Options), nil
}
