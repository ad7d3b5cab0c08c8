package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/places"
)

// Resources expose the default catalog's documents for clients that attach
// context by URI rather than by calling a tool. They are read through the
// same catalog resolution and reliability layer as tools (deadline,
// retries, breaker), under the names "resource:<what>" in logs and metrics.
const (
	ResourceCatalog          = "stac://catalog"
	ResourceConformance      = "stac://catalog/conformance"
	ResourceCollections      = "stac://collections"
	ResourceCollectionTmpl   = "stac://collections/{id}"
	ResourceQueryablesTmpl   = "stac://collections/{id}/queryables"
	ResourcePlaceTmpl        = "stac://places/{name}"
	placeURIPrefix           = "stac://places/"
	mimeGeoJSON              = "application/geo+json"
	collectionURIPrefix      = "stac://collections/"
	queryablesURISuffix      = "/queryables"
	mimeJSON                 = "application/json"
	mimeJSONSchema           = "application/schema+json"
	maxListedCollectionPages = 10
)

// registerResources adds the catalog resources and templates to s.
func registerResources(s *mcp.Server, d *Deps) {
	s.AddResource(&mcp.Resource{
		URI: ResourceCatalog, Name: "catalog", Title: "Catalog landing page", MIMEType: mimeJSON,
		Description: "The default catalog's landing page: id, title, description, conformance classes and links (what get_root summarises).",
	}, readResource(d, "resource:catalog", func(ctx context.Context, cat *Catalog, _ string) (any, error) {
		return cat.Client.Root(ctx)
	}))
	s.AddResource(&mcp.Resource{
		URI: ResourceConformance, Name: "conformance", Title: "Conformance classes", MIMEType: mimeJSON,
		Description: "The conformance class URIs the default catalog declares (which search features it supports).",
	}, readResource(d, "resource:conformance", func(ctx context.Context, cat *Catalog, _ string) (any, error) {
		classes, err := cat.Client.Conformance(ctx)
		if err != nil {
			return nil, err
		}
		return map[string]any{"conformsTo": classes}, nil
	}))
	s.AddResource(&mcp.Resource{
		URI: ResourceCollections, Name: "collections", Title: "Collections list", MIMEType: mimeJSON,
		Description: fmt.Sprintf("Every collection of the default catalog as id, title and description (up to %d pages; "+
			"the document says when the list was cut). Read stac://collections/{id} for one in full.", maxListedCollectionPages),
	}, readResource(d, "resource:collections", listCollectionsResource))
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: ResourceCollectionTmpl, Name: "collection", Title: "One collection", MIMEType: mimeJSON,
		Description: "One collection of the default catalog, complete (extent, summaries, item_assets, links), e.g. stac://collections/sentinel-2-l2a.",
	}, readResource(d, "resource:collection", func(ctx context.Context, cat *Catalog, uri string) (any, error) {
		id, err := collectionIDFromURI(uri, "")
		if err != nil {
			return nil, err
		}
		return cat.Client.Collection(ctx, id)
	}))
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: ResourceQueryablesTmpl, Name: "queryables", Title: "Queryable properties of a collection", MIMEType: mimeJSONSchema,
		Description: "The JSON Schema of properties a collection can be filtered on (CQL2 filter / query), e.g. stac://collections/sentinel-2-l2a/queryables.",
	}, readResource(d, "resource:queryables", func(ctx context.Context, cat *Catalog, uri string) (any, error) {
		id, err := collectionIDFromURI(uri, queryablesURISuffix)
		if err != nil {
			return nil, err
		}
		return cat.Client.Queryables(ctx, id)
	}))
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: ResourcePlaceTmpl, Name: "place", Title: "A place's area", MIMEType: mimeGeoJSON,
		Description: "The area a place name resolves to, as a GeoJSON Feature (outline, bbox, source, other places of the name), " +
			"offline, e.g. stac://places/Netherlands or stac://places/Paris%2C%20Texas: what an area argument naming it searches.",
	}, readPlaceResource)
}

// readPlaceResource answers stac://places/{name}: the place as a GeoJSON
// Feature whose properties are the place field tools report.
func readPlaceResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	name, ok := strings.CutPrefix(uri, placeURIPrefix)
	if ok {
		var err error
		if name, err = url.PathUnescape(name); err != nil {
			ok = false
		}
	}
	if !ok || strings.TrimSpace(name) == "" {
		return nil, renderError("resource:place", &stacclient.ParamError{Param: "uri", Got: uri, Reason: "not a place resource URI",
			Accepted: ResourcePlaceTmpl + ", with a place name such as Netherlands (percent-encoded)"})
	}
	m, err := places.Resolve(name)
	if err != nil {
		var nf *places.NotFoundError
		if errors.As(err, &nf) {
			data, _ := json.Marshal(map[string]any{"uri": uri, "did_you_mean": nf.Suggestions})
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Data: data, Message: "Resource not found: " + nf.Error()}
		}
		return nil, err
	}
	out, geometry, err := placeOut("name", m)
	if err != nil {
		return nil, err
	}
	feature := map[string]any{"type": "Feature", "bbox": out.BBox, "geometry": geometry, "properties": out}
	text, err := json.Marshal(feature)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeGeoJSON, Text: string(text)}}}, nil
}

// readResource adapts a fetch into a resource handler: resolve the default
// catalog, run inside the reliability layer, answer JSON with the
// resource's MIME type; a 404 upstream is the protocol's "resource not
// found", other failures are the same actionable messages tools give.
func readResource(d *Deps, name string, fetch func(ctx context.Context, cat *Catalog, uri string) (any, error)) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		cat, resolveErr := d.Catalogs.Resolve(ctx, "")
		if resolveErr != nil {
			// Through the layer anyway, so the failure is logged and counted.
			_, err := d.Layer.Run(ctx, name, "", func(context.Context) error { return resolveErr })
			return nil, renderError(name, err)
		}
		var doc any
		var suggestions []string // closest collection ids, when a collection was not found
		_, err := d.Layer.Run(ctx, name, cat.Host, func(ctx context.Context) (ferr error) {
			defer recoverAs(d.Logger, name, &ferr)
			doc, ferr = fetch(ctx, cat, uri)
			if id, ok := resourceCollectionID(uri); ok && isKind(ferr, stacclient.KindNotFound) {
				suggestions = suggestCollectionIDs(ctx, cat.Client, id)
			}
			return ferr
		})
		if isKind(err, stacclient.KindNotFound) {
			return nil, resourceNotFound(uri, suggestions)
		}
		if err != nil {
			return nil, renderError(name, err)
		}
		text, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: encoding %s: %w", name, uri, err)
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mimeTypeOf(uri), Text: string(text)}}}, nil
	}
}

// resourceNotFound is the protocol's "resource not found" error, with the
// URIs of the closest collections when there are some.
func resourceNotFound(uri string, suggestions []string) error {
	if _, isCollection := resourceCollectionID(uri); len(suggestions) == 0 && isCollection {
		// No close id: say where the ids are rather than nothing.
		data, _ := json.Marshal(map[string]any{"uri": uri, "see": ResourceCollections})
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Data: data,
			Message: "Resource not found: no collection has an id close to it; read " + ResourceCollections +
				" (or call search_collections) for the collection ids"}
	}
	if len(suggestions) == 0 {
		return mcp.ResourceNotFoundError(uri)
	}
	suffix := ""
	if strings.HasSuffix(uri, queryablesURISuffix) {
		suffix = queryablesURISuffix
	}
	uris := make([]string, len(suggestions))
	for i, id := range suggestions {
		uris[i] = collectionURIPrefix + id + suffix
	}
	data, _ := json.Marshal(map[string]any{"uri": uri, "did_you_mean": uris})
	// -32602 (invalid params): the MCP specification's code for a resource
	// that does not exist (SEP-2164), the one mcp.ResourceNotFoundError uses.
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Data: data,
		Message: "Resource not found: did you mean " + strings.Join(uris, " or ") + "?"}
}

// resourceCollectionID is the collection id of a collection or queryables
// resource URI.
func resourceCollectionID(uri string) (string, bool) {
	for _, suffix := range []string{queryablesURISuffix, ""} {
		if id, err := collectionIDFromURI(uri, suffix); err == nil {
			return id, true
		}
	}
	return "", false
}

func mimeTypeOf(uri string) string {
	if strings.HasSuffix(uri, queryablesURISuffix) {
		return mimeJSONSchema
	}
	return mimeJSON
}

// collectionIDFromURI takes the id out of stac://collections/{id}[suffix].
func collectionIDFromURI(uri, suffix string) (string, error) {
	id, ok := strings.CutPrefix(uri, collectionURIPrefix)
	if ok && suffix != "" {
		id, ok = strings.CutSuffix(id, suffix)
	}
	if !ok || id == "" || strings.Contains(id, "/") {
		want := ResourceCollectionTmpl
		if suffix != "" {
			want = ResourceQueryablesTmpl
		}
		return "", &stacclient.ParamError{Param: "uri", Got: uri, Reason: "not a collection resource URI",
			Accepted: want + ", with a collection id such as sentinel-2-l2a (list them at " + ResourceCollections + ")"}
	}
	return id, nil
}

// collectionEntry is one line of the collections list resource.
type collectionEntry struct {
	ID          string `json:"id"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

func listCollectionsResource(ctx context.Context, cat *Catalog, _ string) (any, error) {
	entries := []collectionEntry{}
	cut := false
	pages := 0
	for page, err := range cat.Client.CollectionPages(ctx, stacclient.CollectionQuery{Limit: maxCollectionsLimit},
		stacclient.SearchLimits{MaxPages: maxListedCollectionPages}) {
		if err != nil {
			return nil, err
		}
		pages++
		for _, c := range page.Collections {
			entries = append(entries, collectionEntry{ID: c.ID, Title: c.Title, Description: trimText(c.Description, 200)})
		}
		if pages >= maxListedCollectionPages && page.Next != nil {
			cut = true
		}
	}
	doc := map[string]any{"catalog": cat.URL, "count": len(entries), "collections": entries}
	if cut {
		doc["note"] = fmt.Sprintf("only the first %d pages of collections are listed; call search_collections with q to find others", maxListedCollectionPages)
	}
	return doc, nil
}
