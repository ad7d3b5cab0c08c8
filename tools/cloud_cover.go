package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// cloudFilter is max_cloud_cover on its way to the catalog: a CQL2-JSON
// filter where the catalog takes one, else the query extension, else
// applied here to the items the search returned.
type cloudFilter struct {
	max        int
	clientSide bool
	note       string // with a %d for the items left out when clientSide
	dropped    int    // items left out here (clientSide), over every page
}

// newCloudFilter reads max_cloud_cover; nil when it was not given.
func newCloudFilter(arg IntArg) (*cloudFilter, error) {
	if !argGiven(arg) {
		return nil, nil
	}
	n, err := arg.Int("max_cloud_cover", 100, 0, 100, " (percent of eo:cloud_cover)")
	if err != nil {
		return nil, err
	}
	return &cloudFilter{max: n}, nil
}

// apply puts the bound into p in the form the catalog supports, or marks
// it for this server to apply.
func (cf *cloudFilter) apply(ctx context.Context, client *stacclient.Client, p *stacclient.SearchParams) error {
	caps, err := client.Capabilities(ctx)
	if err != nil {
		return err
	}
	cloud := map[string]any{"op": "<=", "args": []any{map[string]any{"property": "eo:cloud_cover"}, cf.max}}
	// A filter already in CQL2 text cannot be joined as JSON here.
	jsonFilter := len(p.Filter) == 0 || (p.FilterLang != stacclient.FilterLangCQL2Text && len(p.Filter) > 0 && p.Filter[0] == '{')
	switch {
	case caps.Has(stacclient.CapFilter) && caps.Has(stacclient.CapCQL2JSON) && jsonFilter:
		f := any(cloud)
		if len(p.Filter) > 0 {
			f = map[string]any{"op": "and", "args": []any{p.Filter, cloud}}
		}
		raw, err := json.Marshal(f)
		if err != nil {
			return err
		}
		p.Filter, p.FilterLang = raw, stacclient.FilterLangCQL2JSON
		cf.note = fmt.Sprintf(`max_cloud_cover %d was sent as the CQL2-JSON filter {"op":"<=","args":[{"property":"eo:cloud_cover"},%d]}`, cf.max, cf.max)
	case caps.Has(stacclient.CapQuery):
		cf.boundQuery(p)
		cf.note = fmt.Sprintf(`max_cloud_cover %d was sent as the query {"eo:cloud_cover":{"lte":%d}}`, cf.max, cf.max)
	default:
		cf.clientSide = true
		cf.note = fmt.Sprintf("the catalog takes neither a CQL2-JSON filter nor query, so max_cloud_cover %d was applied here to the items "+
			"the search returned (max_items counts them before that): %%d over %d%% or without eo:cloud_cover were left out", cf.max, cf.max)
	}
	return nil
}

// applyFederated puts the bound into p as the query every catalog of a
// search over several is sent (each one's outcome says when it does not
// declare query; the items it returns over the bound are then removed
// here, with the search's other conditions).
func (cf *cloudFilter) applyFederated(p *stacclient.SearchParams) {
	cf.boundQuery(p)
	cf.note = fmt.Sprintf(`max_cloud_cover %d was sent to each catalog as the query {"eo:cloud_cover":{"lte":%d}}; items over it from a catalog that ignored it are removed here`, cf.max, cf.max)
}

// keep filters items when the bound is applied here: an item without
// eo:cloud_cover is left out, as a catalog's comparison leaves it out.
func (cf *cloudFilter) keep(items []stacclient.Item) []stacclient.Item {
	if cf == nil || !cf.clientSide {
		return items
	}
	kept := items[:0:0]
	for _, it := range items {
		if c := propNumber(it.Properties, "eo:cloud_cover"); c != nil && *c <= float64(cf.max) {
			kept = append(kept, it)
		}
	}
	cf.dropped += len(items) - len(kept)
	return kept
}

// noteText says how the bound reached the catalog (or was applied here,
// with how many items it left out over every page kept so far).
func (cf *cloudFilter) noteText() string {
	if cf.clientSide {
		return fmt.Sprintf(cf.note, cf.dropped)
	}
	return cf.note
}

// boundQuery adds the bound to p's query extension object as
// eo:cloud_cover lte, keeping a lower bound already there (and a tighter
// one); p's own map is not changed.
func (cf *cloudFilter) boundQuery(p *stacclient.SearchParams) {
	q := maps.Clone(p.Query)
	if q == nil {
		q = map[string]any{}
	}
	ops, _ := q["eo:cloud_cover"].(map[string]any)
	ops = maps.Clone(ops)
	if ops == nil {
		ops = map[string]any{}
	}
	if lte, ok := ops["lte"].(float64); !ok || lte > float64(cf.max) {
		ops["lte"] = cf.max
	}
	q["eo:cloud_cover"] = ops
	p.Query = q
}
