package pixel

import (
	"context"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/stats"
)

// Stats are one band's (or an index's) statistics over the clear pixels
// of the area, with the area's pixels accounted for.
type Stats struct {
	Name string
	// Summary's Pixels are the area's pixels inside the raster; its
	// ValidShare is Valid over AOIPixels (the whole area, the part
	// outside the raster included).
	stats.Summary
	AOIPixels int
	// NoValue counts the area's pixels without a value: outside the
	// raster, nodata, or masked by the file; Masked those with a value
	// that the cloud mask removed.
	NoValue, Masked int
	// Estimated: AOIPixels was estimated from the area's size (the area
	// reaches past the raster).
	Estimated bool
}

// Stats summarises values over the kept pixels of the area where valid
// (nil: every pixel with a value).
func (p *Pixels) Stats(name string, values []float64, valid []bool) Stats {
	n := 0
	for _, in := range p.Inside {
		if in {
			n++
		}
	}
	areaValues := make([]float64, 0, n)
	areaKeep := make([]bool, 0, n)
	noValue, masked := 0, 0
	for i, v := range values {
		if !p.Inside[i] {
			continue
		}
		ok := valid == nil || valid[i]
		switch {
		case !ok:
			noValue++
		case !p.Keep[i]:
			masked++
		}
		areaValues = append(areaValues, v)
		areaKeep = append(areaKeep, p.Keep[i] && ok)
	}
	s := stats.Summarize(areaValues, areaKeep, stats.DefaultBins)
	aoi := max(p.AOIPixels, s.Pixels)
	if aoi > 0 {
		s.ValidShare = float64(s.Valid) / float64(aoi)
	}
	return Stats{Name: name, Summary: s, AOIPixels: aoi, NoValue: noValue + aoi - s.Pixels, Masked: masked, Estimated: p.Estimated}
}

// AndKeep is keep && valid per pixel (valid nil: keep).
func AndKeep(keep, valid []bool) []bool {
	out := make([]bool, len(keep))
	for i := range keep {
		out[i] = keep[i] && (valid == nil || valid[i])
	}
	return out
}

// WithCPU runs fn holding a CPU slot (statistics, drawing, encoding).
func (e *Env) WithCPU(ctx context.Context, fn func() error) error {
	release, err := e.CPU.Acquire(ctx, 1)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// IndexBands finds the bands an index reads, in the order of its roles.
func IndexBands(item *stacclient.Item, ix index.Index) ([]Band, error) {
	all := ItemBands(item)
	var bands []Band
	for _, role := range ix.Bands {
		b, ok := FindBand(item, all, role.CommonNames...)
		if !ok || b.CommonName == "" {
			return nil, MissingBand(item, all, role.Name, role.CommonNames)
		}
		bands = append(bands, b)
	}
	return bands, nil
}

// MissingBand is the error for a band the item lacks.
func MissingBand(item *stacclient.Item, bands []Band, role string, names []string) error {
	if have := CommonNames(bands); len(have) == 0 {
		return &Error{Kind: ErrNoBandInfo, Item: item.ID, Band: role}
	}
	return &Error{Kind: ErrNoBand, Item: item.ID, Band: role, Detail: joinNames(names)}
}

func joinNames(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += " or "
		}
		s += n
	}
	return s
}

// IndexOver reads the item's bands for ix and computes it over the area:
// the pixels read, the index's values on their grid (NaN where not
// computed) and its statistics.
func (e *Env) IndexOver(ctx context.Context, r Request, ix index.Index) (*Pixels, []float64, Stats, error) {
	bands, err := IndexBands(r.Item, ix)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	r.Bands, r.Mask, r.Index = bands, true, &ix
	p, err := e.Read(ctx, r)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	values, st, err := e.indexOf(ctx, p, ix)
	return p, values, st, err
}
