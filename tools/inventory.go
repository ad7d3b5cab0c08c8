package tools

// The files derived from the inventory (tools/__toolsnaps__, the tool and
// toolset tables of the README and docs/) and the golden images of
// internal/picture and internal/mapimage are written by internal/gen.
//
//go:generate go run ./internal/gen

import (
	"context"
	"errors"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools/internal/cursor"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

// Tools are the tools a server with d lists: the inventory, and the
// write tools when writes are allowed (Deps.Writes; without it they are
// not listed at all and the server is read-only), narrowed by d.Surface.
func Tools(d *Deps) []Tool {
	return d.Surface.Select(Candidates(d.Writes != nil))
}

// Candidates are the tools a server may list: the inventory, and the
// write tools when writes are allowed. Surfaces choose among them.
func Candidates(writes bool) []Tool {
	if !writes {
		return Inventory()
	}
	return append(Inventory(), WriteTools()...)
}

// Inventory lists every tool that changes no catalog, in the order a
// model should meet them, each in its toolset (toolsets.go); WriteTools
// lists the others. All of them only read, except export, which writes
// files of its own (adr/0042).
func Inventory() []Tool {
	return slices.Concat(
		inToolset(ToolsetDiscover, ListCatalogs(), GetRoot(), GetConformance(), GetCapabilities(),
			SearchCollections(), GetCollection(), GetQueryables()),
		inToolset(ToolsetSearch, SearchItems(), GetItem(), GetAggregations()),
		inToolset(ToolsetSize, EstimateDataSize()),
		inToolset(ToolsetVisual, VisualTools()...),
		inToolset(ToolsetPixels, PixelTools()...),
		inToolset(ToolsetExport, Export()),
		inToolset(ToolsetOps, GetServiceHealth()),
	)
}

// VisualTools are the tools that answer with pictures and areas (the
// "visual" toolset): an item's preview image, a map of a search's
// footprints, and how much of an area a search covers.
func VisualTools() []Tool { return []Tool{GetItemPreview(), MapItems(), CheckCoverage()} }

// PixelTools read an item's pixels over an area (the "pixels" toolset).
func PixelTools() []Tool {
	return []Tool{AOIStatistics(), RenderAOI(), IndexTimeSeries()}
}

// Deps are the process-wide collaborators shared by every tool call and
// every session.
type Deps struct {
	Layer    *reliability.Layer
	Catalogs *Catalogs
	Limits   Limits
	Logger   zerolog.Logger
	// Shared is set when untrusted clients share this server (http): a
	// caller then sees in get_service_health only the configured catalogs'
	// hosts and the host of the catalog_url it names (adr/0015). Nothing
	// is remembered per client, so every replica gives the same answer.
	Shared bool
	// Surface chooses the tools the server lists (--toolsets, --tools,
	// --read-only); the zero value lists them all.
	Surface Surface
	// CursorKey signs cursors (HMAC-SHA256, adr/0009). Replicas that share
	// it continue each other's cursors; empty means a random key for this
	// process.
	CursorKey []byte
	// Writes, when set, registers the write tools (WriteTools) and holds
	// their idempotency store; nil keeps the server read-only.
	Writes *Writes
	// Export is where the export tool's files go and how large they may
	// be; the zero value is the defaults.
	Export ExportSettings

	// Per-process state the tools build lazily; the zero value is ready.
	signing       signingState      // the Planetary Computer Signer (configureSigning sets its options)
	collectionIDs collectionIDCache // collection-id completions
	cursorKeys    cursorKeyState    // the key cursors are signed with
	maps          mapCache          // the last maps map_items drew
	budgets       workBudgets       // CPU slots and decoded pixels (work())
	pixels        pixelState        // the pixel tools' header and tile cache
	pages         pageTimes         // each catalog's page times in searches of several catalogs
	exports       exportState       // the export folder (stdio) or vault (http)
	// seriesPage bounds the dates one index_time_series call returns (0:
	// seriesPageDates); tests lower it to page a short series.
	seriesPage int
}

// Limits shape outputs for a model's context.
type Limits struct {
	MaxItemsDefault int // search_items max_items when not given (10)
	MaxItemsCeiling int // the largest max_items accepted (STAC_MCP_MAX_ITEMS_CEILING)
	// MaxCatalogs bounds the catalogs one call searches at once
	// (STAC_MCP_MAX_CATALOGS_PER_CALL); 0 is catalog.DefaultMaxMembers.
	MaxCatalogs int
	// DecodePixels bounds the decoded image pixels held at once by the
	// whole process (STAC_MCP_DECODE_BUDGET_PIXELS); 0 is budget.DefaultPixels.
	DecodePixels int64
	// CPUSlots bounds the CPU-heavy steps run at once; 0 is GOMAXPROCS.
	CPUSlots int
	// ReadPixels is the pixel tools' budget per band read: the finest
	// overview whose window over the area fits it is read; 0 is
	// DefaultReadPixels.
	ReadPixels int
}

// Call is one tool invocation as a handler sees it.
type Call struct {
	// Tool is the tool called, as errors and logs name it: a handler
	// another tool reuses (export's series, a pixel read) names the tool
	// the user called.
	Tool    string
	Deps    *Deps
	Catalog *Catalog
	Request *mcp.CallToolRequest
	// Cursor is the verified cursor the call continues from (tools whose
	// input has a cursor argument), or nil.
	Cursor *cursor.Cursor
	// Federation is set when catalog_url names several catalogs (tools
	// that take CatalogsArg): Catalog is then its first member.
	Federation *fedCall
	// Place is the place an area argument named, or nil; the argument
	// already holds its area.
	Place *PlaceOut
}

// CatalogArg is embedded in every tool input: every tool accepts the same
// catalog forms as --catalog (URL, preset name, "demo", path to catalog.json).
type CatalogArg struct {
	// Its forms are explained once, in the server instructions.
	CatalogURL string `json:"catalog_url,omitempty"`
}

func (c CatalogArg) catalogRef() string { return c.CatalogURL }

type catalogInput interface{ catalogRef() string }

// Handler is what each tool file writes: the structured output, a concise
// readable text block, or an error (rendered as an isError result).
type Handler[In catalogInput, Out any] func(ctx context.Context, c *Call, in In) (Out, string, error)

// contentAttacher is implemented by outputs that carry content besides the
// text block, such as an image: define adds it to the result's content,
// after the text. It stays out of structuredContent (keep it in an
// unexported field), where base64 pixels would only cost tokens.
type contentAttacher interface {
	attachedContent() []mcp.Content
}

// Tool is one inventory entry.
type Tool struct {
	Def     *mcp.Tool
	Network bool   // true when the tool makes upstream requests
	Toolset string // the toolset it belongs to (toolsets.go)
	// SideEffect is what the tool may change: reliability.SideEffectRead
	// for every Inventory tool, create/update/delete for WriteTools.
	SideEffect string
	// Aliases are older argument names still accepted but not listed in
	// the input schema, each mapped to the argument it stands for
	// (argumentAliasMiddleware renames them before the SDK validates).
	Aliases  map[string]string
	register func(s *mcp.Server, d *Deps)
}

// withAliases returns t accepting the given older argument names.
func (t Tool) withAliases(aliases map[string]string) Tool {
	t.Aliases = aliases
	return t
}

// Register adds the tool to s.
func (t Tool) Register(s *mcp.Server, d *Deps) { t.register(s, d) }

// define is the one adapter every tool goes through. It fixes the tool's
// schemas once (input from In with the loose argument types of args.go,
// output from Out with non-nullable arrays), and at call time resolves the
// catalog, runs the handler inside the reliability layer and shapes the
// result: the readable text block, structuredContent (Out encoded once and
// validated against the output schema, structured.go), and the receipt in
// _meta. Errors become isError
// results with an actionable message; their _meta is attached by the
// callMetaMiddleware (see meta.go for why); their text is renderError's
// (errors.go).
func define[In catalogInput, Out any](def *mcp.Tool, network bool, h Handler[In, Out]) Tool {
	tool := *def
	tool.InputSchema = mustInputSchema[In](def.Name)
	outSchema := mustOutputSchema[Out](def.Name)
	tool.OutputSchema = outSchema
	output := newOutputSchema[Out](def.Name, outSchema)
	return Tool{Def: &tool, Network: network, SideEffect: reliability.SideEffectRead, register: func(s *mcp.Server, d *Deps) {
		registered := tool
		registered.InputSchema = withItemCeiling(tool.InputSchema, d.Limits)
		// Registered with an untyped output: the SDK still validates the
		// arguments and advertises the output schema, and leaves the
		// structuredContent adapt sets as it is.
		mcp.AddTool(s, &registered, adapt(tool.Name, d, h, output))
	}}
}

// adapt turns a Handler into the SDK's handler; output encodes and checks
// its structured result.
func adapt[In catalogInput, Out any](name string, d *Deps, h Handler[In, Out], output *outputSchema) mcp.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		holder := callMetaFrom(ctx)
		ctx = d.Logger.WithContext(ctx) // for code that has no Deps (goroutines' panic logs)
		// Loading a static catalog is bounded like the call itself.
		resolveCtx, cancel := context.WithTimeout(ctx, d.Layer.Policy().ToolTimeout)
		cat, fed, cursor, resolveErr := resolveAnyCall(resolveCtx, d, in)
		cancel()
		// A place named by an area argument becomes its area here, before
		// the handler reads the argument (places.go).
		place, placeErr := resolvePlaceArgs(&in)
		if resolveErr == nil && placeErr != nil {
			resolveErr = placeErr
		}
		if resolveErr != nil {
			// Still go through the layer, so the failed call is logged and
			// counted like any other and the result carries a receipt.
			receipt, err := d.Layer.Run(ctx, name, "", func(context.Context) error { return resolveErr })
			holder.record(receipt, err)
			return nil, nil, renderError(name, err)
		}
		call := &Call{Tool: name, Deps: d, Catalog: cat, Federation: fed, Request: req, Cursor: cursor, Place: place}
		host := cat.Host
		if fed != nil {
			host = "" // several catalogs: each member's outcome is in the result (adr/0035)
		}
		// Run may return at the deadline while fn is still running on its
		// own goroutine; out and text are read only when Run reports
		// success, which means fn returned (its result came over a channel).
		var out Out
		var text string
		receipt, err := d.Layer.Run(ctx, name, host, func(ctx context.Context) (herr error) {
			defer recoverAs(d.Logger, name, &herr)
			out, text, herr = h(ctx, call, in)
			return herr
		})
		holder.record(receipt, err)
		if err != nil {
			d.Catalogs.Forget(cat) // a catalog that never answered keeps nothing cached, so URLs that never answer cannot fill the table
			if fed != nil {
				for _, m := range fed.members[1:] {
					d.Catalogs.Forget(m)
				}
			}
		}
		var failed *writeflow.Failed
		if errors.As(err, &failed) {
			if out, ok := any(failed.Outcome).(Out); ok {
				// A failure with a structured result (a write's stored
				// failure): isError, with the same structuredContent on
				// every duplicate.
				res := &mcp.CallToolResult{IsError: true, Meta: resultMeta(receipt, nil),
					Content: []mcp.Content{&mcp.TextContent{Text: failed.Text}}}
				res, err := output.structured(res, out)
				return res, nil, err
			}
		}
		if err != nil {
			return nil, nil, relabelError(cat, renderError(name, err))
		}
		if place != nil {
			if ps, ok := any(&out).(placeSetter); ok {
				ps.setPlace(place)
				text = placeText(place) + "\n" + text
			}
		}
		res := &mcp.CallToolResult{Meta: resultMeta(receipt, nil)}
		if text != "" {
			// Leaving Content nil would make the SDK send the JSON again as
			// text; the readable summary is what a model should read.
			res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
		}
		if a, ok := any(out).(contentAttacher); ok {
			res.Content = append(res.Content, a.attachedContent()...)
		}
		res, err = output.structured(res, out)
		return res, nil, err
	}
}
