package pixel

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/geo"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// Area is a grid over the whole area of interest, what every layer read
// or computed on it shares: the grid (CRS, geotransform, size), which
// pixels are in the area, its outline for drawing.
type Area struct {
	Grid        geo.Grid
	W, H        int
	Inside      []bool
	Outline     [][][2]float64
	PixelMetres float64
	Resolution  Resolution
	// AOIPixels is how many pixels of the grid the area covers (the grid
	// covers all of it).
	AOIPixels int
}

// AreaOf is the area of a target grid.
func AreaOf(t *Target, aoi orb.Geometry) (Area, error) {
	g := t.Grid
	inside, err := g.Mask(aoi, g.Bounds())
	if err != nil {
		return Area{}, &Error{Kind: ErrPlace, Item: t.From, Asset: t.Asset, Err: err}
	}
	a := Area{Grid: g, W: g.Width, H: g.Height, Inside: inside, Outline: outlineInWindow(g, g.Bounds(), aoi),
		PixelMetres: t.Resolution.PixelMetres, Resolution: t.Resolution}
	for _, in := range inside {
		if in {
			a.AOIPixels++
		}
	}
	return a, nil
}

// CompositeRequest is a period's acquisitions over an area, to be
// composited pixel by pixel on one grid.
type CompositeRequest struct {
	Acquisitions []Acquisition
	// Bands picks an item's bands (as MosaicRequest's); Names names the
	// layers composited: the bands' titles, or the index's name when
	// Index is set (then the index is composited, computed per date from
	// that date's bands).
	Bands func(*stacclient.Item) ([]Band, error)
	Names []string
	Index *index.Index
	AOI   orb.Geometry
	Grid  *Target
	// Stop, when set, is when to stop reading dates: those not read by
	// then are left out and named (the composite is of the others).
	Stop time.Time
}

// CompositeDate is what one acquisition gave a composite.
type CompositeDate struct {
	Acquisition Acquisition
	// Items are the ids of the items that gave pixels; Clear how many
	// pixels of the area it showed clear with a value.
	Items []string
	Clear int
	// Read is the facts of its mosaic's read (bands, calibration, mask),
	// nil when it was not read.
	Read *Pixels
	// Err is why its read failed; NotRead says the time ran out first;
	// Missed that no item's raster reaches the area.
	Err     error
	NotRead bool
	Missed  bool
}

// Composite is, per pixel, the median of the clear observations of a
// period (numpy's nanmedian: the mean of the two middle values when their
// number is even), per layer, on one grid.
type Composite struct {
	Area
	Method string
	Names  []string
	// Values are per layer, NaN where no date shows the pixel clear.
	Values [][]float64
	// Count is, per pixel, how many dates show it clear with a value.
	Count []uint16
	Dates []CompositeDate
	// Requests and Bytes sum every date's reads.
	Requests, Bytes int
	release         func()
}

// Release gives back the composite's charge on the decode budget.
func (c *Composite) Release() {
	if c != nil && c.release != nil {
		c.release()
		c.release = nil
	}
}

// ObservationRange is the least, median and most clear observations per
// pixel of the area.
func (c *Composite) ObservationRange() (lo, med, hi int) {
	var counts []int
	for i, in := range c.Inside {
		if in {
			counts = append(counts, int(c.Count[i]))
		}
	}
	if len(counts) == 0 {
		return 0, 0, 0
	}
	slices.Sort(counts)
	m := len(counts) / 2
	med = counts[m]
	if len(counts)%2 == 0 {
		med = (counts[m-1] + counts[m]) / 2
	}
	return counts[0], med, counts[len(counts)-1]
}

// compositeDatesAtOnce bounds the dates of a composite read side by side.
const compositeDatesAtOnce = 2

// CompositeCost is what a composite of dates acquisitions and layers
// layers charges the decode budget per pixel of its grid (in the budget's
// units of 4 bytes), beyond its reads: the stack of observations (a
// float32 each) and the result. A caller plans the grid so that the
// composite fits (CompositePixels).
func CompositeCost(dates, layers int) float64 {
	return float64(dates*layers) + float64(layers)*2 + 0.75
}

// CompositePixels is the most pixels a composite's grid may hold for the
// stack to take at most half of budget units (the other half is for the
// reads that fill it); 0 budget bounds nothing.
func CompositePixels(budget int64, dates, layers int) int {
	if budget <= 0 {
		return math.MaxInt32
	}
	return int(float64(budget) / 2 / CompositeCost(dates, layers))
}

// Composite reads each acquisition's mosaic onto r.Grid (a few at a time,
// in SpreadOrder so that a composite stopped early is of dates spread over
// the period) and keeps, per pixel and layer, the median of the clear
// observations. The stack of observations is charged to the decode budget
// before any date is read.
func (e *Env) Composite(ctx context.Context, r CompositeRequest) (*Composite, error) {
	area, err := AreaOf(r.Grid, r.AOI)
	if err != nil {
		return nil, err
	}
	n := area.W * area.H
	nd, nl := len(r.Acquisitions), len(r.Names)
	kept := int64(nl)*int64(n)*2 + int64(n)*3/4 + 1
	stackCost := int64(nd) * int64(nl) * int64(n)
	releases, err := e.Decode.AcquireParts(ctx, kept, stackCost)
	if err != nil {
		return nil, err
	}
	defer releases[1]()
	out := &Composite{Area: area, Method: "median", Names: r.Names, Dates: make([]CompositeDate, nd), release: releases[0]}
	ok := false
	defer func() {
		if !ok {
			out.Release()
		}
	}()
	stack := make([][]float32, nl) // [layer][date*n + pixel]
	for l := range stack {
		stack[l] = make([]float32, nd*n)
		for i := range stack[l] {
			stack[l][i] = float32(math.NaN())
		}
	}
	var mu sync.Mutex
	sem := make(chan struct{}, compositeDatesAtOnce)
	var wg sync.WaitGroup
	stopCtx, cancel := ctx, func() {}
	if !r.Stop.IsZero() {
		stopCtx, cancel = context.WithDeadline(ctx, r.Stop)
	}
	defer cancel()
	for _, d := range SpreadOrder(nd) {
		out.Dates[d].Acquisition = r.Acquisitions[d]
		select {
		case sem <- struct{}{}:
		case <-stopCtx.Done():
			out.Dates[d].NotRead = true
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			res := e.compositeDate(stopCtx, r, d, n, stack)
			if stopCtx.Err() != nil && res.Err != nil {
				res = CompositeDate{Acquisition: res.Acquisition, NotRead: true}
			}
			mu.Lock()
			out.Dates[d] = res
			if res.Read != nil {
				out.Requests += res.Read.Requests
				out.Bytes += res.Read.Bytes
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	err = e.WithCPU(ctx, func() error {
		out.Values = make([][]float64, nl)
		out.Count = make([]uint16, n)
		buf := make([]float64, 0, nd)
		for l := range nl {
			vals := make([]float64, n)
			for i := range n {
				buf = buf[:0]
				for d := range nd {
					if v := stack[l][d*n+i]; !math.IsNaN(float64(v)) {
						buf = append(buf, float64(v))
					}
				}
				vals[i] = median(buf)
				if l == 0 {
					out.Count[i] = uint16(min(len(buf), math.MaxUint16))
				}
			}
			out.Values[l] = vals
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ok = true
	return out, nil
}

// compositeDate reads acquisition d's mosaic and puts its clear values in
// the stack's slot d.
func (e *Env) compositeDate(ctx context.Context, r CompositeRequest, d, n int, stack [][]float32) CompositeDate {
	acq := r.Acquisitions[d]
	res := CompositeDate{Acquisition: acq}
	m, err := e.Mosaic(ctx, MosaicRequest{Items: acq.Items, Bands: r.Bands, Mask: true, AOI: r.AOI, Grid: r.Grid, Index: r.Index})
	var pe *Error
	switch {
	case errors.As(err, &pe) && pe.Kind == ErrNoOverlap:
		res.Missed = true
		return res
	case err != nil:
		res.Err = err
		return res
	}
	defer m.Release()
	facts := *m.Pixels
	facts.Inside, facts.Values, facts.Valid, facts.Keep, facts.Outline = nil, nil, nil, nil, nil
	res.Read, res.Items = &facts, m.ItemIDs()
	px := make([]float64, len(m.Values))
	for i := range n {
		if !m.Inside[i] || !m.Keep[i] || !hasValue(m.Pixels, i) {
			continue
		}
		if r.Index != nil {
			for b := range m.Values {
				px[b] = m.Values[b][i]
			}
			v := r.Index.At(px)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			stack[0][d*n+i] = float32(v)
		} else {
			for l := range stack {
				stack[l][d*n+i] = float32(m.Values[l][i])
			}
		}
		res.Clear++
	}
	return res
}

// median is numpy's nanmedian of v (already without NaN): the middle
// value, or the mean of the two middle values; NaN for none. It sorts v.
func median(v []float64) float64 {
	switch len(v) {
	case 0:
		return math.NaN()
	case 1:
		return v[0]
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}
