package mapimage

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/paulmach/orb"

	"github.com/stacmcp/stac-mcp/tools/internal/footprint"
)

// countries110m is Natural Earth's 1:110m countries as TopoJSON, from the
// npm package world-atlas 2.0.2 (basemap/README.md: source and licences).
//
//go:embed basemap/countries-110m.json
var countries110m []byte

// World is the decoded basemap.
type World struct {
	Land    orb.MultiPolygon // filled
	Coast   []orb.LineString // the land outline
	Borders []orb.LineString // arcs shared by two countries

	// Longitudes are continuous (footprint.Continuous): a coast or border
	// crossing the antimeridian reaches past ±180 instead of jumping.
}

var (
	worldOnce sync.Once
	world     *World
	worldErr  error
)

// Basemap decodes the embedded basemap once (a few milliseconds) and
// returns it; the value is shared and must not be modified.
func Basemap() (*World, error) {
	worldOnce.Do(func() { world, worldErr = decodeTopology(countries110m) })
	return world, worldErr
}

// topology is the part of the TopoJSON format the basemap uses: quantized,
// delta-encoded arcs, and polygons as rings of arc indices (a negative
// index ~i is arc i reversed). See github.com/topojson/topojson-specification.
type topology struct {
	Type      string `json:"type"`
	Transform *struct {
		Scale     [2]float64 `json:"scale"`
		Translate [2]float64 `json:"translate"`
	} `json:"transform"`
	Arcs    [][][2]float64 `json:"arcs"`
	Objects map[string]struct {
		Geometries []topoGeometry `json:"geometries"`
	} `json:"objects"`
}

type topoGeometry struct {
	Type string          `json:"type"`
	Arcs json.RawMessage `json:"arcs"`
}

func decodeTopology(data []byte) (*World, error) {
	var t topology
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("basemap: %w", err)
	}
	if t.Type != "Topology" || t.Transform == nil {
		return nil, fmt.Errorf("basemap: not a quantized TopoJSON topology")
	}
	arcs := make([]orb.LineString, len(t.Arcs))
	for i, a := range t.Arcs {
		var x, y float64
		line := make(orb.LineString, len(a))
		for j, d := range a {
			x, y = x+d[0], y+d[1]
			line[j] = orb.Point{x*t.Transform.Scale[0] + t.Transform.Translate[0], y*t.Transform.Scale[1] + t.Transform.Translate[1]}
		}
		arcs[i] = line
	}
	w := &World{}

	land, ok := t.Objects["land"]
	if !ok {
		return nil, fmt.Errorf("basemap: no land object")
	}
	for _, g := range land.Geometries {
		polys, err := polygonsOf(g, arcs)
		if err != nil {
			return nil, err
		}
		w.Land = append(w.Land, polys...)
	}
	for _, p := range w.Land {
		for _, r := range p {
			w.Coast = append(w.Coast, withoutPoleEdge(orb.LineString(r))...)
		}
	}

	// An arc used by two countries is a border between them; one used once
	// is on the coast, already drawn from the land outline.
	users := make([]int, len(arcs))
	countries, ok := t.Objects["countries"]
	if !ok {
		return nil, fmt.Errorf("basemap: no countries object")
	}
	for _, g := range countries.Geometries {
		seen := map[int]bool{}
		if err := eachArc(g, func(i int) { seen[i] = true }); err != nil {
			return nil, err
		}
		for i := range seen {
			if i >= 0 && i < len(arcs) {
				users[i]++
			}
		}
	}
	for i, n := range users {
		if n >= 2 {
			w.Borders = append(w.Borders, footprint.Continuous(arcs[i]))
		}
	}
	return w, nil
}

// ringsOf decodes a geometry's arcs member: [][]int for a Polygon,
// [][][]int for a MultiPolygon.
func ringsOf(g topoGeometry) ([][][]int, error) {
	switch g.Type {
	case "Polygon":
		var rings [][]int
		if err := json.Unmarshal(g.Arcs, &rings); err != nil {
			return nil, fmt.Errorf("basemap: polygon arcs: %w", err)
		}
		return [][][]int{rings}, nil
	case "MultiPolygon":
		var polys [][][]int
		if err := json.Unmarshal(g.Arcs, &polys); err != nil {
			return nil, fmt.Errorf("basemap: multipolygon arcs: %w", err)
		}
		return polys, nil
	}
	return nil, nil // other geometry types hold no area
}

func eachArc(g topoGeometry, f func(int)) error {
	polys, err := ringsOf(g)
	for _, p := range polys {
		for _, r := range p {
			for _, i := range r {
				if i < 0 {
					i = ^i
				}
				f(i)
			}
		}
	}
	return err
}

func polygonsOf(g topoGeometry, arcs []orb.LineString) (orb.MultiPolygon, error) {
	polys, err := ringsOf(g)
	if err != nil {
		return nil, err
	}
	out := make(orb.MultiPolygon, 0, len(polys))
	for _, p := range polys {
		poly := make(orb.Polygon, 0, len(p))
		for _, ringArcs := range p {
			var ring orb.Ring
			for k, i := range ringArcs {
				idx := i
				if idx < 0 {
					idx = ^idx
				}
				if idx >= len(arcs) {
					return nil, fmt.Errorf("basemap: arc %d of %d", idx, len(arcs))
				}
				a := arcs[idx]
				if i < 0 {
					a = a.Clone()
					a.Reverse()
				}
				if k > 0 && len(a) > 0 {
					a = a[1:] // the first point repeats the previous arc's last
				}
				ring = append(ring, a...)
			}
			if len(ring) >= 4 {
				poly = append(poly, closeAtPole(orb.Ring(footprint.Continuous(orb.LineString(ring)))))
			}
		}
		if len(poly) > 0 {
			out = append(out, poly)
		}
	}
	return out, nil
}

// closeAtPole closes a ring that goes round a pole (Antarctica's coast, in
// a spherical topology) along that pole's latitude, so it can be filled as
// a polygon in longitude/latitude. Other rings are returned as they are.
func closeAtPole(r orb.Ring) orb.Ring {
	if !footprint.Winds(orb.LineString(r)) {
		return r
	}
	pole := -90.0
	if r.Bound().Center()[1] > 0 {
		pole = 90
	}
	first, last := r[0], r[len(r)-1]
	return append(r, orb.Point{last[0], pole}, orb.Point{first[0], pole}, first)
}

// withoutPoleEdge splits a ring where it runs along ±90° latitude: those
// segments close a polar ring (closeAtPole), they are not a coast.
func withoutPoleEdge(l orb.LineString) []orb.LineString {
	var out []orb.LineString
	var cur orb.LineString
	for i := 1; i < len(l); i++ {
		if math.Abs(l[i-1][1]) == 90 || math.Abs(l[i][1]) == 90 {
			if len(cur) > 1 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		if len(cur) == 0 {
			cur = orb.LineString{l[i-1]}
		}
		cur = append(cur, l[i])
	}
	if len(cur) > 1 {
		out = append(out, cur)
	}
	return out
}
