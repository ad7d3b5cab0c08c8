package federation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

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
	if has, ok := collectionsSeen.get(c, id); ok {
		return has, nil
	}
	_, err := c.Collection(ctx, id)
	var se *stacclient.Error
	switch {
	case err == nil:
		collectionsSeen.put(c, id, true)
		return true, nil
	case errors.As(err, &se) && se.Kind == stacclient.KindNotFound:
		collectionsSeen.put(c, id, false)
		return false, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	}
	return true, nil
}

// collectionsSeen remembers, for a while, whether a catalog has a
// collection: a search of several catalogs checks the ids the table does
// not vouch for, and that check would otherwise be a request per member
// and call, before its search, on the critical path.
var collectionsSeen = &seenCollections{ttl: 10 * time.Minute, max: 1024}

// seenCollections is a bounded map (client, id) → has, each entry kept
// ttl; past max entries the oldest goes.
type seenCollections struct {
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[seenKey]seenEntry
	order   []seenKey // insertion order, for eviction
}

type seenKey struct {
	client *stacclient.Client
	id     string
}

type seenEntry struct {
	has bool
	at  time.Time
}

func (s *seenCollections) get(c *stacclient.Client, id string) (has, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[seenKey{c, id}]
	if !ok || time.Since(e.at) > s.ttl {
		return false, false
	}
	return e.has, true
}

func (s *seenCollections) put(c *stacclient.Client, id string, has bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[seenKey]seenEntry{}
	}
	k := seenKey{c, id}
	if _, ok := s.entries[k]; !ok {
		s.order = append(s.order, k)
	}
	s.entries[k] = seenEntry{has: has, at: time.Now()}
	for len(s.order) > s.max {
		delete(s.entries, s.order[0])
		s.order = s.order[1:]
	}
}
