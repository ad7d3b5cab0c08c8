package writeflow

import (
	"context"
	"encoding/json"
	"reflect"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Document is the one document a write tool writes: an item or a
// collection, and how to read it as it is now (as a JSON object).
type Document struct {
	Kind string // "item" or "collection"
	Read func(ctx context.Context) (map[string]any, error)
}

// Lookups: has the write been applied? Run calls them with a Fresh
// context, so neither the reliability layer's cache nor a coalesced read
// can answer.

// Holds makes an Op's Applied: whether the document holds want (every
// member want has; links aside, since catalogs rewrite them); absent means
// false.
func (d Document) Holds(want map[string]any, patch bool) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		got, err := d.Read(ctx)
		if isKind(err, stacclient.KindNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		return holds(got, want, patch), nil
	}
}

// Gone is an Op's Applied for a delete: whether the document is absent.
func (d Document) Gone(ctx context.Context) (bool, error) {
	_, err := d.Read(ctx)
	if isKind(err, stacclient.KindNotFound) {
		return true, nil
	}
	return false, err
}

// holds reports whether got contains want: every member of want (links
// aside) is in got with an equal value, objects compared member by member,
// numbers as numbers and RFC 3339 times as instants (catalogs reformat
// both). For a merge patch, a null member must be absent from got.
func holds(got, want map[string]any, patch bool) bool {
	for k, w := range want {
		if k == "links" {
			continue
		}
		g, present := got[k]
		if w == nil && patch {
			if present {
				return false
			}
			continue
		}
		if !present || !sameValue(g, w, patch) {
			return false
		}
	}
	return true
}

func sameValue(got, want any, patch bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		return ok && holds(g, w, patch)
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(g[i], w[i], false) {
				return false
			}
		}
		return true
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		if g == w {
			return true
		}
		tg, errG := time.Parse(time.RFC3339Nano, g)
		tw, errW := time.Parse(time.RFC3339Nano, w)
		return errG == nil && errW == nil && tg.Equal(tw)
	case json.Number:
		f, err := w.Float64()
		return err == nil && sameValue(got, f, patch)
	case float64:
		switch g := got.(type) {
		case float64:
			return g == w
		case json.Number:
			f, err := g.Float64()
			return err == nil && f == w
		}
		return false
	}
	return reflect.DeepEqual(got, want)
}

// NormalizeDocument gives a document what the catalog manages itself when
// the model left it out: an empty links list (the catalog adds its own),
// and for an item its collection.
func NormalizeDocument(doc map[string]any, collectionID string) map[string]any {
	out := make(map[string]any, len(doc)+2)
	for k, v := range doc {
		out[k] = v
	}
	if _, ok := out["links"]; !ok {
		out["links"] = []any{}
	}
	if collectionID != "" {
		if _, ok := out["collection"]; !ok {
			out["collection"] = collectionID
		}
	}
	return out
}
