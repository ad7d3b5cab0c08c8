package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stacmcp/stac-mcp/stacclient"
)

func TestSummarizeItem(t *testing.T) {
	t.Parallel()
	assets := map[string]stacclient.Asset{
		"thumbnail": {Href: "https://x/thumb.png", Type: "image/png", Roles: []string{"thumbnail"}},
		"metadata":  {Href: "https://x/meta.xml", Roles: []string{"metadata"}},
		"visual":    {Href: "https://x/visual.tif", Roles: []string{"visual"}},
		"red-jp2":   {Href: "s3://bucket/red.jp2", Roles: []string{"data"}},
	}
	for _, k := range []string{"b1", "b2", "b3", "b4", "b5", "b6", "b7"} {
		assets[k] = stacclient.Asset{Href: "https://x/" + k + ".tif", Type: "image/tiff", Roles: []string{"data"}}
	}
	it := &stacclient.Item{ID: "i1", Collection: "c1", BBox: []float64{1, 2, 3, 4}, Assets: assets,
		Properties: map[string]any{"start_datetime": "2024-01-01T00:00:00Z", "end_datetime": "2024-01-31T23:59:59Z",
			"eo:cloud_cover": json.Number("12.5"), "platform": "landsat-9", "gsd": 30.0}}
	s := summarizeItem(it)
	if s.Datetime != "2024-01-01T00:00:00Z/2024-01-31T23:59:59Z" || s.Platform != "landsat-9" || *s.CloudCover != 12.5 || *s.GSD != 30 {
		t.Errorf("summary = %+v", s)
	}
	var keys []string
	for _, a := range s.Assets {
		keys = append(keys, a.Key)
	}
	// Data assets over HTTP first (by name), then visual; s3 and metadata last.
	if want := []string{"b1", "b2", "b3", "b4", "b5", "b6", "b7", "visual"}; !slices.Equal(keys, want) {
		t.Errorf("detailed assets %v, want %v", keys, want)
	}
	if want := []string{"thumbnail", "metadata", "red-jp2"}; !slices.Equal(s.OtherAssetKeys, want) || s.AssetCount != 11 {
		t.Errorf("other asset keys %v (count %d), want %v of 11", s.OtherAssetKeys, s.AssetCount, want)
	}
	var types typeAbbreviations
	line := summaryText(s, &types)
	for _, want := range []string{"i1", "c1", "cloud 12.5%", "landsat-9", "gsd 30 m", "11 assets", "+ 3 more asset(s)"} {
		if !strings.Contains(line, want) {
			t.Errorf("item line %q lacks %q", line, want)
		}
	}
}

func TestSummaryOfABareItemHasNonNilArrays(t *testing.T) {
	t.Parallel()
	s := summarizeItem(&stacclient.Item{ID: "bare"})
	b, _ := json.Marshal(s)
	if strings.Contains(string(b), "null") {
		t.Errorf("bare summary has a null: %s", b)
	}
}

func TestKeyLinksKeepsActionableRelsOnce(t *testing.T) {
	t.Parallel()
	links := []stacclient.Link{
		{Rel: "child", Href: "c1"}, {Rel: "search", Href: "s", Method: "GET"}, {Rel: "search", Href: "s", Method: "POST"},
		{Rel: "self", Href: "a"}, {Rel: "self", Href: "a"}, {Rel: "item", Href: "i"},
	}
	got := keyLinks(links)
	if len(got) != 3 || got[0].Rel != "search" || got[2].Rel != "self" {
		t.Errorf("key links = %+v, want search GET, search POST, self", got)
	}
}

func TestHumanBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.00 KiB", 1536: "1.50 KiB", 5 << 30: "5.00 GiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
