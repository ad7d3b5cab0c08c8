package stacclient

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Convenience getters over the loosely typed parts of the models.

// Datetime is the item's properties.datetime, or its start_datetime when
// datetime is null (a range item). ok is false when neither parses as
// RFC 3339.
func (it *Item) Datetime() (t time.Time, ok bool) {
	for _, key := range []string{"datetime", "start_datetime"} {
		if s, found := it.PropertyString(key); found {
			if parsed, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return parsed, true
			}
		}
	}
	return time.Time{}, false
}

// PropertyString returns a string property (e.g. "platform").
func (it *Item) PropertyString(key string) (string, bool) {
	s, ok := it.Properties[key].(string)
	return s, ok
}

// PropertyFloat returns a numeric property (e.g. "eo:cloud_cover", "gsd").
// Numbers decoded as json.Number or float64 are accepted; strings are not,
// because a catalog that writes numbers as text is not STAC.
func (it *Item) PropertyFloat(key string) (float64, bool) {
	switch v := it.Properties[key].(type) {
	case json.Number:
		f, err := v.Float64()
		return f, err == nil
	case float64:
		return v, true
	case int:
		return float64(v), true
	}
	return 0, false
}

// Matched is numberMatched, else the context extension's matched; ok is
// false when the server did not say (never a guess).
func (ic *ItemCollection) Matched() (int, bool) {
	if ic.NumberMatched != nil {
		return *ic.NumberMatched, true
	}
	if ic.Context != nil && ic.Context.Matched != nil {
		return *ic.Context.Matched, true
	}
	return 0, false
}

// UnusableMatched is the text of a numberMatched (or context matched) the
// page sent that is not a count (negative, fractional, not a number), so
// Matched ignored it; "" when there is none or Matched has a usable count.
func (ic *ItemCollection) UnusableMatched() string {
	if _, ok := ic.Matched(); ok {
		return ""
	}
	if ic.NumberMatched == nil {
		if raw, ok := ic.Extra["numberMatched"]; ok && !isJSONNull(raw) {
			return "numberMatched " + string(bytes.TrimSpace(raw))
		}
	}
	if ic.Context != nil && ic.Context.Matched == nil {
		if raw, ok := ic.Context.Extra["matched"]; ok && !isJSONNull(raw) {
			return "context.matched " + string(bytes.TrimSpace(raw))
		}
	}
	return ""
}

// nextLink is the page's first rel=next link, or nil.
func (ic *ItemCollection) nextLink() *Link { return FindLink(ic.Links, "next") }

// FindLink returns the first link with the relation rel (compared
// case-insensitively), or nil.
func FindLink(links []Link, rel string) *Link {
	for i := range links {
		if strings.EqualFold(links[i].Rel, rel) {
			return &links[i]
		}
	}
	return nil
}

// FindLinks returns every link with the relation rel.
func FindLinks(links []Link, rel string) []Link {
	var found []Link
	for _, l := range links {
		if strings.EqualFold(l.Rel, rel) {
			found = append(found, l)
		}
	}
	return found
}

// LinkMethod is the link's HTTP method in upper case; a link without one
// means GET.
func (l *Link) LinkMethod() string {
	if l.Method == "" {
		return "GET"
	}
	return strings.ToUpper(l.Method)
}

// headerValues flattens a link's headers member, whose values are a string
// or a list of strings, into single header values (lists joined by ", ",
// which is how HTTP combines repeated headers).
func (l *Link) headerValues() map[string]string {
	if len(l.Headers) == 0 {
		return nil
	}
	out := make(map[string]string, len(l.Headers))
	for name, v := range l.Headers {
		switch val := v.(type) {
		case string:
			out[name] = val
		case []any:
			parts := make([]string, 0, len(val))
			for _, p := range val {
				switch ps := p.(type) {
				case string:
					parts = append(parts, ps)
				case json.Number:
					parts = append(parts, ps.String())
				}
			}
			out[name] = strings.Join(parts, ", ")
		case json.Number:
			out[name] = val.String()
		case float64:
			out[name] = strconv.FormatFloat(val, 'f', -1, 64)
		case bool:
			out[name] = strconv.FormatBool(val)
		}
	}
	return out
}
