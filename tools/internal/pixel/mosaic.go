package pixel

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/paulmach/orb"
	"golang.org/x/sync/errgroup"

	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/raster/index"
)

// MosaicRequest is one acquisition's items over an area, to be read onto
// one grid.
type MosaicRequest struct {
	Items []*stacclient.Item
	// Bands picks an item's bands: the same roles for every item, in the
	// same order (an index's in the order of its roles).
	Bands func(*stacclient.Item) ([]Band, error)
	Mask  bool
	AOI   orb.Geometry
	Grid  *Target
	// Index, when set, is what the bands are read for (the calibration
	// checks its values).
	Index *index.Index
}

// MosaicItem is what one item gave a mosaic.
type MosaicItem struct {
	Item *stacclient.Item
	// Pixels is how many pixels of the area the mosaic took from it;
	// Clear how many of the area it shows clear with a value, ClearShare
	// that over the area's pixels (what ranks it).
	Pixels, Clear int
	ClearShare    float64
	// Read is its read's facts (bands, calibration, mask, requests), its
	// pixel arrays dropped; nil when Missed.
	Read *Pixels
	// Missed: its raster does not reach the area (its footprint did).
	Missed bool
}

// Mosaic is an acquisition over the area: each pixel from the clearest
// item that has a value there. Its Pixels are on the target grid; their
// Bands, Calibration and Mask are those of the item that gave the most
// pixels (each item's are in Items), Requests and Bytes the sums.
type Mosaic struct {
	*Pixels
	Items []MosaicItem
	// Source is, per pixel, the index in Items of the item it came from,
	// -1 where none has a value.
	Source []int16
}

// mosaicItemsAtOnce bounds the items of one mosaic read side by side
// (each sends its own bands' ranges side by side).
const mosaicItemsAtOnce = 2

// Mosaic reads the items onto r.Grid and keeps, per pixel, the value of
// the clearest item that has one: an item showing the pixel clear wins
// over one showing it cloudy; among those alike, the item with the larger
// clear share of the area, then the one first in Items. Pixels no item
// shows clear keep a value (so a picture shows the cloud) but are not
// kept. Every item's read is charged to the decode budget, and the mosaic
// keeps one read's charge until Release.
func (e *Env) Mosaic(ctx context.Context, r MosaicRequest) (*Mosaic, error) {
	if len(r.Items) == 0 {
		return nil, &Error{Kind: ErrNoOverlap, Detail: "no item"}
	}
	if len(r.Items) > 1<<15-1 {
		return nil, &Error{Kind: ErrTooLarge, Item: r.Items[0].ID, Detail: "too many items in one acquisition"}
	}
	m := &Mosaic{Items: make([]MosaicItem, len(r.Items))}
	var mu sync.Mutex
	var merged *Pixels
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(mosaicItemsAtOnce)
	for k, item := range r.Items {
		m.Items[k].Item = item
		g.Go(func() error {
			bands, err := r.Bands(item)
			if err != nil {
				return err
			}
			p, err := e.Read(gctx, Request{Item: item, Bands: bands, Mask: r.Mask, AOI: r.AOI, Grid: r.Grid, Index: r.Index, Hold: true})
			var pe *Error
			if errors.As(err, &pe) && pe.Kind == ErrNoOverlap {
				mu.Lock()
				m.Items[k].Missed = true
				mu.Unlock()
				return nil
			}
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			clear := 0
			for i := range p.Keep {
				if p.Keep[i] && hasValue(p, i) {
					clear++
				}
			}
			it := &m.Items[k]
			it.Clear = clear
			if p.AOIPixels > 0 {
				it.ClearShare = float64(clear) / float64(p.AOIPixels)
			}
			facts := *p
			facts.Inside, facts.Values, facts.Valid, facts.Keep, facts.Outline, facts.release = nil, nil, nil, nil, nil, nil
			it.Read = &facts
			if merged == nil {
				merged = p
				m.Source = make([]int16, p.W*p.H)
				for i := range m.Source {
					m.Source[i] = -1
					if p.Inside[i] && hasValue(p, i) {
						m.Source[i] = int16(k)
					}
				}
				return nil
			}
			m.merge(merged, p, k)
			p.Release()
			return nil
		})
	}
	err := g.Wait()
	if err != nil {
		merged.Release()
		return nil, err
	}
	if merged == nil {
		return nil, &Error{Kind: ErrNoOverlap, Item: r.Items[0].ID, Detail: "no item's raster reaches the area"}
	}
	m.Pixels = merged
	m.Requests, m.Bytes = 0, 0
	best := -1
	for k := range m.Items {
		m.Items[k].Pixels = 0
	}
	for i, s := range m.Source {
		if s >= 0 && merged.Inside[i] {
			m.Items[s].Pixels++
		}
	}
	for k, it := range m.Items {
		if it.Read == nil {
			continue
		}
		m.Requests += it.Read.Requests
		m.Bytes += it.Read.Bytes
		if best < 0 || it.Pixels > m.Items[best].Pixels {
			best = k
		}
	}
	top := m.Items[best].Read
	m.Bands, m.Calibration, m.Mask, m.NoMask = top.Bands, top.Calibration, top.Mask, top.NoMask
	return m, nil
}

// hasValue says whether every band read has a value at pixel i.
func hasValue(p *Pixels, i int) bool {
	for _, v := range p.Valid {
		if !v[i] {
			return false
		}
	}
	return len(p.Valid) > 0
}

// merge puts item k's pixels p into the mosaic dst where they rank above
// what dst holds (Mosaic's rule; k's clear share is already in Items).
func (m *Mosaic) merge(dst, p *Pixels, k int) {
	for i := range dst.Inside {
		if !p.Inside[i] || !hasValue(p, i) {
			continue
		}
		cur := m.Source[i]
		if cur >= 0 && !m.better(k, p.Keep[i], int(cur), dst.Keep[i]) {
			continue
		}
		for b := range dst.Values {
			dst.Values[b][i], dst.Valid[b][i] = p.Values[b][i], p.Valid[b][i]
		}
		dst.Keep[i] = p.Keep[i]
		m.Source[i] = int16(k)
	}
}

// better says whether item a (clear at the pixel or not) ranks above
// item b there.
func (m *Mosaic) better(a int, aClear bool, b int, bClear bool) bool {
	if aClear != bClear {
		return aClear
	}
	sa, sb := m.Items[a].ClearShare, m.Items[b].ClearShare
	if sa != sb {
		return sa > sb
	}
	return a < b
}

// ItemIDs are the ids of the items that gave pixels, in Items' order.
func (m *Mosaic) ItemIDs() []string {
	var out []string
	for _, it := range m.Items {
		if it.Pixels > 0 {
			out = append(out, it.Item.ID)
		}
	}
	return out
}

// MosaicIndex reads the bands of ix for every item and computes the index
// over the mosaic (each pixel's bands from one item), with its
// statistics over the whole area.
func (e *Env) MosaicIndex(ctx context.Context, r MosaicRequest, ix index.Index) (*Mosaic, []float64, Stats, error) {
	r.Bands = func(item *stacclient.Item) ([]Band, error) { return IndexBands(item, ix) }
	r.Mask, r.Index = true, &ix
	m, err := e.Mosaic(ctx, r)
	if err != nil {
		return nil, nil, Stats{}, err
	}
	// The index's values stay with the mosaic; the statistics' copies of
	// the area's values (and their sorted copy) are scratch.
	n := int64(m.W * m.H)
	parts, err := e.Decode.AcquireParts(ctx, n*2, n*4)
	if err != nil {
		m.Release()
		return nil, nil, Stats{}, err
	}
	defer parts[1]()
	held := m.release
	m.release = func() {
		parts[0]()
		if held != nil {
			held()
		}
	}
	values, st, err := e.indexOf(ctx, m.Pixels, ix)
	if err != nil {
		m.Release()
		return nil, nil, Stats{}, err
	}
	return m, values, st, nil
}

// indexOf computes ix over p's kept pixels (NaN elsewhere) and its
// statistics, under a CPU slot.
func (e *Env) indexOf(ctx context.Context, p *Pixels, ix index.Index) ([]float64, Stats, error) {
	var values []float64
	var st Stats
	err := e.WithCPU(ctx, func() error {
		keep := p.Keep
		for _, v := range p.Valid {
			keep = AndKeep(keep, v)
		}
		var err error
		if values, err = ix.Compute(p.Values, keep); err != nil {
			return err
		}
		valid := make([]bool, len(values))
		for i := range valid {
			valid[i] = p.Inside[i] && hasValue(p, i)
		}
		st = p.Stats(ix.Name, values, valid)
		return nil
	})
	return values, st, err
}

// ItemList is ids joined for a text: "a, b and c".
func ItemList(ids []string) string {
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return ids[0]
	}
	return strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
}
