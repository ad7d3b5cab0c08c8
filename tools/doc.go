// Package tools is stac-mcp's MCP surface: the tools, prompts and resources
// a client lists, and the adapter between them and the machinery below.
// Handlers decode typed arguments, call stacclient and the engines under
// tools/internal/ (which return facts), and word the result: a structured
// result and a self-sufficient text block (adr/0019).
//
// A tool is one file named after it (get_root.go, search_items.go,
// check_coverage.go, …); the rest of the files are what several tools
// share, named for what they hold:
//
//   - the registry: inventory.go (Inventory, the one list the server, the
//     docs and the schema snapshots are built from, and define, the one
//     adapter every tool goes through: catalog resolution, the reliability
//     layer, the result), toolsets.go, write_tools.go (defineWrite and the
//     write protocol's wording), server.go and instructions.md (the server
//     and its instructions), prompts.go, resources.go, completions.go;
//   - arguments: args.go (loose types real clients send), schemas.go (input
//     schemas), argerrors.go (the SDK's schema errors made actionable),
//     catalogs_arg.go (one catalog or several), places.go and
//     place_lookup.go (place names in area arguments), cloud_cover.go,
//     pixels_index.go (index names);
//   - results: structured.go (structuredContent), meta.go (_meta keys),
//     errors.go and panics.go (errors and panics as isError results),
//     progress.go, render.go, render_item.go and render_item_raw.go (the
//     text of items), misses.go (suggestions when nothing matched);
//   - searches: search_checks.go and filtercheck.go (what a catalog ignored),
//     search_items_cursor.go, cursor_call.go and cursor_key.go (signed
//     cursors), federation.go and search_items_federated.go (several
//     catalogs), signing.go (Planetary Computer asset signing);
//   - pictures and pixels: visual.go, aoi_coverage.go, map_cache.go,
//     mapview.go (the MCP App), pixels.go, pixels_period.go, season.go,
//     work_budget.go (the process-wide bounds on decoding and CPU-heavy
//     work);
//   - sizing.go and sizing_head.go: estimate_data_size's side of its engine
//     (tools/internal/sizing): copies and HEAD outcomes worded;
//   - catalog_registry.go: the catalog registry (tools/internal/catalog)
//     re-exported for cmd and bench.
//
// docs/development.md has a table of where to change what, and the recipe
// for adding a tool.
package tools
