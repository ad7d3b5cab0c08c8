package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// GetAggregationsIn lists the available aggregations and runs the named ones
// over a search.
// sortby, fields and limit are not among them: an aggregation neither
// orders, shapes nor pages items.
type GetAggregationsIn struct {
	CatalogsArg
	SearchFilter
	AreaArgs
	Aggregations StringList `json:"aggregations,omitempty" jsonschema:"names to compute; omit to list them"`
}

// AggregationDef is one aggregation the catalog offers.
type AggregationDef struct {
	Name     string `json:"name"`
	DataType string `json:"data_type,omitempty"`
}

// BucketInfo is one bucket of a frequency distribution.
type BucketInfo struct {
	Key       any `json:"key"`
	Frequency int `json:"frequency"`
	From      any `json:"from,omitempty"`
	To        any `json:"to,omitempty"`
}

// AggregationValue is one computed aggregation.
type AggregationValue struct {
	Name     string       `json:"name"`
	DataType string       `json:"data_type,omitempty"`
	Value    any          `json:"value,omitempty" jsonschema:"the value of a single-value aggregation (e.g. total_count)"`
	Buckets  []BucketInfo `json:"buckets" jsonschema:"buckets of a frequency distribution; empty for single values"`
	Overflow *int         `json:"overflow,omitempty" jsonschema:"items not counted in any bucket"`
}

// GetAggregationsOut says whether the catalog aggregates, what it offers,
// and the results of the requested aggregations.
type GetAggregationsOut struct {
	PlaceResult
	Supported bool               `json:"supported" jsonschema:"false when the catalog has no aggregation extension; reason says why"`
	Reason    string             `json:"reason,omitempty"`
	Available []AggregationDef   `json:"available" jsonschema:"aggregations the catalog offers"`
	Results   []AggregationValue `json:"results" jsonschema:"the requested aggregations computed over the search"`
	Matched   *int               `json:"matched,omitempty" jsonschema:"items matching the search, when the catalog reports it"`
	Notes     []string           `json:"notes"`
	// Several catalogs (adr/0035): each one's aggregations, never summed.
	ByCatalog []CatalogAggregations `json:"by_catalog,omitempty" jsonschema:"several catalogs: each one's aggregations, never summed (a scene several hold counts in each)"`
	Catalogs  []CatalogOutcome      `json:"catalogs,omitempty" jsonschema:"several catalogs: each one's outcome"`
}

// CatalogAggregations are one catalog's aggregations over the search.
type CatalogAggregations struct {
	Catalog   string             `json:"catalog"`
	Supported bool               `json:"supported"`
	Reason    string             `json:"reason,omitempty"`
	Available []AggregationDef   `json:"available"`
	Results   []AggregationValue `json:"results"`
	Matched   *int               `json:"matched,omitempty"`
	Notes     []string           `json:"notes"`
}

// GetAggregations is the get_aggregations tool.
func GetAggregations() Tool {
	return define(&mcp.Tool{
		Name:  "get_aggregations",
		Title: "Aggregations",
		Description: "Count or bucket a search's matches without listing them (aggregation extension; supported is false " +
			"without it).\n" +
			`Example: {"collections":["sentinel-2-l2a"],"datetime":"2024","aggregations":["total_count","datetime_frequency"]}`,
		Annotations: readOnlyAnnotations("Aggregations"),
	}, true, getAggregations)
}

func getAggregations(ctx context.Context, c *Call, in GetAggregationsIn) (GetAggregationsOut, string, error) {
	fail := failWith[GetAggregationsOut]()
	names, err := in.Aggregations.Strings("aggregations")
	if err != nil {
		return fail(err)
	}
	params, err := in.SearchFilter.params(in.AreaArgs)
	if err != nil {
		return fail(err)
	}
	if c.Federation != nil {
		return getAggregationsFederated(ctx, c, params, names)
	}
	out, err := aggregateOne(ctx, c, params, names)
	if err != nil {
		return fail(err)
	}
	return out, aggregationsText(out), nil
}

// aggregateOne is get_aggregations on one catalog (c.Catalog).
func aggregateOne(ctx context.Context, c *Call, params stacclient.SearchParams, names []string) (GetAggregationsOut, error) {
	fail := func(err error) (GetAggregationsOut, error) { return GetAggregationsOut{}, err }
	out := GetAggregationsOut{Available: []AggregationDef{}, Results: []AggregationValue{}, Notes: []string{}}
	client := c.Catalog.Client
	caps, err := client.Capabilities(ctx)
	if err != nil {
		return fail(err)
	}
	if !caps.Has(stacclient.CapAggregation) {
		out.Reason = "the catalog declares no aggregation conformance class and no aggregate link; use search_items and read matched instead"
		return out, nil
	}
	out.Supported = true

	scope := ""
	if len(params.Collections) == 1 {
		scope = params.Collections[0]
	}
	defs, err := client.Aggregations(ctx, scope)
	if scope != "" && (isKind(err, stacclient.KindNotFound) || isKind(err, stacclient.KindUnsupported)) {
		defs, err = client.Aggregations(ctx, "")
	}
	switch {
	case isKind(err, stacclient.KindNotFound) || isKind(err, stacclient.KindUnsupported):
		out.Notes = append(out.Notes, "the catalog does not list its aggregations (/aggregations): names cannot be checked before sending")
	case err != nil:
		return fail(err)
	default:
		for _, a := range defs.Aggregations {
			out.Available = append(out.Available, AggregationDef{Name: a.Name, DataType: a.DataType})
		}
	}

	if len(names) == 0 {
		out.Notes = append(out.Notes, "name aggregations (from available) to compute them over a search")
		return out, nil
	}
	if unknown := unknownAggregations(names, out.Available); len(unknown) > 0 {
		return fail(&stacclient.ParamError{Param: "aggregations", Got: strings.Join(names, ","),
			Reason: "not offered by this catalog: " + strings.Join(unknown, ", "), Accepted: "names from: " + availableNames(out.Available)})
	}
	res, err := client.Aggregate(ctx, params, names)
	if err != nil {
		return fail(err)
	}
	out.Matched = res.NumberMatched
	if out.Matched != nil && *out.Matched == 0 {
		out.Notes = append(out.Notes, emptySearchNotes(ctx, c, params, false)...)
	}
	for _, a := range res.Aggregations {
		v := AggregationValue{Name: a.Name, DataType: a.DataType, Value: rawToAny(a.Value), Buckets: []BucketInfo{}, Overflow: a.Overflow}
		for _, b := range a.Buckets {
			v.Buckets = append(v.Buckets, BucketInfo{Key: rawToAny(b.Key), Frequency: b.Frequency, From: rawToAny(b.From), To: rawToAny(b.To)})
		}
		out.Results = append(out.Results, v)
	}
	return out, nil
}

// unknownAggregations lists requested names the catalog does not offer
// (nothing when the catalog did not list what it offers).
func unknownAggregations(names []string, available []AggregationDef) []string {
	if len(available) == 0 {
		return nil
	}
	offered := map[string]bool{}
	for _, a := range available {
		offered[a.Name] = true
	}
	var unknown []string
	for _, n := range names {
		if !offered[n] {
			unknown = append(unknown, n)
		}
	}
	return unknown
}

func availableNames(available []AggregationDef) string {
	names := make([]string, len(available))
	for i, a := range available {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

func aggregationsText(out GetAggregationsOut) string {
	if !out.Supported && out.Reason != "" && len(out.ByCatalog) == 0 {
		return "Aggregations are not supported: " + out.Reason
	}
	var b strings.Builder
	for _, ca := range out.ByCatalog {
		fmt.Fprintf(&b, "%s: ", ca.Catalog)
		if !ca.Supported {
			fmt.Fprintf(&b, "no aggregations (%s)\n", orDash(ca.Reason))
			continue
		}
		b.WriteString(strings.ReplaceAll(aggregationsText(GetAggregationsOut{Supported: true, Available: ca.Available, Results: ca.Results,
			Matched: ca.Matched, Notes: ca.Notes}), "\n", "\n  ") + "\n")
	}
	if len(out.ByCatalog) > 0 {
		b.WriteString(catalogsText(out.Catalogs) + "\n")
		writeLines(&b, "Note: ", out.Notes)
		return strings.TrimRight(b.String(), "\n")
	}
	names := make([]string, len(out.Available))
	for i, a := range out.Available {
		names[i] = a.Name
		if a.DataType != "" {
			names[i] += " (" + a.DataType + ")"
		}
	}
	fmt.Fprintf(&b, "Available aggregations (%d): %s\n", len(out.Available), strings.Join(names, ", "))
	if out.Matched != nil {
		fmt.Fprintf(&b, "%d items matched the search.\n", *out.Matched)
	}
	for _, r := range out.Results {
		fmt.Fprintf(&b, "- %s", r.Name)
		if r.DataType != "" {
			fmt.Fprintf(&b, " (%s)", r.DataType)
		}
		b.WriteString(":")
		if r.Value != nil {
			b.WriteString(" " + valueText(r.Value))
		}
		for _, bk := range r.Buckets {
			fmt.Fprintf(&b, " %s=%d", valueText(bk.Key), bk.Frequency)
			if bk.From != nil || bk.To != nil {
				fmt.Fprintf(&b, " [%s..%s]", valueText(bk.From), valueText(bk.To))
			}
		}
		if r.Overflow != nil {
			fmt.Fprintf(&b, " (%d in no bucket)", *r.Overflow)
		}
		b.WriteString("\n")
	}
	writeLines(&b, "Note: ", out.Notes)
	return strings.TrimRight(b.String(), "\n")
}
