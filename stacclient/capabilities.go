package stacclient

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
	CapTransaction      Capability = "transaction"
)

// AllCapabilities lists every capability in a stable order.
var AllCapabilities = []Capability{
	CapCore, CapCollections, CapFeatures, CapItemSearch, CapFilter, CapCQL2JSON, CapCQL2Text,
	CapQuery, CapSort, CapFields, CapContext, CapFreeText, CapCollectionSearch, CapAggregation,
	CapTransaction,
}

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

// DetectCapabilities derives capabilities from conformance URIs and links,
// accepting v1.0.x, v1.1.x, beta and rc spellings.
func DetectCapabilities(conformsTo []string, links []Link) *Capabilities { panic("unimplemented") }

// ConformsTo reports whether the list satisfies uri with version-tolerant
// matching (https://api.stacspec.org/v1.0.0/core matches v1.1.0, v1.0.0-rc.2…).
func ConformsTo(conformsTo []string, uri string) bool { panic("unimplemented") }
