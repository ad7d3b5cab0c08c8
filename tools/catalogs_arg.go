package tools

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// CatalogsArg is the catalog_url of the tools that search several catalogs
// at once (search_items, get_aggregations, map_items, check_coverage,
// estimate_data_size, search_collections, index_time_series, aoi_statistics,
// render_aoi; adr/0035): one reference as every tool takes, a list of
// them, or a group name (STAC_MCP_CATALOG_GROUPS) that stands for its
// members. A list may also
// come as a JSON string ("[\"a\",\"b\"]") or comma-separated names.
type CatalogsArg struct {
	// Its forms are explained once, in the server instructions.
	CatalogURL CatalogRefs `json:"catalog_url,omitempty"`
}

// CatalogRefs is catalog_url as given: a string or a list of strings.
type CatalogRefs json.RawMessage

func (a *CatalogRefs) UnmarshalJSON(b []byte) error { *a = keepRaw(b); return nil }
func (a CatalogRefs) MarshalJSON() ([]byte, error)  { return rawOrNull(a) }

// catalogRef is the one reference given, for the code every tool shares;
// a list gives "" here and is read by catalogRefs.
func (c CatalogsArg) catalogRef() string {
	var s string
	if json.Unmarshal(c.CatalogURL, &s) == nil {
		return s
	}
	return ""
}

// catalogRefs reads catalog_url: nil when absent, one reference, or the
// list. A string that is not one reference as a whole but a JSON array, or
// names separated by commas, is a list; a URL or path is never split (one
// with a comma stays whole).
func (c CatalogsArg) catalogRefs() ([]string, error) {
	raw := bytes.TrimSpace(c.CatalogURL)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	const accepted = `a catalog reference (URL, preset or configured name, "demo", path), a group name, or a list of them, e.g. ["earth-search","planetary-computer"]`
	bad := func(reason string) error {
		return &stacclient.ParamError{Param: "catalog_url", Got: trimText(string(raw), 200), Reason: reason, Accepted: accepted}
	}
	var list []string
	if raw[0] == '[' {
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, bad("not a list of strings")
		}
	} else {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, bad("not a string or a list of strings")
		}
		s = strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(s, "["):
			if err := json.Unmarshal([]byte(s), &list); err != nil {
				return nil, bad("a JSON list that does not parse as a list of strings")
			}
		case strings.Contains(s, ",") && !strings.Contains(s, "/") && !strings.Contains(s, `\`):
			list = strings.Split(s, ",")
		default:
			list = []string{s}
		}
	}
	out := make([]string, 0, len(list))
	for _, r := range list {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}
