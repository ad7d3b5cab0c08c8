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
	CatalogArg
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
}

// GetAggregations is the get_aggregations tool.
func GetAggregations() Tool {
	return define(&mcp.Tool{
		Name:  "get_aggregations",
		Title: "Aggregations",
		Description: "Count or bucket a search's matches without listing them (aggregation extension; supported is false " +
			"without it).\n" +
			`Example: {"collections": ["sentinel-2-l2a"], "datetime": "2024", "aggregations": ["total_count", "datetime_frequency"]}`,
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
	out := GetAggregationsOut{Available: []AggregationDef{}, Results: []AggregationValue{}, Notes: []string{}}
	client := c.Catalog.Client
	caps, err := client.Capabilities(ctx)
	if err != nil {
		return fail(err)
	}
	if !caps.Has(stacclient.CapAggregation) {
		out.Reason = "the catalog declares no aggregation conformance class and no aggregate link; use search_items and read matched instead"
		return out, "Aggregations are not supported: " + out.Reason, nil
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
		return out, aggregationsText(out), nil
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
	return out, aggregationsText(out), nil
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
	var b strings.Builder
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
