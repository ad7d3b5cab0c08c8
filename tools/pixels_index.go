package tools

import (
	"context"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// IndexArg names a spectral index (raster/index).
type IndexArg string

func init() {
	var names []any
	for _, n := range index.Names() {
		names = append(names, n)
	}
	argTypeSchemas[reflect.TypeFor[IndexArg]()] = &jsonschema.Schema{Type: "string", Enum: names}
}

func lookupIndex(arg IndexArg) (index.Index, error) {
	ix, err := index.Lookup(string(arg))
	if err != nil {
		return ix, &stacclient.ParamError{Param: "index", Got: string(arg), Reason: "unknown index", Accepted: strings.Join(index.Names(), ", ")}
	}
	return ix, nil
}

// indexBands finds the bands an index reads.
func indexBands(item *stacclient.Item, ix index.Index) ([]itemBand, error) {
	all := itemBands(item)
	var bands []itemBand
	for _, role := range ix.Bands {
		b, ok := findBand(item, all, role.CommonNames...)
		if !ok || b.CommonName == "" {
			return nil, missingBand(item, all, role.Name, role.CommonNames)
		}
		bands = append(bands, b)
	}
	return bands, nil
}

// indexOver reads the item's bands and computes the index over the area.
func indexOver(ctx context.Context, c *Call, item *stacclient.Item, ix index.Index, aoi orb.Geometry) (*aoiPixels, []float64, BandStats, error) {
	bands, err := indexBands(item, ix)
	if err != nil {
		return nil, nil, BandStats{}, err
	}
	p, err := readAOI(ctx, c, readRequest{item: item, bands: bands, mask: true, aoi: aoi})
	if err != nil {
		return nil, nil, BandStats{}, err
	}
	var values []float64
	var st BandStats
	err = withCPU(ctx, c, func() error {
		keep := p.keep
		for _, v := range p.Valid {
			keep = andKeep(keep, v)
		}
		var err error
		if values, err = ix.Compute(p.Values, keep); err != nil {
			return err
		}
		st = bandStats(ix.Name, values, p.Inside, keep)
		return nil
	})
	return p, values, st, err
}

// rampWords says a ramp's colours.
func rampWords(name string) string {
	switch name {
	case "vegetation":
		return "red → yellow → green"
	case "water":
		return "brown → white → blue"
	case "built":
		return "green → white → purple"
	}
	return "black → white"
}
