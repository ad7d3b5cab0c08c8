package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// GetCapabilitiesIn takes only the catalog.
type GetCapabilitiesIn struct {
	CatalogArg
}

// CapabilityInfo is one capability with its evidence and its consequence.
type CapabilityInfo struct {
	Name           string `json:"name" jsonschema:"capability name, e.g. item-search, filter, sort"`
	Supported      bool   `json:"supported"`
	EvidenceSource string `json:"evidence_source,omitempty" jsonschema:"conformance or link"`
	Evidence       string `json:"evidence,omitempty" jsonschema:"the conformance URI or link that shows support"`
	Meaning        string `json:"meaning" jsonschema:"what this means for the other tools' parameters"`
}

// GetCapabilitiesOut is every known capability, supported or not.
type GetCapabilitiesOut struct {
	Capabilities  []CapabilityInfo `json:"capabilities"`
	Supported     []string         `json:"supported" jsonschema:"names of the supported capabilities"`
	SearchMethods []string         `json:"search_methods" jsonschema:"HTTP methods the rel=search link allows (GET when it names none)"`
}

// capabilityMeaning says, per capability, what support or its absence means
// for the tools' parameters: [0] when supported, [1] when not.
var capabilityMeaning = map[stacclient.Capability][2]string{
	stacclient.CapCore:        {"the landing page follows STAC API core", "not a STAC API core landing page: tools may fail; check catalog_url"},
	stacclient.CapCollections: {"search_collections and get_collection work", "no /collections: search_collections and get_collection may fail"},
	stacclient.CapFeatures:    {"get_item reads /collections/{id}/items/{id} directly", "get_item falls back to a search by ids"},
	stacclient.CapItemSearch: {"search_items, estimate_data_size and get_aggregations can search with collections, ids, bbox, intersects, datetime, limit",
		"no /search: search_items and estimate_data_size will fail"},
	stacclient.CapFilter:   {"search_items accepts filter (CQL2); see get_queryables for property names", "filter is not supported: it would be ignored or rejected; narrow with collections, bbox, datetime (or query, if supported)"},
	stacclient.CapCQL2JSON: {"filter may be a cql2-json object", "cql2-json filters are not declared: search_items sends a cql2-json filter as cql2-text when cql2-text is declared"},
	stacclient.CapCQL2Text: {"filter may be cql2-text such as \"eo:cloud_cover < 10\"", "cql2-text filters are not declared: search_items sends a cql2-text filter as cql2-json when cql2-json is declared"},
	stacclient.CapQuery:    {"search_items accepts query, e.g. {\"eo:cloud_cover\":{\"lt\":10}}", "query is not supported: use filter if supported, else filter the results yourself"},
	stacclient.CapSort:     {"search_items accepts sortby, e.g. \"-properties.datetime\" for newest first", "sortby is not supported: results come in the catalog's own order"},
	stacclient.CapFields:   {"search_items accepts fields to include/exclude members", "fields is not supported: items come complete (detail=summary still keeps output small)"},
	stacclient.CapContext:  {"searches report a matched count", "matched counts may be missing from search_items"},
	stacclient.CapFreeText: {"search_collections accepts q (free text) on the server", "q is matched client-side by search_collections against id, title, description and keywords"},
	stacclient.CapCollectionSearch: {"search_collections filters q, bbox and datetime on the server",
		"search_collections filters q, bbox and datetime client-side over the listed collections (and says so)"},
	stacclient.CapAggregation: {"get_aggregations can list and run aggregations (/aggregate)", "get_aggregations answers supported:false"},
	stacclient.CapTransaction: {"the catalog accepts item writes: create_item, update_item and delete_item work when this server runs with --allow-writes",
		"no item writes: create_item, update_item and delete_item refuse this catalog"},
	stacclient.CapCollectionTransaction: {"the catalog accepts collection writes: create_collection and update_collection work when this server runs with --allow-writes",
		"no collection writes: create_collection and update_collection refuse this catalog"},
}

// GetCapabilities is the get_capabilities tool.
func GetCapabilities() Tool {
	return define(&mcp.Tool{
		Name:  "get_capabilities",
		Title: "Catalog capabilities",
		Description: "What the catalog supports (search, filter, query, sort, fields, free text, collection search, aggregation), " +
			"with evidence and the effect on tools' arguments.\n" +
			`Example: {}`,
		Annotations: readOnlyAnnotations("Catalog capabilities"),
	}, true, getCapabilities)
}

func getCapabilities(ctx context.Context, c *Call, in GetCapabilitiesIn) (GetCapabilitiesOut, string, error) {
	caps, err := c.Catalog.Client.Capabilities(ctx)
	if err != nil {
		return GetCapabilitiesOut{}, "", err
	}
	out := GetCapabilitiesOut{Capabilities: []CapabilityInfo{}, Supported: []string{}, SearchMethods: nonNilStrings(caps.SearchMethods)}
	if len(out.SearchMethods) == 0 && caps.Has(stacclient.CapItemSearch) {
		out.SearchMethods = []string{"GET"}
	}
	var yes, no []string
	for _, capability := range stacclient.AllCapabilities {
		ev, ok := caps.Supported[capability]
		meaning := capabilityMeaning[capability]
		info := CapabilityInfo{Name: string(capability), Supported: ok, Meaning: meaning[1]}
		if ok {
			info.EvidenceSource, info.Evidence, info.Meaning = ev.Source, ev.Value, meaning[0]
			out.Supported = append(out.Supported, string(capability))
			yes = append(yes, fmt.Sprintf("- %s: %s [%s: %s]", capability, meaning[0], ev.Source, ev.Value))
		} else {
			no = append(no, fmt.Sprintf("- %s: %s", capability, meaning[1]))
		}
		out.Capabilities = append(out.Capabilities, info)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Supported (%d):\n%s\n", len(yes), strings.Join(yes, "\n"))
	fmt.Fprintf(&b, "Not supported (%d):\n%s", len(no), strings.Join(no, "\n"))
	if len(out.SearchMethods) > 0 {
		fmt.Fprintf(&b, "\nSearch methods: %s", strings.Join(out.SearchMethods, ", "))
	}
	return out, b.String(), nil
}

// searchSupportWarnings checks a search against the catalog's capabilities
// before it is sent, for search_items, estimate_data_size and the map
// tools. The landing page and the conformance classes are fetched side by
// side; the search needs the landing page to find its endpoint, so when it
// cannot be had the call fails now, instead of the search fetching it a
// second time only to meet the same failure. A failed capability check
// otherwise (e.g. /conformance) is a warning: the search is sent
// unchecked. A filter in the CQL2 encoding the catalog does not declare,
// when it declares the other, is converted in *p, and notes say so.
func searchSupportWarnings(ctx context.Context, tool string, client *stacclient.Client, p *stacclient.SearchParams) (warnings, notes []string, err error) {
	caps, err := client.Capabilities(ctx)
	if errors.As(err, new(*stacclient.LandingPageError)) {
		return nil, nil, err
	}
	if err != nil {
		return []string{"could not check the catalog's capabilities (" + renderError(tool, err).Error() + "); parameters were sent unchecked"}, nil, nil
	}
	converted, note, convErr := p.ConvertFilterFor(caps)
	switch {
	case convErr != nil:
		warnings = append(warnings, fmt.Sprintf("the catalog declares only the other CQL2 encoding than this filter's, and the filter could not be converted (%v): it was sent as given", convErr))
	case note != "":
		*p = converted
		notes = append(notes, note)
	}
	return append(warnings, unsupportedWarnings(caps, *p)...), notes, nil
}

// unsupportedWarnings names the search parameters the catalog does not
// declare. The request is still sent (as pystac-client does): many catalogs
// support more than they declare, and the catalog's own answer is the truth.
func unsupportedWarnings(caps *stacclient.Capabilities, p stacclient.SearchParams) []string {
	warnings := []string{}
	if caps == nil {
		return warnings
	}
	check := func(used bool, capability stacclient.Capability, param string) {
		if used && !caps.Has(capability) {
			warnings = append(warnings, fmt.Sprintf("%s was sent, but the catalog does not declare the %s capability: it may be ignored (results not narrowed) or rejected. %s",
				param, capability, capabilityMeaning[capability][1]))
		}
	}
	check(true, stacclient.CapItemSearch, "the search")
	check(p.Query != nil, stacclient.CapQuery, "query")
	check(p.Filter != nil, stacclient.CapFilter, "filter")
	if p.Filter != nil && caps.Has(stacclient.CapFilter) {
		check(p.FilterLang == stacclient.FilterLangCQL2JSON, stacclient.CapCQL2JSON, "a cql2-json filter")
		check(p.FilterLang == stacclient.FilterLangCQL2Text, stacclient.CapCQL2Text, "a cql2-text filter")
	}
	check(len(p.SortBy) > 0, stacclient.CapSort, "sortby")
	check(p.Fields != nil, stacclient.CapFields, "fields")
	return warnings
}
