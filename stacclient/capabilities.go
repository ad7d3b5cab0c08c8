package stacclient

import (
	"regexp"
	"slices"
	"strings"
)

// Capability is a feature of a STAC API, detected from conformance classes
// and landing-page links.
type Capability string

const (
	CapCore             Capability = "core"
	CapCollections      Capability = "collections"
	CapFeatures         Capability = "features"
	CapItemSearch       Capability = "item-search"
	CapFilter           Capability = "filter"
	CapCQL2JSON         Capability = "cql2-json"
	CapCQL2Text         Capability = "cql2-text"
	CapQuery            Capability = "query"
	CapSort             Capability = "sort"
	CapFields           Capability = "fields"
	CapContext          Capability = "context"
	CapFreeText         Capability = "free-text"
	CapCollectionSearch Capability = "collection-search"
	CapAggregation      Capability = "aggregation"
	CapTransaction      Capability = "transaction" // item writes (POST/PUT/PATCH/DELETE .../items)
	// CapCollectionTransaction is collection writes (POST /collections,
	// PUT/PATCH/DELETE /collections/{id}).
	CapCollectionTransaction Capability = "collection-transaction"
)

// AllCapabilities lists every capability in a stable order.
var AllCapabilities = []Capability{
	CapCore, CapCollections, CapFeatures, CapItemSearch, CapFilter, CapCQL2JSON, CapCQL2Text,
	CapQuery, CapSort, CapFields, CapContext, CapFreeText, CapCollectionSearch, CapAggregation,
	CapTransaction, CapCollectionTransaction,
}

// Evidence sources.
const (
	EvidenceConformance = "conformance"
	EvidenceLink        = "link"
)

// Evidence is why a capability is believed supported.
type Evidence struct {
	Source string `json:"source"` // "conformance" or "link"
	Value  string `json:"value"`  // the conformance URI or "rel=… href"
}

// Capabilities is what a catalog supports.
type Capabilities struct {
	Supported     map[Capability]Evidence `json:"supported"`
	SearchMethods []string                `json:"search_methods"` // from rel=search links; empty = GET
	ConformsTo    []string                `json:"conformsTo"`
}

// Has reports whether c is supported.
func (c *Capabilities) Has(capability Capability) bool {
	_, ok := c.Supported[capability]
	return ok
}

// Link relations that count as evidence of a capability.
const (
	RelSearch       = "search"
	RelData         = "data"
	RelQueryables   = "http://www.opengis.net/def/rel/ogc/1.0/queryables"
	RelAggregate    = "aggregate"
	RelAggregations = "aggregations"
)

// DetectCapabilities derives capabilities from conformance URIs and links,
// accepting v1.0.x, v1.1.x, beta and rc spellings. Conformance classes win
// over links: a link only adds a capability no class declared, and its
// evidence says so. rel=search links also give SearchMethods (a link
// without a method means GET).
func DetectCapabilities(conformsTo []string, links []Link) *Capabilities {
	caps := &Capabilities{
		Supported:     map[Capability]Evidence{},
		SearchMethods: []string{},
		ConformsTo:    append([]string{}, conformsTo...),
	}
	for _, uri := range conformsTo {
		uri = strings.TrimSpace(uri)
		for _, rule := range conformanceRules {
			if _, seen := caps.Supported[rule.capability]; !seen && rule.pattern.MatchString(uri) {
				caps.Supported[rule.capability] = Evidence{Source: EvidenceConformance, Value: uri}
			}
		}
	}
	for _, link := range links {
		capability, known := linkCapability(link.Rel)
		if !known {
			continue
		}
		if link.Rel == RelSearch {
			method := strings.ToUpper(strings.TrimSpace(link.Method))
			if method == "" {
				method = "GET"
			}
			if !slices.Contains(caps.SearchMethods, method) {
				caps.SearchMethods = append(caps.SearchMethods, method)
			}
		}
		if _, seen := caps.Supported[capability]; !seen {
			caps.Supported[capability] = Evidence{Source: EvidenceLink, Value: "rel=" + link.Rel + " " + link.Href}
		}
	}
	return caps
}

// linkCapability maps a landing-page link relation to the capability it is
// evidence of.
func linkCapability(rel string) (Capability, bool) {
	switch rel {
	case RelSearch:
		return CapItemSearch, true
	case RelData:
		return CapCollections, true
	case RelQueryables:
		// Queryables exist to write filters; used only when no Filter class
		// is advertised (DetectCapabilities lets conformance win).
		return CapFilter, true
	case RelAggregate, RelAggregations:
		return CapAggregation, true
	}
	return "", false
}

// conformanceRule recognises one spelling family of a conformance class.
type conformanceRule struct {
	capability Capability
	pattern    *regexp.Regexp
}

// stacSpecClass matches a STAC API class in every v1 spelling (v1.0.0,
// v1.1.0, v1.0.0-beta.4, v1.0.0-rc.2, …). The pattern is anchored so that
// ".../item-search#filter" is not read as ".../item-search".
func stacSpecClass(capability Capability, suffix string) conformanceRule {
	return conformanceRule{capability, regexp.MustCompile(`^https://api\.stacspec\.org/v1\.\d+\.[^/]*` + regexp.QuoteMeta(suffix) + `$`)}
}

// legacyStacClass matches the pre-v1.0.0-beta.1 spellings used by 0.9 and
// early beta servers (Astraea 2021: http://stacspec.org/spec/api/1.0.0-beta.1/req/fields).
func legacyStacClass(capability Capability, suffix string) conformanceRule {
	return conformanceRule{capability, regexp.MustCompile(`^https?://(?:api\.)?stacspec\.org/(?:spec/api/)?v?(?:0\.9\.\d+|1\.0\.0-beta\.\d+)(?:-[^/]*)?/` + suffix + `$`)}
}

// ogcClass matches an OGC class under http or https and any 1.x version.
func ogcClass(capability Capability, pathPattern string) conformanceRule {
	return conformanceRule{capability, regexp.MustCompile(`^https?://www\.opengis\.net/spec/` + pathPattern + `$`)}
}

var conformanceRules = []conformanceRule{
	stacSpecClass(CapCore, "/core"),
	stacSpecClass(CapCollections, "/collections"),
	stacSpecClass(CapFeatures, "/ogcapi-features"),
	stacSpecClass(CapItemSearch, "/item-search"),
	stacSpecClass(CapContext, "/item-search#context"),
	stacSpecClass(CapFields, "/item-search#fields"),
	stacSpecClass(CapSort, "/item-search#sort"),
	stacSpecClass(CapQuery, "/item-search#query"),
	stacSpecClass(CapFilter, "/item-search#filter"),
	stacSpecClass(CapCollectionSearch, "/collection-search"),
	stacSpecClass(CapFreeText, "/collection-search#free-text"),
	stacSpecClass(CapFreeText, "/item-search#free-text"),
	stacSpecClass(CapFreeText, "/ogcapi-features#free-text"),
	stacSpecClass(CapTransaction, "/ogcapi-features/extensions/transaction"),
	stacSpecClass(CapCollectionTransaction, "/collections/extensions/transaction"),

	// Extensions are versioned on their own (Earth Search: v0.3.0/aggregation).
	{CapAggregation, regexp.MustCompile(`^https://api\.stacspec\.org/v\d+\.\d+\.[^/]*/aggregation$`)},
	{CapAggregation, regexp.MustCompile(`^https://stac-api-extensions\.github\.io/aggregation/v\d+\.\d+\.[^/]*(?:/.*)?$`)},

	ogcClass(CapFeatures, `ogcapi-features-1/1\.\d+/conf/core`),
	ogcClass(CapCollections, `ogcapi_common-2/1\.\d+/(?:req|conf)/collections`),
	ogcClass(CapFilter, `ogcapi-features-3/1\.\d+/conf/(?:features-)?filter`),
	ogcClass(CapCQL2JSON, `cql2/1\.\d+/conf/cql2-json`),
	ogcClass(CapCQL2Text, `cql2/1\.\d+/conf/cql2-text`),
	ogcClass(CapTransaction, `ogcapi-features-4/1\.\d+/conf/(?:create-replace-delete|update|features)`),

	legacyStacClass(CapCore, `core`),
	legacyStacClass(CapItemSearch, `(?:req/stac-search|item-search)`),
	legacyStacClass(CapCollections, `(?:req/)?collections`),
	legacyStacClass(CapFeatures, `(?:req/)?ogcapi-features`),
	legacyStacClass(CapContext, `(?:req/context|item-search#context)`),
	legacyStacClass(CapFields, `(?:req/fields|item-search#fields)`),
	legacyStacClass(CapSort, `(?:req/sort|item-search#sort)`),
	legacyStacClass(CapQuery, `(?:req/query|item-search#query)`),
	legacyStacClass(CapFilter, `(?:req/filter|item-search#filter)`),
}

// versionSegment finds the version part of a conformance URI: "v1.0.0-rc.2"
// under api.stacspec.org, "1.0" in OGC URIs, "1.0.0-beta.1" in legacy ones.
var versionSegment = regexp.MustCompile(`/v?(\d+)\.\d+(?:\.[^/]*)?/`)

// normalizeConformanceURI reduces a URI to what must match for two classes
// to be the same: scheme dropped (http and https are both published) and the
// version segment reduced to its major version, so v1.0.0, v1.1.0 and
// v1.0.0-rc.2 agree while v1 and v2 do not.
func normalizeConformanceURI(uri string) string {
	uri = strings.TrimSpace(uri)
	uri = strings.TrimPrefix(strings.TrimPrefix(uri, "https://"), "http://")
	return versionSegment.ReplaceAllString(uri, "/v$1/")
}

// ConformsTo reports whether the list satisfies uri with version-tolerant
// matching (https://api.stacspec.org/v1.0.0/core matches v1.1.0, v1.0.0-rc.2…).
func ConformsTo(conformsTo []string, uri string) bool {
	want := normalizeConformanceURI(uri)
	if want == "" {
		return false
	}
	for _, candidate := range conformsTo {
		if normalizeConformanceURI(candidate) == want {
			return true
		}
	}
	return false
}
