package stacclient

import (
	"maps"
	"slices"
	"testing"
)

// Conformance lists copied from real responses recorded in pystac-client's
// test cassettes (stac-utils/pystac-client, Apache-2.0), as converted in
// shared/fixtures/real-stac; the file each came from is named above it.
var (
	// earth-search.aws.element84.com/0001-GET-v1-f63c21.json (GET /v1, 2025-07-31)
	earthSearchV1ConformsTo = []string{
		"https://api.stacspec.org/v1.0.0/core",
		"https://api.stacspec.org/v1.0.0/collections",
		"https://api.stacspec.org/v1.0.0/ogcapi-features",
		"https://api.stacspec.org/v1.0.0/item-search",
		"https://api.stacspec.org/v1.0.0/ogcapi-features#fields",
		"https://api.stacspec.org/v1.0.0/ogcapi-features#sort",
		"https://api.stacspec.org/v1.0.0/ogcapi-features#query",
		"https://api.stacspec.org/v1.0.0/item-search#fields",
		"https://api.stacspec.org/v1.0.0/item-search#sort",
		"https://api.stacspec.org/v1.0.0/item-search#query",
		"https://api.stacspec.org/v0.3.0/aggregation",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
	}
	earthSearchV1Links = []Link{
		{Rel: "conformance", Href: "https://earth-search.aws.element84.com/v1/conformance"},
		{Rel: "data", Href: "https://earth-search.aws.element84.com/v1/collections"},
		{Rel: "search", Method: "GET", Href: "https://earth-search.aws.element84.com/v1/search"},
		{Rel: "search", Method: "POST", Href: "https://earth-search.aws.element84.com/v1/search"},
		{Rel: "aggregate", Method: "GET", Href: "https://earth-search.aws.element84.com/v1/aggregate"},
		{Rel: "aggregations", Href: "https://earth-search.aws.element84.com/v1/aggregations"},
		{Rel: "http://www.opengis.net/def/rel/ogc/1.0/queryables", Href: "https://earth-search.aws.element84.com/v1/queryables"},
	}

	// eod-catalog-svc-prod.astraea.earth/0002-GET-conformance-592a4d.json (GET /conformance, 2021-02-28)
	astraeaConformance = []string{
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
		"http://www.opengis.net/spec/ogcapi_common-2/1.0/req/collections",
		"http://stacspec.org/spec/api/1.0.0-beta.1/core",
		"http://stacspec.org/spec/api/1.0.0-beta.1/req/stac-search",
		"http://stacspec.org/spec/api/1.0.0-beta.1/req/stac-response",
		"http://stacspec.org/spec/api/1.0.0-beta.1/req/fields",
		"http://stacspec.org/spec/api/1.0.0-beta.1/req/context",
		"http://stacspec.org/spec/api/1.0.0-beta.1/req/sort",
	}

	// stac.sage.uvt.ro/0001-GET-root-c76702.json (GET /, 2025-07-17)
	sageConformsTo = []string{
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
		"http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
		"http://www.opengis.net/spec/cql2/1.0/conf/cql2-text",
		"https://api.stacspec.org/v1.0.0/item-search#fields",
		"https://api.stacspec.org/v1.0.0/item-search#sort",
		"https://api.stacspec.org/v1.0.0/item-search",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
		"https://api.stacspec.org/v1.0.0/collections",
		"http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
		"https://api.stacspec.org/v1.0.0/core",
		"https://api.stacspec.org/v1.0.0-rc.2/item-search#filter",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
		"https://api.stacspec.org/v1.0.0/item-search#query",
		"https://api.stacspec.org/v1.0.0/ogcapi-features",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter",
	}

	// explorer.digitalearth.africa/0001-GET-stac-ccb5b0.json (GET /stac/, 2024-05-31)
	digitalEarthAfricaConformsTo = []string{
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson",
		"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30",
		"https://api.stacspec.org/v1.0.0-rc.1/core",
		"https://api.stacspec.org/v1.0.0-rc.1/item-search",
		"https://api.stacspec.org/v1.0.0-rc.1/ogcapi-features",
		"https://api.stacspec.org/v1.0.0-rc.1/item-search#query",
		"https://api.stacspec.org/v1.0.0-rc.1/item-search#fields",
		"https://api.stacspec.org/v1.0.0-rc.1/ogcapi-features#fields",
		"https://api.stacspec.org/v1.0.0-rc.1/item-search#sort",
		"https://api.stacspec.org/v1.0.0-rc.1/ogcapi-features#sort",
		"https://api.stacspec.org/v1.0.0-rc.1/item-search#filter",
		"http://www.opengis.net/spec/cql2/1.0/conf/cql2-json",
		"http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2",
		"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter",
		"https://api.stacspec.org/v1.0.0-rc.1/collections",
	}
	digitalEarthAfricaLinks = []Link{
		{Rel: "search", Href: "https://explorer.digitalearth.africa/stac/search"},
		{Rel: "http://www.opengis.net/def/rel/ogc/1.0/queryables", Href: "https://explorer.digitalearth.africa/stac/queryables"},
	}
)

// supportedSorted lists the detected capabilities in AllCapabilities order.
func supportedSorted(c *Capabilities) []Capability {
	var out []Capability
	for _, capability := range AllCapabilities {
		if c.Has(capability) {
			out = append(out, capability)
		}
	}
	return out
}

func TestCapabilitiesRealCatalogs(t *testing.T) {
	tests := []struct {
		name        string
		conformsTo  []string
		links       []Link
		want        []Capability
		wantMethods []string
		evidence    map[Capability]Evidence
	}{
		{
			name: "Earth Search v1", conformsTo: earthSearchV1ConformsTo, links: earthSearchV1Links,
			want:        []Capability{CapCore, CapCollections, CapFeatures, CapItemSearch, CapFilter, CapQuery, CapSort, CapFields, CapAggregation},
			wantMethods: []string{"GET", "POST"},
			evidence: map[Capability]Evidence{
				CapItemSearch:  {EvidenceConformance, "https://api.stacspec.org/v1.0.0/item-search"},
				CapAggregation: {EvidenceConformance, "https://api.stacspec.org/v0.3.0/aggregation"},
				// No Filter class is advertised: only the queryables link says so.
				CapFilter: {EvidenceLink, "rel=http://www.opengis.net/def/rel/ogc/1.0/queryables https://earth-search.aws.element84.com/v1/queryables"},
			},
		},
		{
			name: "Astraea 2021 legacy beta.1 URIs", conformsTo: astraeaConformance,
			want:        []Capability{CapCore, CapCollections, CapFeatures, CapItemSearch, CapSort, CapFields, CapContext},
			wantMethods: []string{},
			evidence: map[Capability]Evidence{
				CapItemSearch: {EvidenceConformance, "http://stacspec.org/spec/api/1.0.0-beta.1/req/stac-search"},
				CapFeatures:   {EvidenceConformance, "http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core"},
			},
		},
		{
			name: "SAGE with rc.2 filter", conformsTo: sageConformsTo,
			want:        []Capability{CapCore, CapCollections, CapFeatures, CapItemSearch, CapFilter, CapCQL2JSON, CapCQL2Text, CapQuery, CapSort, CapFields},
			wantMethods: []string{},
			evidence: map[Capability]Evidence{
				CapFilter: {EvidenceConformance, "http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter"},
			},
		},
		{
			name: "Digital Earth Africa rc.1", conformsTo: digitalEarthAfricaConformsTo, links: digitalEarthAfricaLinks,
			want:        []Capability{CapCore, CapCollections, CapFeatures, CapItemSearch, CapFilter, CapCQL2JSON, CapQuery, CapSort, CapFields},
			wantMethods: []string{"GET"},
			evidence: map[Capability]Evidence{
				CapItemSearch: {EvidenceConformance, "https://api.stacspec.org/v1.0.0-rc.1/item-search"},
				CapFilter:     {EvidenceConformance, "https://api.stacspec.org/v1.0.0-rc.1/item-search#filter"},
			},
		},
		{
			name: "Earth Search v0: no conformsTo, search link only",
			links: []Link{
				{Rel: "conformance", Href: "https://earth-search.aws.element84.com/v0/conformance"},
				{Rel: "search", Href: "https://earth-search.aws.element84.com/v0/search"},
			},
			want:        []Capability{CapItemSearch},
			wantMethods: []string{"GET"},
			evidence: map[Capability]Evidence{
				CapItemSearch: {EvidenceLink, "rel=search https://earth-search.aws.element84.com/v0/search"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			caps := DetectCapabilities(tt.conformsTo, tt.links)
			if got := supportedSorted(caps); !slices.Equal(got, tt.want) {
				t.Errorf("supported = %v, want %v", got, tt.want)
			}
			if !slices.Equal(caps.SearchMethods, tt.wantMethods) {
				t.Errorf("SearchMethods = %v, want %v", caps.SearchMethods, tt.wantMethods)
			}
			for capability, want := range tt.evidence {
				if got := caps.Supported[capability]; got != want {
					t.Errorf("evidence for %s = %+v, want %+v", capability, got, want)
				}
			}
			if !slices.Equal(caps.ConformsTo, tt.conformsTo) && len(tt.conformsTo) > 0 {
				t.Errorf("ConformsTo = %v, want the input list", caps.ConformsTo)
			}
		})
	}
}

func TestCapabilitiesSpellings(t *testing.T) {
	tests := []struct {
		uri  string
		want []Capability // exactly these, nothing else
	}{
		{"https://api.stacspec.org/v1.0.0/item-search", []Capability{CapItemSearch}},
		{"https://api.stacspec.org/v1.1.0/item-search", []Capability{CapItemSearch}},
		{"https://api.stacspec.org/v1.0.0-rc.2/item-search", []Capability{CapItemSearch}},
		{"https://api.stacspec.org/v1.0.0-beta.4/item-search", []Capability{CapItemSearch}},
		{"https://api.stacspec.org/v1.0.0-rc.2/item-search#filter", []Capability{CapFilter}},
		{"https://api.stacspec.org/v1.1.0/item-search#filter", []Capability{CapFilter}},
		{"https://api.stacspec.org/v1.0.0/item-search#context", []Capability{CapContext}},
		{"https://api.stacspec.org/v1.1.0/collection-search", []Capability{CapCollectionSearch}},
		{"https://api.stacspec.org/v1.0.0-rc.1/collection-search#free-text", []Capability{CapFreeText}},
		{"https://api.stacspec.org/v1.0.0-rc.1/item-search#free-text", []Capability{CapFreeText}},
		{"https://api.stacspec.org/v1.0.0-rc.1/ogcapi-features#free-text", []Capability{CapFreeText}},
		{"https://api.stacspec.org/v1.1.0/collection-search#sort", nil},
		{"https://api.stacspec.org/v1.0.0/ogcapi-features/extensions/transaction", []Capability{CapTransaction}},
		{"http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/create-replace-delete", []Capability{CapTransaction}},
		{"https://api.stacspec.org/v1.0.0/collections/extensions/transaction", []Capability{CapCollectionTransaction}},
		{"https://api.stacspec.org/v0.2.0/aggregation", []Capability{CapAggregation}},
		{"https://api.stacspec.org/v0.3.0/aggregation", []Capability{CapAggregation}},
		{"http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core", []Capability{CapFeatures}},
		{"http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter", []Capability{CapFilter}},
		{"http://www.opengis.net/spec/cql2/1.0/conf/cql2-json", []Capability{CapCQL2JSON}},
		{"http://www.opengis.net/spec/cql2/1.0/conf/cql2-text", []Capability{CapCQL2Text}},
		{"http://stacspec.org/spec/api/1.0.0-beta.1/req/stac-search", []Capability{CapItemSearch}},
		// Near misses that must not count.
		{"https://api.stacspec.org/v1.0.0/item-search#filterx", nil},
		{"https://api.stacspec.org/v1.0.0/item-search/extra", nil},
		{"https://api.stacspec.org/v2.0.0/item-search", nil},
		{"https://evil.example/https://api.stacspec.org/v1.0.0/core", nil},
		{"https://api.stacspec.org/v1.0.0/core ", []Capability{CapCore}}, // surrounding space trimmed
		{"http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2", nil},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(DetectCapabilities([]string{tt.uri}, nil).Supported))
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("DetectCapabilities(%q) = %v, want %v", tt.uri, got, want)
			}
		})
	}
}

func TestCapabilitiesFilterIsNotItemSearch(t *testing.T) {
	caps := DetectCapabilities([]string{"https://api.stacspec.org/v1.0.0-rc.2/item-search#filter"}, nil)
	if caps.Has(CapItemSearch) {
		t.Errorf("item-search#filter was taken for item-search: %+v", caps.Supported)
	}
	if !caps.Has(CapFilter) {
		t.Errorf("item-search#filter was not taken for filter: %+v", caps.Supported)
	}
}

func TestCapabilitiesLinkEvidence(t *testing.T) {
	caps := DetectCapabilities(nil, []Link{
		{Rel: "search", Method: "post", Href: "https://x/search"},
		{Rel: "search", Method: "POST", Href: "https://x/search"},
		{Rel: "data", Href: "https://x/collections"},
		{Rel: "aggregate", Href: "https://x/aggregate"},
		{Rel: "child", Href: "https://x/child"},
	})
	want := map[Capability]Evidence{
		CapItemSearch:  {EvidenceLink, "rel=search https://x/search"},
		CapCollections: {EvidenceLink, "rel=data https://x/collections"},
		CapAggregation: {EvidenceLink, "rel=aggregate https://x/aggregate"},
	}
	if !maps.Equal(caps.Supported, want) {
		t.Errorf("Supported = %v, want %v", caps.Supported, want)
	}
	if !slices.Equal(caps.SearchMethods, []string{"POST"}) {
		t.Errorf("SearchMethods = %v, want [POST] (upper-cased, deduplicated)", caps.SearchMethods)
	}
}

func TestCapabilitiesConformanceWinsOverLinks(t *testing.T) {
	caps := DetectCapabilities(
		[]string{"https://api.stacspec.org/v1.0.0/item-search"},
		[]Link{{Rel: "search", Href: "https://x/search"}},
	)
	if got := caps.Supported[CapItemSearch]; got.Source != EvidenceConformance {
		t.Errorf("item-search evidence = %+v, want the conformance class", got)
	}
}

func TestCapabilitiesConformsToVersionTolerant(t *testing.T) {
	tests := []struct {
		name string
		list []string
		uri  string
		want bool
	}{
		{"v1.1 satisfies v1.0.0", []string{"https://api.stacspec.org/v1.1.0/core"}, "https://api.stacspec.org/v1.0.0/core", true},
		{"rc.2 satisfies v1.0.0", []string{"https://api.stacspec.org/v1.0.0-rc.2/item-search#filter"}, "https://api.stacspec.org/v1.0.0/item-search#filter", true},
		{"beta satisfies v1.0.0", []string{"https://api.stacspec.org/v1.0.0-beta.1/item-search"}, "https://api.stacspec.org/v1.0.0/item-search", true},
		{"aggregation versions agree", earthSearchV1ConformsTo, "https://api.stacspec.org/v0.2.0/aggregation", true},
		{"OGC http vs https", sageConformsTo, "https://www.opengis.net/spec/cql2/1.0/conf/cql2-text", true},
		{"fragment must match", []string{"https://api.stacspec.org/v1.0.0/item-search"}, "https://api.stacspec.org/v1.0.0/item-search#filter", false},
		{"filter is not item search", []string{"https://api.stacspec.org/v1.0.0/item-search#filter"}, "https://api.stacspec.org/v1.0.0/item-search", false},
		{"major version must match", []string{"https://api.stacspec.org/v2.0.0/core"}, "https://api.stacspec.org/v1.0.0/core", false},
		{"absent class", earthSearchV1ConformsTo, "https://api.stacspec.org/v1.0.0/item-search#filter", false},
		{"empty list", nil, "https://api.stacspec.org/v1.0.0/core", false},
		{"empty uri", earthSearchV1ConformsTo, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ConformsTo(tt.list, tt.uri); got != tt.want {
				t.Errorf("ConformsTo(%v, %q) = %v, want %v", tt.list, tt.uri, got, tt.want)
			}
		})
	}
}
