package federation

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Mapping is a member's collection ids for the ones a search asked for.
type Mapping struct {
	IDs     []string // to send, in the order asked
	Notes   []string // an asked id searched under another id, and why
	Missing []string // asked ids the member holds under no id
}

// MapCollections finds, for each asked collection, the member's id for
// the same product: the asked id when the table lists it for the member's
// preset (no request), else the table's ids for that preset, else
// (another catalog, or a preset the table does not list for the family)
// the asked id and then the family's ids elsewhere, each checked against
// the catalog's own collection (GET /collections/{id}); the first it has
// is used. A lookup that fails for another reason than "not found" counts
// as present: the search itself will say what is wrong.
func MapCollections(ctx context.Context, m Member, asked []string) (Mapping, error) {
	var out Mapping
	for _, a := range asked {
		ids, known := Candidates(m.Preset, a)
		found := ""
		if known {
			found = ids[0]
		} else {
			for _, id := range ids {
				ok, err := hasCollection(ctx, m.Client, id)
				if err != nil {
					return Mapping{}, err
				}
				if ok {
					found = id
					break
				}
			}
		}
		if found == "" {
			out.Missing = append(out.Missing, a)
			continue
		}
		if !slices.Contains(out.IDs, found) {
			out.IDs = append(out.IDs, found)
		}
		if found != a {
			what := FamilyTitle(FamilyID(m.Preset, found))
			out.Notes = append(out.Notes, fmt.Sprintf("%s: searched collection %s for %s (the same product, %s, under its id there)", m.Name, found, a, what))
		}
	}
	return out, nil
}

func hasCollection(ctx context.Context, c *stacclient.Client, id string) (bool, error) {
	_, err := c.Collection(ctx, id)
	var se *stacclient.Error
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &se) && se.Kind == stacclient.KindNotFound:
		return false, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	}
	return true, nil
}
