package pixel

import (
	"slices"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient"
)

// Acquisition is the items one pass of a satellite made over an area: a
// catalog publishes a pass cut into tiles (Sentinel-2's MGRS tiles,
// Landsat's WRS scenes), and an area across a tile edge needs several.
//
// The rule (AcquisitionRule): items of the same collection, the same
// platform and the same UTC day are one acquisition. A satellite passes
// over a place at most once a day (Sentinel-2's and Landsat's orbits repeat
// every 10 and 16 days; neighbouring tracks of one day are ~2,800 km apart
// at the equator), so the items of one day are one pass; two satellites (or
// a catalog's two processings of one pass, in two collections) are kept
// apart, since their pixels differ. Items without a platform are grouped by
// collection and day.
type Acquisition struct {
	// Day is the UTC day (00:00 UTC).
	Day        time.Time
	Collection string
	Platform   string
	// Items are the items, ordered by id.
	Items []*stacclient.Item
	// Start and End are the earliest and latest item datetimes.
	Start, End time.Time
}

// AcquisitionRule is the grouping rule in words, for the results.
const AcquisitionRule = "an acquisition is the items of one collection, one platform and one UTC day, mosaicked"

// Key names the acquisition: "2024-06-01 sentinel-2a (sentinel-2-l2a)".
func (a Acquisition) Key() string {
	s := a.Day.Format(time.DateOnly)
	if a.Platform != "" {
		s += " " + a.Platform
	}
	return s + " (" + a.Collection + ")"
}

// IDs are the ids of its items.
func (a Acquisition) IDs() []string {
	out := make([]string, len(a.Items))
	for i, it := range a.Items {
		out[i] = it.ID
	}
	return out
}

// Acquisitions groups items into acquisitions (AcquisitionRule), in time
// order (then collection, then platform). Items without a datetime are
// returned apart: they belong to no day.
func Acquisitions(items []*stacclient.Item) (acqs []Acquisition, undated []*stacclient.Item) {
	type key struct {
		day            time.Time
		coll, platform string
	}
	index := map[key]int{}
	for _, it := range items {
		t, ok := it.Datetime()
		if !ok {
			undated = append(undated, it)
			continue
		}
		t = t.UTC()
		platform, _ := it.PropertyString("platform")
		k := key{day: time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), coll: it.Collection, platform: strings.ToLower(strings.TrimSpace(platform))}
		i, seen := index[k]
		if !seen {
			i = len(acqs)
			index[k] = i
			acqs = append(acqs, Acquisition{Day: k.day, Collection: k.coll, Platform: k.platform, Start: t, End: t})
		}
		a := &acqs[i]
		if slices.ContainsFunc(a.Items, func(o *stacclient.Item) bool { return o.ID == it.ID }) {
			continue // the same item twice (a catalog's overlapping pages)
		}
		a.Items = append(a.Items, it)
		if t.Before(a.Start) {
			a.Start = t
		}
		if t.After(a.End) {
			a.End = t
		}
	}
	for i := range acqs {
		slices.SortFunc(acqs[i].Items, func(x, y *stacclient.Item) int { return strings.Compare(x.ID, y.ID) })
	}
	slices.SortStableFunc(acqs, func(x, y Acquisition) int {
		if c := x.Day.Compare(y.Day); c != 0 {
			return c
		}
		if c := strings.Compare(x.Collection, y.Collection); c != 0 {
			return c
		}
		return strings.Compare(x.Platform, y.Platform)
	})
	return acqs, undated
}

// SpreadOrder is an order of 0..n-1 whose every prefix spreads evenly over
// the range: the first and the last, then the middle, then the middles of
// the halves, and so on (coarse to fine). Reading dates in this order, a
// call that can read only k of n dates returns an even sample of the
// period, and the calls after it fill in between.
func SpreadOrder(n int) []int {
	if n <= 0 {
		return nil
	}
	out := make([]int, 0, n)
	seen := make([]bool, n)
	add := func(i int) {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	add(0)
	add(n - 1)
	// Breadth first over the gaps between the chosen, widest first.
	type gap struct{ lo, hi int }
	gaps := []gap{{0, n - 1}}
	for len(gaps) > 0 {
		var next []gap
		for _, g := range gaps {
			if g.hi-g.lo < 2 {
				continue
			}
			m := (g.lo + g.hi) / 2
			add(m)
			next = append(next, gap{g.lo, m}, gap{m, g.hi})
		}
		gaps = next
	}
	return out
}

// EvenSample picks k of n indexes evenly spread over 0..n-1, first and
// last included, in increasing order (all of them when k >= n).
func EvenSample(n, k int) []int {
	if k >= n {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	if k <= 0 {
		return nil
	}
	if k == 1 {
		return []int{0}
	}
	out := make([]int, 0, k)
	for j := range k {
		i := int(float64(j)*float64(n-1)/float64(k-1) + 0.5)
		if len(out) == 0 || i > out[len(out)-1] {
			out = append(out, i)
		}
	}
	return out
}
