package tools

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

// Completion of collection ids, for the prompt arguments and resource
// template variables that name a collection. Ids come from the default
// catalog's /collections, fetched through the reliability layer, cached
// briefly so typing does not cost a request per keystroke.
const (
	completionCacheTTL  = time.Minute
	completionMaxValues = 100 // the protocol's cap on values per answer
	completionMaxPages  = 5   // pages of /collections read for the id list
)

// collectionIDCache holds the default catalog's collection ids (one per
// Deps, so one per process in production).
type collectionIDCache struct {
	mu      sync.Mutex
	ids     []string
	fetched time.Time
}

// completionHandler answers completion/complete for collection-id
// arguments; any other argument gets an empty answer (not an error, so a
// client probing every argument is not shown failures).
func completionHandler(d *Deps) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
		p := req.Params
		if p != nil && p.Ref != nil && completesPlace(p.Ref, p.Argument.Name) {
			names := places.Complete(p.Argument.Value, completionMaxValues)
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: append([]string{}, names...)}}, nil
		}
		if p == nil || p.Ref == nil || !completesCollection(p.Ref, p.Argument.Name) {
			return empty, nil
		}
		ids, err := collectionIDs(ctx, d)
		if err != nil {
			return nil, renderError("completion:collection_id", err)
		}
		prefix := strings.ToLower(p.Argument.Value)
		var matches []string
		for _, id := range ids {
			if strings.HasPrefix(strings.ToLower(id), prefix) {
				matches = append(matches, id)
			}
		}
		res := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}, Total: len(matches)}}
		if len(matches) > completionMaxValues {
			res.Completion.HasMore = true
			matches = matches[:completionMaxValues]
		}
		res.Completion.Values = append(res.Completion.Values, matches...)
		return res, nil
	}
}

// completesCollection reports whether ref's argument names a collection:
// a prompt's collection argument or the {id} of a collection template.
func completesCollection(ref *mcp.CompleteReference, arg string) bool {
	switch ref.Type {
	case "ref/prompt":
		return arg == "collection" || arg == "collection_id"
	case "ref/resource":
		return arg == "id" && (ref.URI == ResourceCollectionTmpl || ref.URI == ResourceQueryablesTmpl)
	}
	return false
}

// completesPlace reports whether ref's argument names an area (a prompt's
// area or bbox) or a place (the {name} of stac://places/{name}): their
// values complete to place names of the embedded gazetteer, offline.
func completesPlace(ref *mcp.CompleteReference, arg string) bool {
	switch ref.Type {
	case "ref/prompt":
		return arg == "area" || arg == "bbox"
	case "ref/resource":
		return arg == "name" && ref.URI == ResourcePlaceTmpl
	}
	return false
}

// collectionIDs returns the default catalog's collection ids, sorted,
// from the cache when it is fresh.
func collectionIDs(ctx context.Context, d *Deps) ([]string, error) {
	cache := &d.collectionIDs
	cache.mu.Lock()
	defer cache.mu.Unlock() // one fetch at a time; others wait for its answer
	if cache.ids != nil && time.Since(cache.fetched) < completionCacheTTL {
		return cache.ids, nil
	}
	const name = "completion:collection_id"
	cat, err := d.Catalogs.Resolve(ctx, "")
	if err != nil {
		return nil, err
	}
	ids := []string{}
	_, err = d.Layer.Run(ctx, name, cat.Host, func(ctx context.Context) (err error) {
		defer recoverAs(d.Logger, name, &err)
		for page, err := range cat.Client.CollectionPages(ctx, stacclient.CollectionQuery{Limit: maxCollectionsLimit},
			stacclient.SearchLimits{MaxPages: completionMaxPages}) {
			if err != nil {
				return err
			}
			for _, c := range page.Collections {
				ids = append(ids, c.ID)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err // not cached: the next keystroke asks again
	}
	slices.Sort(ids)
	cache.ids, cache.fetched = slices.Compact(ids), time.Now()
	return cache.ids, nil
}
