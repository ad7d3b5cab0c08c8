package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/cql2"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// filterCheck catches a catalog that ignored datetime, query or filter: it
// checks each returned item against the simple conditions of the search
// (stacserver.Violations decides only what is certain), drops the items
// that plainly contradict them, and says so. A catalog that does not
// support the query extension, say, answers as if it had not been sent,
// and a model would otherwise take 60 % cloud cover for "lt 20".
type filterCheck struct {
	datetime string
	query    map[string]any
	filter   json.RawMessage // CQL2-JSON (a text filter is checked in its parsed JSON form)

	checked, dropped int
	byCondition      map[string]*droppedFor
	order            []string
}

// droppedFor is what one ignored condition cost.
type droppedFor struct {
	param, condition, example string
	count                     int
}

// newFilterCheck checks the conditions of p (the search as given, or as a
// cursor carries it); nil when there are none.
func newFilterCheck(p stacclient.SearchParams) *filterCheck {
	c := &filterCheck{datetime: p.Datetime, query: p.Query, byCondition: map[string]*droppedFor{}}
	c.filter = filterAsJSON(p.Filter, p.FilterLang)
	if c.datetime == "" && len(c.query) == 0 && len(c.filter) == 0 {
		return nil
	}
	return c
}

// drops reports whether it plainly contradicts the search, recording why.
func (c *filterCheck) drops(it *stacclient.Item) bool {
	if c == nil {
		return false
	}
	raw, err := json.Marshal(it)
	if err != nil {
		return false
	}
	c.checked++
	violations := stacserver.Violations(raw, c.datetime, c.query, c.filter)
	if len(violations) == 0 {
		return false
	}
	c.dropped++
	for _, v := range violations {
		d := c.byCondition[v.Condition]
		if d == nil {
			d = &droppedFor{param: v.Param, condition: v.Condition,
				example: fmt.Sprintf("item %s has %s = %s", it.ID, v.Property, trimText(fmt.Sprint(v.Value), 40))}
			c.byCondition[v.Condition] = d
			c.order = append(c.order, v.Condition)
		}
		d.count++
	}
	return true
}

// warnings says plainly what the catalog ignored and what was done.
func (c *filterCheck) warnings() []string {
	if c == nil || c.dropped == 0 {
		return nil
	}
	var parts []string
	for _, k := range c.order {
		d := c.byCondition[k]
		parts = append(parts, fmt.Sprintf("%s (%s) failed by %d (e.g. %s)", d.param, d.condition, d.count, d.example))
	}
	return []string{fmt.Sprintf("the catalog ignored part of this search: %d of %d returned item(s) contradict it: %s. "+
		"They were removed here, so every item in this result satisfies those conditions (pages continued with the cursor are checked the same way), "+
		"but the catalog's matched count is not filtered, and a page may hold fewer items than asked. "+
		"get_capabilities shows what the catalog supports (e.g. filter instead of query).",
		c.dropped, c.checked, strings.Join(parts, "; "))}
}

// filterAsJSON is the search's filter in CQL2-JSON form: CQL2 text is
// parsed (package cql2); nil when there is none or it does not parse (the
// catalog answers a filter it cannot read with an error of its own).
func filterAsJSON(filter json.RawMessage, lang string) json.RawMessage {
	if lang != stacclient.FilterLangCQL2Text {
		return filter
	}
	var text string
	if json.Unmarshal(filter, &text) != nil {
		return nil
	}
	expr, err := cql2.ParseText(text)
	if err != nil {
		return nil
	}
	raw, err := json.Marshal(expr)
	if err != nil {
		return nil
	}
	return raw
}
