package tools

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/places"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// Prompts are conversation starters a client offers its user (slash
// commands in most clients). Each one turns a few arguments into a user
// message that walks the model through the tools in the order that works
// on an unknown STAC catalog: root → capabilities → collections →
// queryables → search → item → size.

// promptSpec is one prompt: its declaration and the builder of its message.
type promptSpec struct {
	def   *mcp.Prompt
	build func(args map[string]string) (string, error)
}

func prompts() []promptSpec {
	return []promptSpec{
		{&mcp.Prompt{
			Name: "find_imagery", Title: "Find imagery for an area and period",
			Description: "Find low-cloud scenes over an area in a time window, checking what the catalog supports before searching.",
			Arguments: []*mcp.PromptArgument{
				{Name: "area", Required: true, Description: "bbox as west,south,east,north in degrees (e.g. 11.0,46.0,11.5,46.5), or a place name (e.g. Lisbon, Ceará, Netherlands)"},
				{Name: "period", Required: true, Description: "RFC 3339 instant or interval, a shorthand such as 2024, 2024-06 or 2024-06-01/2024-06-30, or words (July 2025) the model turns into one"},
				{Name: "max_cloud", Description: "highest acceptable eo:cloud_cover in percent, 0-100 (default 20)"},
				{Name: "collection", Description: "collection id to search, e.g. sentinel-2-l2a; default: let the model pick one with search_collections"},
			},
		}, findImageryPrompt},
		{&mcp.Prompt{
			Name: "explore_catalog", Title: "Explore an unknown catalog",
			Description: "Find out what a STAC catalog holds and what its search supports, before searching it.",
			Arguments: []*mcp.PromptArgument{
				{Name: "catalog", Description: "STAC API URL or preset name (list_catalogs shows them); default: the server's catalog"},
			},
		}, exploreCatalogPrompt},
		{&mcp.Prompt{
			Name: "estimate_download", Title: "Estimate a download before fetching it",
			Description: "Size the assets of a search (per collection, asset and method, clipped to the area) before downloading anything.",
			Arguments: []*mcp.PromptArgument{
				{Name: "collection", Required: true, Description: "collection id, e.g. sentinel-2-l2a"},
				{Name: "bbox", Required: true, Description: "west,south,east,north in degrees, e.g. 11.0,46.0,11.5,46.5, or a place name (e.g. Denver)"},
				{Name: "datetime", Required: true, Description: "RFC 3339 instant or interval, a shorthand such as 2024-06, or words (summer 2025) the model turns into one"},
			},
		}, estimateDownloadPrompt},
		{&mcp.Prompt{
			Name: "analyze_area", Title: "Analyse an area over a period",
			Description: "An index (NDVI by default) of an area through a period: the clear dates, the series, a cloud-free composite, the change, and files to take away.",
			Arguments: []*mcp.PromptArgument{
				{Name: "area", Required: true, Description: "a place name (e.g. Ceará, Bavaria, Lisbon) or a bbox west,south,east,north in degrees"},
				{Name: "period", Required: true, Description: "a year, a season or an interval: 2024, 2024-04/2024-09, or words (summer 2025) the model turns into one"},
				{Name: "index", Description: "spectral index: " + strings.Join(index.Names(), ", ") + " (default ndvi)"},
				{Name: "collection", Description: "collection id, e.g. sentinel-2-l2a; default: let the model pick an analysis-ready one"},
			},
		}, analyzeAreaPrompt},
	}
}

// registerPrompts adds every prompt to s.
func registerPrompts(s *mcp.Server) {
	for _, p := range prompts() {
		s.AddPrompt(p.def, promptHandler(p))
	}
}

func promptHandler(p promptSpec) mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		args := map[string]string{}
		if req.Params != nil {
			for k, v := range req.Params.Arguments {
				args[k] = strings.TrimSpace(v)
			}
		}
		if err := checkPromptArgs(p.def, args); err != nil {
			return nil, invalidParams(err)
		}
		text, err := p.build(args)
		if err != nil {
			return nil, invalidParams(renderError("prompt "+p.def.Name, err))
		}
		return &mcp.GetPromptResult{
			Description: p.def.Description,
			Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}},
		}, nil
	}
}

// invalidParams makes a prompt argument error a JSON-RPC invalid-params
// error (-32602): the SDK sends any other error as code 0, which a client
// cannot tell from a server failure.
func invalidParams(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
}

// checkPromptArgs refuses missing required arguments and unknown ones
// (a misspelt optional argument would otherwise be dropped silently).
func checkPromptArgs(def *mcp.Prompt, args map[string]string) error {
	known := make([]string, 0, len(def.Arguments))
	for _, a := range def.Arguments {
		known = append(known, a.Name)
		if a.Required && args[a.Name] == "" {
			return renderError("prompt "+def.Name, &stacclient.ParamError{Param: a.Name, Got: args[a.Name],
				Reason: "required and missing", Accepted: a.Description})
		}
	}
	for name, v := range args {
		if !slices.Contains(known, name) {
			return renderError("prompt "+def.Name, &stacclient.ParamError{Param: name, Got: v,
				Reason: "not an argument of this prompt", Accepted: "the arguments " + strings.Join(known, ", ")})
		}
	}
	return nil
}

// parseBBoxText reads "w,s,e,n" (spaces or brackets allowed) into a bbox.
func parseBBoxText(param, text string) ([]float64, error) {
	fields := strings.FieldsFunc(strings.Trim(text, "[] "), func(r rune) bool { return r == ',' || r == ' ' })
	vals := make([]any, 0, len(fields))
	for _, f := range fields {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, &stacclient.ParamError{Param: param, Got: text, Reason: fmt.Sprintf("%q is not a number", f),
				Accepted: "four numbers west,south,east,north in degrees, e.g. 11.0,46.0,11.5,46.5"}
		}
		vals = append(vals, v)
	}
	bbox, err := stacclient.ParseBBox(vals)
	if err != nil {
		return nil, renamedParam(err, param, text)
	}
	return bbox, nil
}

// looksLikeBBox tells a bbox from a place name: only digits, signs, dots,
// commas, spaces and brackets.
func looksLikeBBox(s string) bool {
	return strings.Trim(s, "0123456789.,-+ []eE") == ""
}

func bboxJSON(b []float64) string {
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// looksLikeDatetime tells a datetime written in RFC 3339 or a shorthand
// (digits, separators, T and Z) from words a person typed ("July 2025").
func looksLikeDatetime(s string) bool {
	return strings.Trim(strings.ToUpper(s), "0123456789-:./+TZ ") == ""
}

// promptDatetime reads a prompt's period: a datetime stacclient parses is
// used as it is (normalized); one that looks like a datetime but does not
// parse is refused, naming the problem; words are handed to the model to
// turn into an interval (so "July 2025" or "summer 2025" work,
// which a datetime parser alone would refuse).
// shown is how the message names the period, as a datetime argument or as
// an instruction.
func promptDatetime(param, text string) (datetime, shown string, err error) {
	dt, err := stacclient.ParseDatetime(text)
	if err == nil {
		return dt, dt, nil
	}
	if looksLikeDatetime(text) {
		return "", "", renamedParam(err, param, text)
	}
	return "", fmt.Sprintf("%q (first turn this into an RFC 3339 interval start/end, e.g. 2025-07-01T00:00:00Z/2025-07-31T23:59:59Z, "+
		"and say which interval you used)", text), nil
}

// promptPeriod reads a prompt's period (promptDatetime) and gives the
// datetime argument its message passes on: the datetime, or derived when
// the model is to turn words into one first.
func promptPeriod(param, text, derived string) (arg, shown string, err error) {
	dt, shown, err := promptDatetime(param, text)
	if err != nil {
		return "", "", err
	}
	if dt == "" {
		return derived, shown, nil
	}
	return strconv.Quote(dt), shown, nil
}

// promptArea reads a prompt's area argument (named name): a bbox, or a
// place (promptPlace, passed on as the tools' param). shown is how the
// message names it; arg is the value it passes as param: the bbox, the
// place name when the server resolves it, else derived.
func promptArea(name, text, param, derived string) (shown, arg string, err error) {
	if looksLikeBBox(text) {
		bbox, err := parseBBoxText(name, text)
		if err != nil {
			return "", "", err
		}
		return "the bbox " + bboxJSON(bbox), bboxJSON(bbox), nil
	}
	if _, err := places.Resolve(text); err == nil {
		derived = strconv.Quote(text)
	}
	return promptPlace(text, param), derived, nil
}

func findImageryPrompt(args map[string]string) (string, error) {
	datetimeArg, periodShown, err := promptPeriod("period", args["period"], "(the interval you derived from the period)")
	if err != nil {
		return "", err
	}
	maxCloud := 20.0
	if v := args["max_cloud"]; v != "" {
		maxCloud, err = strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || maxCloud < 0 || maxCloud > 100 {
			return "", &stacclient.ParamError{Param: "max_cloud", Got: v, Reason: "not a percentage", Accepted: "a number from 0 to 100, e.g. 20"}
		}
	}
	area, _, err := promptArea("area", args["area"], "bbox", "")
	if err != nil {
		return "", err
	}
	cloud := strconv.FormatFloat(maxCloud, 'f', -1, 64)
	collectionStep := "3. Pick the collection: call search_collections with q describing the imagery (e.g. \"sentinel-2 surface reflectance\") " +
		"and the same bbox and datetime; prefer an analysis-ready (L2A / surface reflectance) collection and say which you chose and why."
	if c := args["collection"]; c != "" {
		collectionStep = fmt.Sprintf("3. Check the collection: call get_collection with collection_id %q and confirm its extent covers the area and period "+
			"(if it is not found, call search_collections to find the right id).", c)
	}
	return fmt.Sprintf(`Find imagery over %s for the period %s with at most %s%% cloud cover.

Work through the STAC tools in this order:
1. get_root, to see which catalog this is and what it serves.
2. get_capabilities, to learn how this catalog filters: whether it supports the query extension, CQL2 filter (and which language), sortby and fields.
%s
4. get_queryables with that collection_id, to confirm the cloud property is eo:cloud_cover (some catalogs use another name) and its range.
5. search_items with collections, bbox, datetime %s, sortby "properties.eo:cloud_cover" (least cloudy first, if sortby is supported) and a small max_items such as 10.
   Filter on clouds the way the catalog supports:
   - query extension: "query": {"eo:cloud_cover": {"lt": %s}}
   - CQL2 filter: "filter": {"op": "<", "args": [{"property": "eo:cloud_cover"}, %s]} (filter_lang cql2-json)
   - neither: search without the cloud filter and drop scenes above %s%% from the results yourself, saying so.
   max_items is how many items come back in total; limit is only the page size sent to the catalog. If has_more is true and more
   scenes are needed, call search_items again with the returned cursor instead of re-running the search.
6. get_item on the best one or two scenes to list their assets (bands, visual/preview) and hrefs.
7. Before anyone downloads, call estimate_data_size with the same search and the asset keys that matter (e.g. red, green, blue, nir).

Answer with a short table of the scenes found (id, date, cloud cover, platform) and which one you recommend.`,
		area, periodShown, cloud, collectionStep, datetimeArg, cloud, cloud, cloud), nil
}

func exploreCatalogPrompt(args map[string]string) (string, error) {
	catalogArg := ""
	which := "the server's default catalog"
	if c := args["catalog"]; c != "" {
		catalogArg = fmt.Sprintf(" with catalog_url %q", c)
		which = fmt.Sprintf("the catalog %q", c)
	}
	return fmt.Sprintf(`Explore %s and tell me what it holds and how to search it. Pass catalog_url on every call if one is given%s.

1. get_root%s: title, description, STAC version, and whether it is an API (item search) or a static catalog.
2. get_capabilities%s (or get_conformance): item search, query, CQL2 filter, sort, fields, free-text collection search, aggregations.
3. search_collections%s with a small limit, then follow the cursor while has_more is true, to list the collections (id, title,
   temporal and spatial extent). Group them by theme (optical, SAR, elevation, land cover, ...).
4. For the two or three most useful collections: get_collection (extent, item_assets, summaries such as platforms and gsd) and
   get_queryables (the properties search_items can filter on).
5. One small search_items per chosen collection with max_items 3 and detail summary, to show what an item and its assets look like.

Report: what the catalog is good for, its collections in groups, which search features work here, and an example search_items
call (with the exact arguments) that I could run next. Do not download anything.`,
		which, catalogArg, catalogArg, catalogArg, catalogArg), nil
}

func estimateDownloadPrompt(args map[string]string) (string, error) {
	// A place name ("Denver") is handed to the model, as find_imagery's area.
	area, bboxArg, err := promptArea("bbox", args["bbox"], "bbox", "(the bbox you derived)")
	if err != nil {
		return "", err
	}
	dtArg, dtShown, err := promptPeriod("datetime", args["datetime"], "(the interval you derived)")
	if err != nil {
		return "", err
	}
	collection := args["collection"]
	return fmt.Sprintf(`Estimate how much data a download of collection %q over %s for %s would be, before fetching anything.

1. get_collection with collection_id %q: check the extent covers the bbox and period, and read item_assets to see which assets
   exist (and which are data rather than thumbnails or metadata).
2. search_items with collections [%q], bbox %s, datetime %s and max_items 10 to see how many items match (matched, has_more).
3. estimate_data_size with the same collections, bbox and datetime, max_items large enough to cover the matches (up to the
   server's ceiling), and asset_keys limited to the assets that would actually be downloaded. It sizes from file:size, raster
   dtype × shape, or HEAD requests, and clips raster assets to the bbox.
4. If has_more is true, the estimate covers only the items sized: scale it up by matched / item_count and say so.

Report the total and the clipped total, the split by asset key, which sizes are exact and which are estimates (method), what
could not be sized and why, and a cheaper alternative if it is large (fewer assets, a shorter period, a smaller area).`,
		collection, area, dtShown, collection, collection, bboxArg, dtArg), nil
}

func analyzeAreaPrompt(args map[string]string) (string, error) {
	datetimeArg, periodShown, err := promptPeriod("period", args["period"], "(the interval you derived from the period)")
	if err != nil {
		return "", err
	}
	ix := "ndvi"
	if v := args["index"]; v != "" {
		x, err := index.Lookup(strings.ToLower(v))
		if err != nil {
			return "", &stacclient.ParamError{Param: "index", Got: v, Reason: "not an index the pixel tools compute",
				Accepted: strings.Join(index.Names(), ", ")}
		}
		ix = x.Name
	}
	area, aoiArg, err := promptArea("area", args["area"], "aoi", "(the place or bbox above)")
	if err != nil {
		return "", err
	}
	collectionStep := "1. Pick the collection: search_collections with q \"sentinel-2 surface reflectance\" (or what the area and period call for) " +
		"and the same area and datetime; prefer an analysis-ready L2A / surface reflectance collection whose assets this server can read, and say which."
	collection := "(the collection you picked)"
	if c := args["collection"]; c != "" {
		collectionStep = fmt.Sprintf("1. Check the collection: get_collection with collection_id %q covers the area and period.", c)
		collection = strconv.Quote(c)
	}
	return fmt.Sprintf(`Analyse %s over %s with the index %s.

%s
2. check_coverage with collections %s, aoi %s, datetime %s and max_cloud_cover 30: how often and how completely clear scenes
   cover the area in the period (a season with few clear dates needs a wider period or a higher cloud limit; say so).
3. index_time_series with collections %s, aoi %s, datetime %s and index %q. It reads an even sample of the acquisition dates
   first; while the result has a cursor and the question needs every date, call it again with the same arguments and the cursor.
   Read each date's valid_share (the share of the area with a clear value) before trusting its mean, and the calibration line.
4. render_aoi with the same collections and aoi, datetime %s and view %q: a cloud-free composite of the period (median of the
   clear observations). For "what changed", render_aoi with datetime the later part of the period and baseline the earlier part.
5. aoi_statistics with collections, aoi and datetime the day of the highest or lowest value (or the item_id of that scene), if a
   closer look at one date helps.
6. Offer files to take away: export with kind "series" (the table as CSV, with its chart) and kind "pixels" (the composite or a
   date as a Cloud-Optimized GeoTIFF).

Answer with: when the index was highest and lowest, the trend through the period, how many dates were clear enough to use
(and which were skipped, why), the composite map, and any warning a tool gave about calibration or missing values.`,
		area, periodShown, ix, collectionStep, collection, aoiArg, datetimeArg, collection, aoiArg, datetimeArg, ix, datetimeArg, ix), nil
}

// promptPlace words a place a prompt was given: one the server resolves
// is passed as it is (the tools take place names in area arguments), one
// it does not know is handed to the model to turn into a bbox.
func promptPlace(text, param string) string {
	m, err := places.Resolve(text)
	if err != nil {
		return fmt.Sprintf("%q (first turn this place into a bbox [west, south, east, north] in degrees, longitude first, "+
			"tight around it, and say which bbox you used)", text)
	}
	p := m.Place
	return fmt.Sprintf("%s (%s, bbox %s; pass %s %q as it is: the tools resolve place names to their area, and the result's place says what was used)",
		p.Name, p.Kind, formatBBox(p.BBox[:]), param, text)
}

// renamedParam reports a stacclient parsing error under the prompt's own
// argument name.
func renamedParam(err error, param, got string) error {
	var pe *stacclient.ParamError
	if errors.As(err, &pe) {
		cp := *pe
		cp.Param, cp.Got = param, got
		return &cp
	}
	return err
}
