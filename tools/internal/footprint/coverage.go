package footprint

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/paulmach/orb"
	"github.com/peterstace/simplefeatures/geom"
	"github.com/peterstace/simplefeatures/rtree"
	"golang.org/x/sync/errgroup"
)

// Item is one footprint to measure against an area of interest.
type Item struct {
	ID         string
	Shape      Shape
	Time       time.Time // zero when the item has no usable datetime
	CloudCover *float64  // eo:cloud_cover in percent, when the item has it
}

// Options shape a coverage report.
type Options struct {
	// WindowDays groups items into consecutive windows of this many days
	// (UTC), starting at the earliest item's day; 0 or 1 is one per day.
	WindowDays int
	// TargetPercent is where the greedy selection stops: the share of the
	// area of interest it tries to cover (0 means 95). When the items
	// together cover less, the selection stops at what they cover.
	TargetPercent float64
}

// Report is how much of an area of interest a set of footprints covers.
// Percentages are of the area of interest, measured on the ellipsoid.
type Report struct {
	AreaKm2        float64
	CoveredKm2     float64
	CoveredPercent float64
	// UncoveredBBox bounds the part left uncovered (a STAC bbox; west >
	// east when it crosses the antimeridian), leaving out slivers under
	// SliverPercent of the area (gaps of a few metres between adjacent
	// tiles); nil when nothing else is left.
	UncoveredBBox []float64
	Windows       []Window
	// Greedy is the smallest set found (greedily: each step takes the item
	// that adds the most uncovered area) reaching the target share.
	Greedy        []Pick
	GreedyTarget  float64
	GreedyPercent float64
	// CloudWeightedPercent is the expected clear share of the area: every
	// point counts once, through its least cloudy covering item, weighted
	// by that item's clear fraction (1 − eo:cloud_cover/100), as if each
	// item's cloud were spread evenly over its footprint. Nil when no item
	// that reaches the area has eo:cloud_cover.
	CloudWeightedPercent *float64
	// CloudSources are the items behind CloudWeightedPercent: each point's
	// least cloudy covering item, with the share of the area it supplies,
	// largest share first (items a clearer one hides everywhere are not
	// listed).
	CloudSources []CloudSource
	CloudItems   int // items in the cloud-weighted figure
	Touching     int // items whose footprint meets the area
	Outside      []string
	// BBoxFallback lists items measured by their bbox because their
	// geometry was not a valid polygon.
	BBoxFallback []string
}

// Window is the coverage of the items dated in one window of days.
type Window struct {
	Start, End     time.Time // End is the last day (inclusive)
	Items          int
	CoveredPercent float64
}

// CloudSource is one item behind the cloud-weighted figure.
type CloudSource struct {
	ID         string
	CloudCover float64 // eo:cloud_cover, percent
	Percent    float64 // share of the area it is the least cloudy item over
}

// Pick is one step of the greedy selection.
type Pick struct {
	ID                string
	AddedPercent      float64
	CumulativePercent float64
}

// clipped is an item's footprint inside the area.
type clipped struct {
	item *Item
	geom geom.Geometry
	km2  float64
}

// Measure computes the coverage of area by items. Items must already be
// shapes (Parse refuses the rest; an invalid polygon is measured by its
// bbox and listed); area must be a valid shape with a positive area
// (Shape.Valid). It stops with ctx's error when ctx ends: the work is
// CPU-bound and must not outlive the tool call.
func Measure(ctx context.Context, area Shape, items []Item, opts Options) (*Report, error) {
	if opts.WindowDays <= 0 {
		opts.WindowDays = 1
	}
	if opts.TargetPercent <= 0 || opts.TargetPercent > 100 {
		opts.TargetPercent = 95
	}
	shapes := []Shape{area}
	for i := range items {
		shapes = append(shapes, items[i].Shape)
	}
	if err := checkVertices(fmt.Sprintf("the area of interest and %d footprint(s)", len(items)), shapes...); err != nil {
		return nil, err
	}
	prepared, err := NewArea(area)
	if err != nil {
		return nil, fmt.Errorf("the area of interest: %w", err)
	}
	aoi := prepared.geom
	r := &Report{AreaKm2: prepared.km2, Windows: []Window{}, Greedy: []Pick{}, Outside: []string{}, BBoxFallback: []string{}}
	percent := func(km2 float64) float64 { return min(100, 100*km2/r.AreaKm2) }

	var clips []clipped
	for i := range items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		it := &items[i]
		g, fallback, err := prepared.clip(it.Shape)
		if err != nil {
			return nil, fmt.Errorf("item %s: %w", it.ID, err)
		}
		if fallback {
			r.BBoxFallback = append(r.BBoxFallback, it.ID)
		}
		km2 := AreaKm2(g)
		if km2 <= 0 {
			r.Outside = append(r.Outside, it.ID)
			continue
		}
		clips = append(clips, clipped{item: it, geom: g, km2: km2})
	}
	r.Touching = len(clips)

	union, err := unionOf(clips)
	if err != nil {
		return nil, err
	}
	r.CoveredKm2 = AreaKm2(union)
	r.CoveredPercent = percent(r.CoveredKm2)
	left, err := geom.Difference(aoi, union)
	if err != nil {
		return nil, fmt.Errorf("subtracting the covered part: %w", err)
	}
	r.UncoveredBBox = uncoveredBBox(left, r.AreaKm2)

	if r.Windows, err = windows(ctx, clips, opts.WindowDays, percent); err != nil {
		return nil, err
	}
	index := newNeighbours(clips)
	r.GreedyTarget = opts.TargetPercent
	if r.Greedy, err = greedy(ctx, index, min(opts.TargetPercent, r.CoveredPercent), r.AreaKm2); err != nil {
		return nil, err
	}
	if n := len(r.Greedy); n > 0 {
		r.GreedyPercent = r.Greedy[n-1].CumulativePercent
	}
	if err := r.cloudWeighted(ctx, index); err != nil {
		return nil, err
	}
	return r, nil
}

// SliverPercent is the share of the area below which an uncovered piece is
// left out of Report.UncoveredBBox.
const SliverPercent = 0.05

// uncoveredBBox bounds the pieces of left that are not slivers.
func uncoveredBBox(left geom.Geometry, areaKm2 float64) []float64 {
	var env geom.Envelope
	for _, part := range left.Dump() {
		if AreaKm2(part) >= SliverPercent/100*areaKm2 {
			env = env.ExpandToIncludeEnvelope(part.Envelope())
		}
	}
	lo, hi, ok := env.MinMaxXYs()
	if !ok {
		return nil
	}
	return BBox(orb.Bound{Min: orb.Point{lo.X, lo.Y}, Max: orb.Point{hi.X, hi.Y}})
}

func shiftPolygon(p orb.Polygon, dx float64) orb.Polygon {
	q := make(orb.Polygon, len(p))
	for i, r := range p {
		q[i] = shiftRing(r, dx)
	}
	return q
}

// toGeom converts polygons to one simplefeatures geometry (their union).
// A polygon that is not valid (a self-intersecting ring, say) is replaced
// by its bounding rectangle, and fallback says so.
func toGeom(mp orb.MultiPolygon) (g geom.Geometry, fallback bool, err error) {
	polys := make([]geom.Geometry, 0, len(mp))
	for _, p := range mp {
		sp := sfPolygon(p)
		if sp.Validate() != nil {
			sp, fallback = sfPolygon(p.Bound().ToPolygon()), true
		}
		polys = append(polys, sp.AsGeometry())
	}
	if len(polys) == 1 {
		return polys[0], fallback, nil
	}
	g, err = geom.UnionMany(polys)
	if err != nil {
		return geom.Geometry{}, false, fmt.Errorf("joining polygons: %w", err)
	}
	return g, fallback, nil
}

func sfPolygon(p orb.Polygon) geom.Polygon {
	rings := make([]geom.LineString, len(p))
	for i, r := range p {
		flat := make([]float64, 0, 2*len(r))
		for _, pt := range r {
			flat = append(flat, pt[0], pt[1])
		}
		rings[i] = geom.NewLineString(geom.NewSequence(flat, geom.DimXY))
	}
	return geom.NewPolygon(rings)
}

func unionOf(clips []clipped) (geom.Geometry, error) {
	gs := make([]geom.Geometry, len(clips))
	for i, c := range clips {
		gs[i] = c.geom
	}
	u, err := geom.UnionMany(gs)
	if err != nil {
		return geom.Geometry{}, fmt.Errorf("union of the footprints: %w", err)
	}
	return u, nil
}

// windows groups the clipped footprints by day window and measures each.
func windows(ctx context.Context, clips []clipped, days int, percent func(float64) float64) ([]Window, error) {
	byStart := map[time.Time][]clipped{}
	var first time.Time
	for _, c := range clips {
		if c.item.Time.IsZero() {
			continue
		}
		day := c.item.Time.UTC().Truncate(24 * time.Hour)
		if first.IsZero() || day.Before(first) {
			first = day
		}
	}
	for _, c := range clips {
		if c.item.Time.IsZero() {
			continue
		}
		day := c.item.Time.UTC().Truncate(24 * time.Hour)
		n := int(day.Sub(first).Hours()/24) / days
		start := first.AddDate(0, 0, n*days)
		byStart[start] = append(byStart[start], c)
	}
	out := make([]Window, 0, len(byStart))
	for start, group := range byStart {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		u, err := unionOf(group)
		if err != nil {
			return nil, err
		}
		out = append(out, Window{Start: start, End: start.AddDate(0, 0, days-1), Items: len(group), CoveredPercent: percent(AreaKm2(u))})
	}
	slices.SortFunc(out, func(a, b Window) int { return a.Start.Compare(b.Start) })
	return out, nil
}

// TiePercent is how close, in points of the area of interest, two gains of
// the greedy selection must be to count as a tie, broken by the lower
// eo:cloud_cover (items without it last), then the id: of two scenes
// covering the whole area, the clear one is recommended, not the one with
// the smaller id.
const TiePercent = 1.0

// greedy picks items one at a time, each the one adding the most area not
// yet covered (of those within TiePercent of the most, the least cloudy),
// until targetPercent is reached. Gains only shrink as the
// covered part grows, so a candidate's last gain bounds its next: only the
// candidate on top of the heap is re-measured ("lazy greedy"), and against
// the picked footprints it overlaps only, so each step stays a small,
// local overlay however many items there are.
func greedy(ctx context.Context, n *neighbours, targetPercent, aoiKm2 float64) ([]Pick, error) {
	picks := []Pick{}
	eps := 1e-9 * aoiKm2
	h := make(gainHeap, len(n.clips))
	for i := range n.clips {
		h[i] = &candidate{index: i, id: n.clips[i].item.ID, gain: n.clips[i].km2}
	}
	heap.Init(&h)
	picked := make([]bool, len(n.clips))
	covered, round := 0.0, 0
	// Gains are measured piecewise, so their sum can fall short of the
	// union's area by rounding: a target within 1e-4 points is reached.
	for h.Len() > 0 && 100*covered/aoiKm2 < targetPercent-1e-4 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		top := h[0]
		if top.round != round {
			gain, err := n.addedArea(top.index, func(j int) bool { return picked[j] })
			if err != nil {
				return nil, fmt.Errorf("greedy selection: %w", err)
			}
			top.gain, top.round = gain, round
			if top.gain <= eps {
				heap.Pop(&h)
			} else {
				heap.Fix(&h, 0)
			}
			continue
		}
		heap.Pop(&h)
		best, err := clearestTie(n, &h, top, round, TiePercent/100*aoiKm2, func(j int) bool { return picked[j] })
		if err != nil {
			return nil, err
		}
		picked[best.index] = true
		covered += best.gain
		round++
		picks = append(picks, Pick{ID: best.id, AddedPercent: 100 * best.gain / aoiKm2, CumulativePercent: min(100, 100*covered/aoiKm2)})
	}
	return picks, nil
}

// clearestTie takes top (popped, its gain current) and the candidates on h
// whose gain is within tie of it, and returns the least cloudy of them; the
// others go back on h with their gains measured this round. A candidate's
// stale gain bounds its current one, so only those whose stale gain is
// within tie are measured.
func clearestTie(n *neighbours, h *gainHeap, top *candidate, round int, tie float64, picked func(int) bool) (*candidate, error) {
	ties := []*candidate{top}
	var back []*candidate
	for h.Len() > 0 && (*h)[0].gain >= top.gain-tie {
		c := heap.Pop(h).(*candidate)
		if c.round != round {
			gain, err := n.addedArea(c.index, picked)
			if err != nil {
				return nil, fmt.Errorf("greedy selection: %w", err)
			}
			c.gain, c.round = gain, round
		}
		if c.gain >= top.gain-tie {
			ties = append(ties, c)
		} else {
			back = append(back, c)
		}
	}
	cloud := func(c *candidate) float64 {
		if cc := n.clips[c.index].item.CloudCover; cc != nil {
			return *cc
		}
		return math.Inf(1)
	}
	best := slices.MinFunc(ties, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(cloud(a), cloud(b)), cmp.Compare(b.gain, a.gain), cmp.Compare(a.id, b.id))
	})
	for _, c := range append(back, ties...) {
		if c != best {
			heap.Push(h, c)
		}
	}
	return best, nil
}

// neighbours indexes clipped footprints by their envelopes.
type neighbours struct {
	clips []clipped
	tree  *rtree.RTree
}

func newNeighbours(clips []clipped) *neighbours {
	items := make([]rtree.BulkItem, 0, len(clips))
	for i, c := range clips {
		if box, ok := c.geom.Envelope().AsBox(); ok {
			items = append(items, rtree.BulkItem{Box: box, RecordID: i})
		}
	}
	return &neighbours{clips: clips, tree: rtree.BulkLoad(items)}
}

// addedArea is the area of clip i outside the clips j that overlap it and
// for which counted(j) is true: what i adds to them.
func (n *neighbours) addedArea(i int, counted func(j int) bool) (float64, error) {
	c := n.clips[i]
	box, _ := c.geom.Envelope().AsBox()
	var others []geom.Geometry
	_ = n.tree.RangeSearch(box, func(j int) error {
		if j != i && counted(j) {
			others = append(others, n.clips[j].geom)
		}
		return nil
	})
	if len(others) == 0 {
		return c.km2, nil
	}
	cover, err := geom.UnionMany(others)
	if err != nil {
		return 0, err
	}
	rest, err := geom.Difference(c.geom, cover)
	if err != nil {
		return 0, err
	}
	return AreaKm2(rest), nil
}

type candidate struct {
	index int
	id    string
	gain  float64
	round int // the pick count when gain was measured
}

// gainHeap is a max-heap of candidates by gain (ties: item id, so the
// selection does not depend on the order items arrived in).
type gainHeap []*candidate

func (h gainHeap) Len() int { return len(h) }
func (h gainHeap) Less(i, j int) bool {
	if h[i].gain != h[j].gain {
		return h[i].gain > h[j].gain
	}
	return h[i].id < h[j].id
}
func (h gainHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *gainHeap) Push(x any)   { *h = append(*h, x.(*candidate)) }
func (h *gainHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// cloudWeighted fills CloudWeightedPercent: items from the clearest up,
// each credited with the area no clearer item covers (measured against the
// overlapping clearer items only), times its clear fraction.
func (r *Report) cloudWeighted(ctx context.Context, n *neighbours) error {
	var order []int
	for i, c := range n.clips {
		if c.item.CloudCover != nil {
			order = append(order, i)
		}
	}
	r.CloudItems = len(order)
	if len(order) == 0 {
		return nil
	}
	cloud := func(i int) float64 { return *n.clips[i].item.CloudCover }
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(cloud(a), cloud(b)), cmp.Compare(n.clips[a].item.ID, n.clips[b].item.ID))
	})
	rank := make([]int, len(n.clips))
	for i := range rank {
		rank[i] = -1
	}
	for k, i := range order {
		rank[i] = k
	}
	// Each item's added area depends only on the clearer footprints, not on
	// the other results, so they are measured in parallel and summed in order.
	added := make([]float64, len(order))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for k, i := range order {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			a, err := n.addedArea(i, func(j int) bool { return rank[j] >= 0 && rank[j] < k })
			added[k] = a
			return err
		})
	}
	if err := g.Wait(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("cloud-weighted coverage: %w", err)
	}
	weighted := 0.0
	for k, i := range order {
		weighted += added[k] * (1 - min(max(cloud(i), 0), 100)/100)
		if added[k] > 1e-9*r.AreaKm2 {
			r.CloudSources = append(r.CloudSources, CloudSource{ID: n.clips[i].item.ID, CloudCover: cloud(i), Percent: min(100, 100*added[k]/r.AreaKm2)})
		}
	}
	slices.SortStableFunc(r.CloudSources, func(a, b CloudSource) int { return cmp.Compare(b.Percent, a.Percent) })
	p := min(100, 100*weighted/r.AreaKm2)
	r.CloudWeightedPercent = &p
	return nil
}
