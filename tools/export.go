package tools

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability/sharedstate"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/export"
	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
	"github.com/stacmcp/stac-mcp/tools/internal/pixel"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/cogwrite"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
	"github.com/stacmcp/stac-mcp/tools/internal/writeflow"
)

// The export tool writes what the analysis showed as files a GIS opens:
// an item's pixels over the aoi as a Cloud-Optimized GeoTIFF, a series'
// rows as CSV (and its chart as PNG), a search's items as GeoJSON. Over
// stdio a file goes to the operator's export folder (tools/internal/export
// Dir); over HTTP nothing is written where a client says: the export is a
// resource, stac-mcp://exports/{id}, that only the caller who made it
// reads, for a while (Vault). See adr/0042.

// Export kinds.
const (
	exportPixels = "pixels"
	exportSeries = "series"
	exportItems  = "items"
)

// ExportIn selects what to export; instructions.md says which arguments
// each kind takes. To keep the tool list short, kind is a plain string
// (checked here, with a clearer error than a schema's enum gives), bands
// also takes an index's name, and a series' chart is always written.
type ExportIn struct {
	CatalogArg
	Kind        string     `json:"kind" jsonschema:"pixels, series or items"`
	ItemID      string     `json:"item_id,omitempty" jsonschema:"pixels: one item"`
	Collections StringList `json:"collections,omitempty" jsonschema:"with datetime"`
	AOI         AreaArg    `json:"aoi,omitempty" jsonschema:"bbox, GeoJSON or place"`
	Bands       StringList `json:"bands,omitempty" jsonschema:"bands, or an index"`
	Datetime    string     `json:"datetime,omitempty" jsonschema:"day or interval"`
	Name        string     `json:"name,omitempty" jsonschema:"file name, no folder"`
}

// selection splits bands into band names and an index: one index name
// alone is the index.
func (in ExportIn) selection() (bands []string, ix *index.Index, err error) {
	names, err := in.Bands.Strings("bands")
	if err != nil {
		return nil, nil, err
	}
	var indices []string
	for _, n := range names {
		if x, err := index.Lookup(strings.ToLower(strings.TrimSpace(n))); err == nil {
			indices = append(indices, n)
			ix = &x
		}
	}
	switch {
	case len(indices) == 0:
		return names, nil, nil
	case len(names) == 1:
		return nil, ix, nil
	}
	return nil, nil, &stacclient.ParamError{Param: "bands", Got: strings.Join(names, ","), Reason: "an index (" + strings.Join(indices, ", ") + ") among other names",
		Accepted: "band names, or one index: " + strings.Join(index.Names(), ", ")}
}

// ExportFile is one file written.
type ExportFile struct {
	URI       string `json:"uri" jsonschema:"resource URI (resources/read)"`
	Path      string `json:"path,omitempty" jsonschema:"the file on this machine (stdio only)"`
	MediaType string `json:"media_type"`
	Bytes     int64  `json:"bytes"`
	SHA256    string `json:"sha256"`
	What      string `json:"what"`
	Expires   string `json:"expires,omitempty" jsonschema:"when the resource is deleted (http only)"`
}

// ExportOut is the export: its file, files beside it, and what it holds.
type ExportOut struct {
	ExportFile
	PlaceResult
	Also   []ExportFile  `json:"also" jsonschema:"files written beside it (a series' chart)"`
	Pixels *PixelsExport `json:"pixels,omitempty"`
	Series *SeriesExport `json:"series,omitempty"`
	Items  *ItemsExport  `json:"items,omitempty"`
	Notes  []string      `json:"notes"`
	links  []mcp.Content
}

func (o ExportOut) attachedContent() []mcp.Content { return o.links }

// PixelsExport says what a GeoTIFF holds.
type PixelsExport struct {
	ItemID       string           `json:"item_id,omitempty" jsonschema:"the item exported (an item's pixels)"`
	Collection   string           `json:"collection"`
	Datetime     string           `json:"datetime,omitempty" jsonschema:"the item's datetime, or the period exported"`
	Items        []string         `json:"items,omitempty" jsonschema:"a period's items that gave pixels (all of them: the file's STAC_ITEM_IDS)"`
	Period       *PeriodRead      `json:"period,omitempty" jsonschema:"a period exported: its mosaic or median composite, dates and grid"`
	ReadFrom     *ReadCopy        `json:"read_from,omitempty" jsonschema:"the scene's copy in another catalog read, when the item's own data cannot be read here"`
	AOI          []float64        `json:"aoi"`
	DataType     string           `json:"data_type"`
	DataTypeWhy  string           `json:"data_type_why"`
	NoData       string           `json:"nodata" jsonschema:"where there is no value: outside the aoi, nodata, or masked as cloud"`
	EPSG         int              `json:"epsg"`
	GeoTransform []float64        `json:"geotransform" jsonschema:"GDAL order"`
	Width        int              `json:"width"`
	Height       int              `json:"height"`
	Overviews    int              `json:"overviews"`
	Resolution   Resolution       `json:"resolution"`
	Bands        []BandRead       `json:"bands_read"`
	Calibration  *CalibrationInfo `json:"calibration,omitempty"`
	Mask         *MaskInfo        `json:"mask,omitempty"`
	Stats        []BandStats      `json:"stats" jsonschema:"per band of the file, over its valid pixels: what aoi_statistics reports"`
	Requests     int              `json:"requests"`
	ReadBytes    int              `json:"read_bytes"`
}

// SeriesExport says what a series CSV holds.
type SeriesExport struct {
	Of      string        `json:"of"`
	Rows    int           `json:"rows"`
	Skipped []SkippedItem `json:"skipped"`
	HasMore bool          `json:"has_more"`
}

// ItemsExport says what a GeoJSON file holds.
type ItemsExport struct {
	Count   int  `json:"count"`
	Matched *int `json:"matched,omitempty"`
	HasMore bool `json:"has_more" jsonschema:"more items matched than were exported (the ceiling, or a page that failed)"`
	Ceiling int  `json:"ceiling"`
}

// ExportSettings are the export tool's bounds and places (cmd sets them
// from STAC_MCP_EXPORT_*).
type ExportSettings struct {
	// Dir is where stdio exports go ("" : export.DefaultDir()); over
	// HTTP without Shared, where this replica keeps exports ("" : a new
	// private temporary folder).
	Dir string
	// MaxBytes bounds one export (0: DefaultExportMaxBytes).
	MaxBytes int64
	// TTL is how long an HTTP export lives (0: DefaultExportTTL).
	TTL time.Duration
	// CallerBytes and TotalBytes bound HTTP exports held at once, per
	// caller and in all (0: the defaults).
	CallerBytes, TotalBytes int64
	// Shared, when set, keeps HTTP exports where the replicas share
	// state (sharedstate.Store), so that any replica reads them.
	Shared SharedExports
}

// SharedExports keeps HTTP exports in state the replicas share
// (reliability/sharedstate implements it on Redis).
type SharedExports interface {
	PutExport(ctx context.Context, id, caller string, meta, data []byte, ttl time.Duration, callerQuota, totalQuota int64) error
	GetExport(ctx context.Context, id string) (meta, data []byte, err error)
}

// Export defaults.
const (
	DefaultExportMaxBytes    = 256 << 20
	DefaultExportTTL         = time.Hour
	DefaultExportCallerBytes = 512 << 20
	DefaultExportTotalBytes  = 2 << 30
	// exportItemsCeiling is the most items an items export reads.
	exportItemsCeiling = 2000
)

// exportState is the process's export folder or vault, made on first use.
type exportState struct {
	mu    sync.Mutex
	dir   *export.Dir
	vault *export.Vault
	local *export.Local
	made  map[string]string // stdio: names exported by this process → media type
	// wrap, in tests, stands between an export and its file (a full disk).
	wrap func(io.Writer) io.Writer
}

func (s ExportSettings) withDefaults() ExportSettings {
	if s.MaxBytes <= 0 {
		s.MaxBytes = DefaultExportMaxBytes
	}
	if s.TTL <= 0 {
		s.TTL = DefaultExportTTL
	}
	if s.CallerBytes <= 0 {
		s.CallerBytes = DefaultExportCallerBytes
	}
	if s.TotalBytes <= 0 {
		s.TotalBytes = DefaultExportTotalBytes
	}
	return s
}

// exportFolder is the stdio export folder, opened on first use.
func (d *Deps) exportFolder() (*export.Dir, error) {
	st := &d.exports
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.dir != nil {
		return st.dir, nil
	}
	path := d.Export.Dir
	if path == "" {
		var err error
		if path, err = export.DefaultDir(); err != nil {
			return nil, err
		}
	}
	dir, err := export.OpenDir(path)
	if err != nil {
		return nil, err
	}
	st.dir, st.made = dir, map[string]string{}
	return dir, nil
}

// exportVault is where HTTP exports live, made on first use.
func (d *Deps) exportVault() (*export.Vault, error) {
	st := &d.exports
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.vault != nil {
		return st.vault, nil
	}
	s := d.Export.withDefaults()
	var b export.Backend
	if s.Shared != nil {
		b = sharedBackend{s.Shared}
	} else {
		local, err := export.NewLocal(s.Dir)
		if err != nil {
			return nil, err
		}
		st.local, b = local, local
	}
	st.vault = export.NewVault(b, s.TTL, s.CallerBytes, s.TotalBytes)
	return st.vault, nil
}

// CloseExports deletes this replica's HTTP exports (at shutdown).
func (d *Deps) CloseExports() {
	st := &d.exports
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.local != nil {
		_ = st.local.Close()
		st.local, st.vault = nil, nil
	}
	if st.dir != nil {
		_ = st.dir.Close()
		st.dir = nil
	}
}

// sharedBackend adapts SharedExports to the vault.
type sharedBackend struct{ s SharedExports }

func (b sharedBackend) Put(ctx context.Context, e export.Entry, data []byte, callerQuota, totalQuota int64) error {
	meta, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return b.s.PutExport(ctx, e.ID, e.Caller, meta, data, time.Until(e.Expires), callerQuota, totalQuota)
}

func (b sharedBackend) Get(ctx context.Context, id string) (export.Entry, []byte, error) {
	meta, data, err := b.s.GetExport(ctx, id)
	if err != nil {
		return export.Entry{}, nil, err
	}
	if meta == nil {
		return export.Entry{}, nil, export.ErrNotFound
	}
	var e export.Entry
	if err := json.Unmarshal(meta, &e); err != nil {
		return export.Entry{}, nil, err
	}
	return e, data, nil
}

// ExportURIPrefix starts the URI of every export resource.
const ExportURIPrefix = "stac-mcp://exports/"

// Export is the export tool.
func Export() Tool {
	t := define(&mcp.Tool{
		Name:  "export",
		Title: "Export to a file",
		Description: "Save pixels of an item or a period (COG), a series (CSV) or a search's items (GeoJSON) as a file.\n" +
			`Example: {"kind":"series","collections":"sentinel-2-l2a-synthetic-series","aoi":[-105.235,40.081,-105.217,40.087],"datetime":"2023"}`,
		// It writes a new file each call (never over one) and reads the
		// catalog: not read-only, not destructive, not idempotent.
		Annotations: &mcp.ToolAnnotations{Title: "Export to a file", DestructiveHint: jsonschema.Ptr(false), OpenWorldHint: jsonschema.Ptr(true)},
	}, true, exportHandler)
	return t.withAliases(map[string]string{"collection_id": "collections"})
}

func exportHandler(ctx context.Context, c *Call, in ExportIn) (ExportOut, string, error) {
	fail := failWith[ExportOut]()
	if in.Name != "" {
		if p := export.NameProblem(in.Name); p != "" {
			return fail(&stacclient.ParamError{Param: "name", Got: trimText(in.Name, 120), Reason: p,
				Accepted: "a file name without folder or extension, e.g. fields_ndvi (the folder is the server's)"})
		}
	}
	switch strings.ToLower(strings.TrimSpace(in.Kind)) {
	case exportPixels:
		return exportPixelsKind(ctx, c, in)
	case exportSeries:
		return exportSeriesKind(ctx, c, in)
	case exportItems:
		return exportItemsKind(ctx, c, in)
	}
	return fail(&stacclient.ParamError{Param: "kind", Got: in.Kind, Reason: "unknown kind",
		Accepted: "pixels (an item's bands or index over aoi, as a Cloud-Optimized GeoTIFF), series (index_time_series' rows as CSV) or items (a search's items as GeoJSON)"})
}

// exportBase is the file's base name: the caller's, else made from what
// it holds.
func exportBase(name string, parts ...string) string {
	if name != "" {
		return name
	}
	var keep []string
	for _, p := range parts {
		if p != "" {
			keep = append(keep, p)
		}
	}
	return export.Slug(strings.Join(keep, "_"))
}

// save writes one export: over stdio to the export folder, over HTTP to
// the vault, under the decode budget for what it holds in memory.
func save(ctx context.Context, c *Call, base, ext, mediaType, what string, write func(io.Writer) error) (ExportFile, error) {
	limit := c.Deps.Export.withDefaults().MaxBytes
	if wrap := c.Deps.exports.wrap; wrap != nil {
		inner := write
		write = func(w io.Writer) error { return inner(wrap(w)) }
	}
	if c.Deps.Shared {
		v, err := c.Deps.exportVault()
		if err != nil {
			c.Deps.Logger.Warn().Err(err).Str("event", "export_failed").Msg("the export store could not be opened")
			return ExportFile{}, actionable(err, "export: the server cannot keep exports right now (the log says why); nothing was kept")
		}
		charged := &chargedWriter{ctx: ctx, env: pixelEnv(c)}
		defer charged.release()
		e, err := v.Put(ctx, writeflow.CallerOf(c.Request), base+ext, mediaType, limit, func(w io.Writer) error {
			charged.w = w
			return write(charged)
		})
		if err != nil {
			if !knownExportError(err) {
				// A server path or a Redis address is no business of an
				// http client: the log has it.
				c.Deps.Logger.Warn().Err(err).Str("event", "export_failed").Msg("an export could not be stored")
				return ExportFile{}, actionable(err, "export: the export could not be stored on the server (the log says why); nothing was kept. Try again")
			}
			return ExportFile{}, exportError(err, limit)
		}
		return ExportFile{URI: ExportURIPrefix + e.ID, MediaType: mediaType, Bytes: e.Bytes, SHA256: e.SHA256, What: what,
			Expires: e.Expires.Format(time.RFC3339)}, nil
	}
	dir, err := c.Deps.exportFolder()
	if err != nil {
		return ExportFile{}, actionable(err, "export: %v", err)
	}
	w, err := dir.Write(ctx, base, ext, limit, write)
	if err != nil {
		return ExportFile{}, exportError(err, limit)
	}
	st := &c.Deps.exports
	st.mu.Lock()
	st.made[w.Name] = mediaType
	st.mu.Unlock()
	return ExportFile{URI: ExportURIPrefix + w.Name, Path: w.Path, MediaType: mediaType, Bytes: w.Bytes, SHA256: w.SHA256, What: what}, nil
}

// knownExportError says err is one exportError words in full.
func knownExportError(err error) bool {
	for _, known := range []error{export.ErrTooLarge, cogwrite.ErrTooLarge, export.ErrCallerQuota, sharedstate.ErrExportCallerQuota,
		export.ErrTotalQuota, sharedstate.ErrExportTotalQuota, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, known) {
			return true
		}
	}
	var busy *workbudget.BusyError
	var large *workbudget.TooLargeError
	return errors.As(err, &busy) || errors.As(err, &large)
}

// exportError words a failed save.
func exportError(err error, limit int64) error {
	switch {
	case errors.Is(err, export.ErrTooLarge), errors.Is(err, cogwrite.ErrTooLarge):
		return actionable(err, "export: the file would be larger than the export limit of %d bytes (%s, STAC_MCP_EXPORT_MAX_BYTES); nothing was written. "+
			"Export a smaller aoi, fewer bands, or a shorter period", limit, humanBytes(limit))
	case errors.Is(err, export.ErrCallerQuota), errors.Is(err, sharedstate.ErrExportCallerQuota):
		return actionable(err, "export: %v; nothing was stored. Export again when your earlier exports have expired (they live for STAC_MCP_EXPORT_TTL_SECS)", err)
	case errors.Is(err, export.ErrTotalQuota), errors.Is(err, sharedstate.ErrExportTotalQuota):
		return actionable(err, "export: %v; nothing was stored. Try again when earlier exports have expired", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var busy *workbudget.BusyError
	var large *workbudget.TooLargeError
	if errors.As(err, &busy) || errors.As(err, &large) {
		return err // worded as every tool words the decode budget
	}
	return actionable(err, "export: the file could not be written, and nothing was left behind: %v", err)
}

// chargedWriter charges what it passes on to the decode budget (a MiB at
// a time, in its units of 4 bytes) until release.
type chargedWriter struct {
	ctx              context.Context
	env              *pixel.Env
	w                io.Writer
	written, charged int64
	releases         []func()
}

func (c *chargedWriter) Write(p []byte) (int, error) {
	const chunk = 1 << 20
	for c.charged < c.written+int64(len(p)) {
		release, err := c.env.Decode.Acquire(c.ctx, chunk/4)
		if err != nil {
			return 0, err
		}
		c.releases = append(c.releases, release)
		c.charged += chunk
	}
	n, err := c.w.Write(p)
	c.written += int64(n)
	return n, err
}

func (c *chargedWriter) release() {
	for _, r := range c.releases {
		r()
	}
	c.releases = nil
}

// link is the resource_link content block of a file.
func link(f ExportFile, name string) mcp.Content {
	if f.Path != "" {
		name = filepath.Base(f.Path) // the name the folder gave it (-2, -3, … when taken)
	}
	size := f.Bytes
	return &mcp.ResourceLink{URI: f.URI, Name: name, MIMEType: f.MediaType, Size: &size, Description: f.What}
}

// exportText says what was exported as what, and where it is: the path
// (stdio), the resource, its type, size and digest.
func exportText(f ExportFile, format string) string {
	where := f.Path + " (resource " + f.URI + "; "
	if f.Path == "" {
		where = fmt.Sprintf("resource %s (read it with resources/read until %s, only this caller can; ", f.URI, f.Expires)
	}
	return fmt.Sprintf("Exported %s as %s to %s%s, %d bytes, sha256 %s).", f.What, format, where, f.MediaType, f.Bytes, f.SHA256)
}

// --- pixels ---

const mimeGeoTIFF = "image/tiff; application=geotiff; profile=cloud-optimized"

// pixelsAccepted is what kind pixels takes to name what it exports.
const pixelsAccepted = "item_id with collections naming its one collection (one item), or collections with datetime " +
	"(a day: that day's mosaic; an interval: a per-pixel median composite); with aoi, and bands or one index"

func exportPixelsKind(ctx context.Context, c *Call, in ExportIn) (ExportOut, string, error) {
	ctx = pixelCall(ctx)
	tool := c.Tool
	fail := failWith[ExportOut]()
	collections, err := in.Collections.Strings("collections")
	if err != nil {
		return fail(err)
	}
	switch {
	case in.ItemID != "" && strings.TrimSpace(in.Datetime) != "":
		return fail(&stacclient.ParamError{Param: "item_id", Got: in.ItemID,
			Reason: "item_id names one item, while datetime reads a search (a day's mosaic or an interval's composite): give one or the other", Accepted: pixelsAccepted})
	case in.ItemID == "" && strings.TrimSpace(in.Datetime) == "":
		return fail(&stacclient.ParamError{Param: "item_id", Got: "(none)", Reason: "no item_id and no datetime: nothing names the pixels to export",
			Accepted: pixelsAccepted})
	case in.ItemID == "":
		return exportPixelsPeriod(ctx, c, in)
	case len(collections) != 1:
		return fail(&stacclient.ParamError{Param: "collections", Got: strings.Join(collections, ","), Reason: "item_id needs the item's one collection",
			Accepted: pixelsAccepted})
	}
	names, ix, err := in.selection()
	if err != nil {
		return fail(err)
	}
	aoi, shape, km2, err := aoiArea(in.AOI)
	if err != nil {
		return fail(err)
	}
	rd, err := pixelItem(ctx, c, tool, collections[0], in.ItemID)
	if err != nil {
		return fail(err)
	}
	item := rd.item
	env := pixelEnv(rd.call)
	req := pixel.Request{Item: item, AOI: aoi, AOIKm2: km2}
	var p *pixel.Pixels
	g := exportGrid{}
	if ix != nil {
		var values []float64
		var s pixel.Stats
		if p, values, s, err = env.IndexOver(ctx, req, *ix); err != nil {
			return fail(pixelError(tool, item, err))
		}
		g.layers, g.descriptions, g.stats = [][]float64{values}, []string{ix.Name}, []pixel.Stats{s}
	} else {
		bands, _, err := statBands(item, names)
		if err != nil {
			return fail(pixelError(tool, item, err))
		}
		req.Bands, req.Mask = bands, true
		if p, err = env.Read(ctx, req); err != nil {
			return fail(pixelError(tool, item, err))
		}
		g.layers, g.valid = p.Values, p.Valid
		for k, br := range p.Bands {
			g.descriptions = append(g.descriptions, br.Band)
			g.stats = append(g.stats, p.Stats(br.Band, p.Values[k], p.Valid[k]))
		}
	}
	facts := describeRead(p)
	facts.Copy = rd.copy
	g.w, g.h, g.epsg, g.gt, g.inside, g.keep = p.W, p.H, p.Resolution.EPSG, p.GeoTransform, p.Inside, p.Keep
	g.dt, g.nodata, g.why = exportDataType(p, ix != nil)
	out := ExportOut{Also: []ExportFile{}, Notes: append([]string{}, facts.Notes...)}
	pe := g.describe(footprint.BBox(shape.Bound()), facts)
	asked := rd.asked
	pe.ItemID, pe.Collection, pe.Datetime, pe.ReadFrom = asked.ID, orDash(asked.Collection), itemDatetime(asked.Properties), rd.copy
	md := g.metadata(pe, facts, ix)
	md["STAC_ITEM_IDS"] = asked.ID
	md["STAC_COLLECTION"] = asked.Collection
	if cp := rd.copy; cp != nil {
		md["READ_FROM_COPY"] = fmt.Sprintf("%s's copy %s (%s): %s", cp.Catalog, cp.ID, orDash(cp.Collection), cp.Evidence)
	}
	if pe.Datetime != "" {
		md["DATETIME"] = pe.Datetime
	}
	if m := facts.Mask; m != nil {
		md["CLOUD_MASK"] = fmt.Sprintf("asset %s: %s", m.Asset, m.Rule)
	}
	of := strings.Join(g.descriptions, ", ")
	when := ""
	if pe.Datetime != "" {
		when = ", " + pe.Datetime
	}
	what := fmt.Sprintf("%s of item %s (%s%s) over %s: %s, EPSG:%d, %d×%d px of %s m", of, asked.ID, pe.Collection, when, formatBBox(pe.AOI),
		g.dt, pe.EPSG, g.w, g.h, formatNumber(facts.Resolution.PixelMetres))
	base := exportBase(in.Name, export.Slug(strings.Join(g.descriptions, "-")), export.Slug(asked.ID))
	f, err := writePixels(ctx, c, env, g, md, bandMetadata(facts, ix), base, what, nil)
	if err != nil {
		return fail(err)
	}
	out.ExportFile, out.Pixels = f, pe
	out.links = []mcp.Content{link(f, base+".tif")}
	return out, exportPixelsText(out, facts, of), nil
}

// exportGrid is what a pixels export writes: layers of values on one
// grid, each pixel kept only where aoi_statistics measures it.
type exportGrid struct {
	w, h   int
	epsg   int
	gt     [6]float64
	layers [][]float64
	// inside is the aoi; keep (nil: every pixel) the clear pixels; valid
	// (nil: those not NaN) where each layer has a value.
	inside, keep []bool
	valid        [][]bool
	descriptions []string
	stats        []pixel.Stats
	dt           cogwrite.DataType
	nodata       *float64
	why          string
}

// has says whether layer k's pixel i is written: inside the aoi, with a
// value, and clear.
func (g exportGrid) has(k, i int) bool {
	v := g.layers[k][i]
	return g.inside[i] && (g.keep == nil || g.keep[i]) && (g.valid == nil || g.valid[k][i]) && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// describe is the result's account of the file, before it is written.
func (g exportGrid) describe(bbox []float64, facts readFacts) *PixelsExport {
	pe := &PixelsExport{AOI: roundBBox(bbox), DataType: string(g.dt), DataTypeWhy: g.why, NoData: "NaN", EPSG: g.epsg,
		GeoTransform: append([]float64{}, g.gt[:]...), Width: g.w, Height: g.h, Overviews: len(cogwrite.OverviewSizes(g.w, g.h, 256)),
		Resolution: facts.Resolution, Bands: facts.Bands, Calibration: facts.Calibration, Mask: facts.Mask, Requests: facts.Requests, ReadBytes: facts.Bytes}
	if g.nodata != nil {
		pe.NoData = formatNumber(*g.nodata)
	}
	for _, s := range g.stats {
		pe.Stats = append(pe.Stats, bandStats(s))
	}
	return pe
}

// metadata is the file's metadata that an item and a period share: the
// area, nodata's meaning, calibration, resolution and index formula.
func (g exportGrid) metadata(pe *PixelsExport, facts readFacts, ix *index.Index) map[string]string {
	md := map[string]string{"AOI_BBOX": formatBBox(pe.AOI), "NODATA_MEANS": "outside the aoi, no value, or masked as cloud"}
	if line := calibrationLine(facts.Calibration, strings.ToUpper(strings.Join(g.descriptions, ","))); line != "" {
		md["CALIBRATION"] = line
	}
	md["SOURCE_RESOLUTION"] = fmt.Sprintf("%s m pixels (level %d; full resolution %s m)", formatNumber(facts.Resolution.PixelMetres),
		facts.Resolution.Level, formatNumber(facts.Resolution.FullMetres))
	if ix != nil {
		md["INDEX_FORMULA"] = ix.Name + " = " + ix.Formula
	}
	return md
}

// bandMetadata is each band's metadata: an index's bands read, or a
// band's asset and calibration.
func bandMetadata(facts readFacts, ix *index.Index) []map[string]string {
	if ix != nil {
		return []map[string]string{{"BANDS_READ": bandsReadWords(facts.Bands)}}
	}
	var out []map[string]string
	for _, br := range facts.Bands {
		out = append(out, map[string]string{"ASSET": br.Asset, "CALIBRATION": br.Calibration})
	}
	return out
}

// writePixels writes g as a Cloud-Optimized GeoTIFF, its values, overviews
// and tiles charged to the decode budget while it is built; copied, when
// set, is called once the file's copy of g's values is made (the read's
// charge can then be given back).
func writePixels(ctx context.Context, c *Call, env *pixel.Env, g exportGrid, md map[string]string, bandMD []map[string]string, base, what string,
	copied func()) (ExportFile, error) {
	crs, err := geo.FromEPSG(g.epsg)
	if err != nil {
		return ExportFile{}, err
	}
	n := g.w * g.h
	// The file's values, overviews and tiles, in the budget's units of 4
	// bytes: float64 values and overviews (4/3), tiles at most float32.
	cost := int64(n)*int64(len(g.layers))*8/3 + int64(n)*int64(len(g.layers))*4/3 + 1
	release, err := env.Decode.Acquire(ctx, cost)
	if err != nil {
		return ExportFile{}, err
	}
	defer release()
	r := &cogwrite.Raster{Width: g.w, Height: g.h, DataType: g.dt, NoData: g.nodata, EPSG: g.epsg, Geographic: crs.Geographic(),
		GeoTransform: g.gt, Descriptions: g.descriptions, Metadata: md, BandMetadata: bandMD}
	for k, vals := range g.layers {
		out := make([]float64, n)
		for i := range vals {
			if g.has(k, i) {
				out[i] = vals[i]
			} else {
				out[i] = math.NaN()
			}
		}
		r.Bands = append(r.Bands, out)
	}
	if copied != nil {
		copied()
	}
	return save(ctx, c, base, ".tif", mimeGeoTIFF, what, func(w io.Writer) error {
		return env.WithCPU(ctx, func() error {
			_, err := cogwrite.Write(ctx, w, r, cogwrite.Options{})
			return err
		})
	})
}

// exportDataType is the file's sample type: float32 for an index and for
// calibrated values; the source's own integer type when every band is
// read as stored (no scale or offset) with one nodata value to keep.
func exportDataType(p *pixel.Pixels, isIndex bool) (cogwrite.DataType, *float64, string) {
	if isIndex {
		return cogwrite.Float32, nil, "float32: the index's values"
	}
	dt := p.Bands[0].DataType
	nd := p.Bands[0].Calibration.NoData
	same := nd != nil && dt != "" && !strings.HasPrefix(dt, "float")
	for _, b := range p.Bands {
		c := b.Calibration
		same = same && c.Scale == 1 && c.Offset == 0 && b.DataType == dt && c.NoData != nil && *c.NoData == *nd
	}
	if same {
		v := *nd
		return cogwrite.DataType(dt), &v, fmt.Sprintf("%s: the numbers as stored (no scale or offset), the source's type; nodata %s", dt, formatNumber(v))
	}
	return cogwrite.Float32, nil, "float32: calibrated values (scale and offset applied: reflectance for optical bands)"
}

func bandsReadWords(bands []BandRead) string {
	var parts []string
	for _, b := range bands {
		parts = append(parts, fmt.Sprintf("%s (asset %s, %s)", b.Band, b.Asset, b.Calibration))
	}
	return strings.Join(parts, "; ")
}

func exportPixelsText(out ExportOut, facts readFacts, of string) string {
	p := out.Pixels
	var b strings.Builder
	b.WriteString(exportText(out.ExportFile, "a Cloud-Optimized GeoTIFF"))
	b.WriteString("\n")
	periodText(&b, p.Period)
	gt := make([]string, len(p.GeoTransform))
	for i, v := range p.GeoTransform {
		gt[i] = formatNumber(v)
	}
	fmt.Fprintf(&b, "File: %d×%d px, %d band(s) (%s), %s; nodata %s (outside the aoi, no value, or masked as cloud); EPSG:%d, geotransform [%s]; "+
		"256×256 tiles, DEFLATE, %d overview(s).\n", p.Width, p.Height, len(p.Stats), of, p.DataTypeWhy, p.NoData, p.EPSG, strings.Join(gt, ", "), p.Overviews)
	readText(&b, facts, strings.ToUpper(of))
	for _, s := range p.Stats {
		b.WriteString(statsLine(s) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// --- series ---

func exportSeriesKind(ctx context.Context, c *Call, in ExportIn) (ExportOut, string, error) {
	fail := failWith[ExportOut]()
	names, ix, err := in.selection()
	if err != nil {
		return fail(err)
	}
	if len(names) > 1 {
		return fail(&stacclient.ParamError{Param: "bands", Got: strings.Join(names, ","), Reason: "a series follows one band or one index",
			Accepted: "one band, or one index: " + strings.Join(index.Names(), ", ")})
	}
	if in.ItemID != "" {
		return fail(&stacclient.ParamError{Param: "item_id", Got: in.ItemID, Reason: "kind series reads a search, not one item",
			Accepted: "collections, datetime and aoi (as index_time_series)"})
	}
	sin := IndexTimeSeriesIn{CatalogsArg: CatalogsArg{CatalogURL: CatalogRefs(mustJSONString(in.CatalogURL))}, Collections: in.Collections, Datetime: in.Datetime, AOI: in.AOI}
	if ix != nil {
		sin.Index = IndexArg(ix.Name)
	}
	if len(names) == 1 {
		sin.Band = names[0]
	}
	s, _, err := indexTimeSeries(ctx, c, sin)
	if err != nil {
		return fail(relabel(err, "index_time_series", "export"))
	}
	if len(s.Rows) == 0 {
		return fail(actionable(nil, "export: the series has no row (%d item(s) skipped: %s), so there is nothing to export and no file was written; "+
			"widen datetime or the collections", len(s.Skipped), skippedWords(s.Skipped)))
	}
	base := exportBase(in.Name, export.Slug(s.Of), "series")
	what := fmt.Sprintf("%d date(s) of %s over %s", len(s.Rows), s.Of, formatBBox(s.AOI))
	f, err := save(ctx, c, base, ".csv", "text/csv; charset=utf-8; header=present", what, func(w io.Writer) error { return writeSeriesCSV(w, s.Rows) })
	if err != nil {
		return fail(err)
	}
	out := ExportOut{ExportFile: f, Also: []ExportFile{}, Series: &SeriesExport{Of: s.Of, Rows: len(s.Rows), Skipped: append(append([]SkippedItem{}, s.Skipped...), s.Failed...), HasMore: s.Done < s.Dates},
		Notes: append(append([]string{}, s.Warnings...), s.Notes...)}
	if s.Done < s.Dates {
		// One call of the series: the dates read in its time, an even
		// sample of the period (adr/0041).
		out.Notes = append(out.Notes, fmt.Sprintf("the file holds the %d of the period's %d dates read within one call (an even sample of the period); "+
			"index_time_series with its cursor reads the rest, or narrow datetime", s.Done, s.Dates))
	}
	out.links = []mcp.Content{link(f, base+".csv")}
	if s.content != nil {
		png := s.content.Data
		cf, err := save(ctx, c, base, ".png", "image/png", "chart of "+what, func(w io.Writer) error { _, err := w.Write(png); return err })
		if err != nil {
			return fail(err)
		}
		out.Also = append(out.Also, cf)
		out.links = append(out.links, link(cf, base+".png"))
	}
	var b strings.Builder
	b.WriteString(exportText(f, "CSV"))
	for _, a := range out.Also {
		b.WriteString("\nBeside it: " + strings.TrimPrefix(exportText(a, "PNG"), "Exported "))
	}
	fmt.Fprintf(&b, "\nColumns: %s.", strings.Join(seriesColumns, ", "))
	if skipped := append(append([]SkippedItem{}, s.Skipped...), s.Failed...); len(skipped) > 0 {
		fmt.Fprintf(&b, "\nNot in the file (%d): %s", len(skipped), skippedWords(skipped))
	}
	writeLines(&b, "\nNote: ", out.Notes)
	return out, strings.TrimRight(b.String(), "\n"), nil
}

var seriesColumns = []string{"date", "datetime", "item_ids", "mean", "std", "p2", "p50", "p98", "valid_pixels", "valid_share", "pixel_m"}

// writeSeriesCSV writes the rows as RFC 4180 CSV (CRLF line ends), dates
// in ISO 8601.
func writeSeriesCSV(w io.Writer, rows []TimeSeriesRow) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(seriesColumns); err != nil {
		return err
	}
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range rows {
		date := r.Datetime
		if len(date) >= 10 {
			date = date[:10]
		}
		if err := cw.Write([]string{date, r.Datetime, strings.Join(r.Items, " "), num(r.Mean), num(r.Std), num(r.P2), num(r.P50), num(r.P98),
			strconv.Itoa(r.Valid), num(r.ValidShare), num(r.PixelM)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func skippedWords(s []SkippedItem) string {
	if len(s) == 0 {
		return "none"
	}
	var parts []string
	for _, x := range s {
		parts = append(parts, x.ID+": "+x.Reason)
	}
	return strings.Join(parts, "; ")
}

// relabel makes another tool's message this tool's.
func relabel(err error, from, to string) error {
	msg := err.Error()
	if !strings.HasPrefix(msg, from+":") {
		return err
	}
	return actionable(err, "%s", to+":"+strings.TrimPrefix(msg, from+":"))
}

// --- items ---

func exportItemsKind(ctx context.Context, c *Call, in ExportIn) (ExportOut, string, error) {
	tool := c.Tool
	fail := failWith[ExportOut]()
	if in.ItemID != "" || len(in.Bands) > 0 {
		return fail(&stacclient.ParamError{Param: "kind", Got: exportItems, Reason: "kind items exports a search: item_id and bands do not apply",
			Accepted: "collections, datetime and aoi"})
	}
	params, err := AreaSearch{SearchFilter: SearchFilter{Collections: in.Collections, Datetime: in.Datetime}, AOI: in.AOI}.params(nil)
	if err != nil {
		return fail(err)
	}
	if len(params.Collections) == 0 && params.BBox == nil && params.Intersects == nil && params.Datetime == "" {
		return fail(&stacclient.ParamError{Param: "collections", Got: "(none)", Reason: "an empty selection: the whole catalog",
			Accepted: "collections, datetime or aoi narrowing the search"})
	}
	bs, err := runBoundedSearch(ctx, c, tool, params, exportItemsCeiling)
	if err != nil {
		return fail(err)
	}
	if len(bs.items) == 0 {
		return fail(actionable(nil, "export: the search matched no item, so there is nothing to export and no file was written; widen it (aoi, datetime, collections)"))
	}
	ie := &ItemsExport{Count: len(bs.items), Matched: bs.matched, HasMore: bs.hasMore, Ceiling: exportItemsCeiling}
	what := fmt.Sprintf("%d STAC item(s) of a search (complete items; at most %d, the ceiling)", len(bs.items), exportItemsCeiling)
	base := exportBase(in.Name, "items", export.Slug(strings.Join(params.Collections, "-")))
	f, err := save(ctx, c, base, ".geojson", "application/geo+json", what, func(w io.Writer) error { return writeItems(w, bs.items, bs.matched) })
	if err != nil {
		return fail(err)
	}
	out := ExportOut{ExportFile: f, Also: []ExportFile{}, Items: ie, Notes: append(append([]string{}, bs.warnings...), bs.filterNotes...),
		links: []mcp.Content{link(f, base+".geojson")}}
	var b strings.Builder
	b.WriteString(exportText(f, "a GeoJSON FeatureCollection"))
	if ie.HasMore {
		m := "more"
		if ie.Matched != nil {
			m = strconv.Itoa(*ie.Matched)
		}
		fmt.Fprintf(&b, "\n%s item(s) matched; the export stops at %d (the ceiling) or where a page failed: narrow the search for the rest.", m, exportItemsCeiling)
	}
	writeLines(&b, "\nNote: ", out.Notes)
	return out, b.String(), nil
}

// writeItems writes a FeatureCollection of the items as the catalog sent
// them.
func writeItems(w io.Writer, items []stacclient.Item, matched *int) error {
	if _, err := io.WriteString(w, `{"type":"FeatureCollection","features":[`); err != nil {
		return err
	}
	for i := range items {
		raw := items[i].Source()
		if raw == nil {
			var err error
			if raw, err = json.Marshal(&items[i]); err != nil {
				return err
			}
		}
		if i > 0 {
			if _, err := io.WriteString(w, ",\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(raw); err != nil {
			return err
		}
	}
	tail := fmt.Sprintf(`],"numberReturned":%d`, len(items))
	if matched != nil {
		tail += fmt.Sprintf(`,"numberMatched":%d`, *matched)
	}
	_, err := io.WriteString(w, tail+"}\n")
	return err
}

// --- resources ---

// registerExportResource serves exports by URI: over HTTP the caller's
// own, over stdio those this process wrote.
func registerExportResource(s *mcp.Server, d *Deps) {
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: ExportURIPrefix + "{id}", Name: "export", Title: "An export",
		Description: "A file the export tool made (only its maker reads it; over HTTP it expires).",
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		id, ok := strings.CutPrefix(uri, ExportURIPrefix)
		if !ok || id == "" {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		var data []byte
		var media string
		if d.Shared {
			v, err := d.exportVault()
			if err != nil {
				d.Logger.Warn().Err(err).Str("event", "export_read_failed").Msg("the export store could not be opened")
				return nil, fmt.Errorf("reading export %s failed on the server; try again", uri)
			}
			e, b, err := v.Get(ctx, writeflow.CallerOfExtra(req.Extra), id)
			if errors.Is(err, export.ErrNotFound) {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			if err != nil {
				d.Logger.Warn().Err(err).Str("event", "export_read_failed").Msg("an export could not be read")
				return nil, fmt.Errorf("reading export %s failed on the server; try again", uri)
			}
			data, media = b, e.MediaType
		} else {
			st := &d.exports
			st.mu.Lock()
			m, made := st.made[id]
			dir := st.dir
			st.mu.Unlock()
			if !made || dir == nil {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			f, fi, err := dir.Open(id)
			if err != nil {
				return nil, mcp.ResourceNotFoundError(uri)
			}
			defer f.Close()
			if fi.Size() > d.Export.withDefaults().MaxBytes {
				return nil, fmt.Errorf("export %s is %d bytes, over the export limit", uri, fi.Size())
			}
			if data, err = io.ReadAll(io.LimitReader(f, fi.Size())); err != nil {
				return nil, err
			}
			media = m
		}
		rc := &mcp.ResourceContents{URI: uri, MIMEType: media}
		if strings.HasPrefix(media, "text/") || strings.Contains(media, "json") {
			rc.Text = string(data)
		} else {
			rc.Blob = data
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{rc}}, nil
	})
}
