package mapimage

import (
	"testing"

	"github.com/paulmach/orb"
)

func TestBasemapDecodes(t *testing.T) {
	w, err := Basemap()
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Land) < 100 || len(w.Coast) < 100 || len(w.Borders) < 200 {
		t.Fatalf("basemap has %d land polygons, %d coast lines, %d borders: too few for Natural Earth 110m", len(w.Land), len(w.Coast), len(w.Borders))
	}
	// Longitudes are continuous: no edge jumps across the map.
	for _, l := range append(append([]orb.LineString{}, w.Coast...), w.Borders...) {
		for i := 1; i < len(l); i++ {
			if d := l[i][0] - l[i-1][0]; d > 180 || d < -180 {
				t.Fatalf("an edge jumps %.1f° of longitude", d)
			}
		}
	}
	// Antarctica is closed along the South Pole, and no coast runs along it.
	var south *orb.Polygon
	for i, p := range w.Land {
		if p.Bound().Min[1] == -90 {
			south = &w.Land[i]
		}
	}
	if south == nil || (*south).Bound().Max[0]-(*south).Bound().Min[0] < 359 {
		t.Fatalf("no land polygon closed at 90°S spanning all longitudes (Antarctica)")
	}
	for _, l := range w.Coast {
		for _, q := range l {
			if q[1] < -85.7 {
				t.Fatalf("a coastline reaches %.2f°S: the polar closing edge was drawn as coast", -q[1])
			}
		}
	}
}

func TestNiceDistanceAndDegrees(t *testing.T) {
	for km, want := range map[float64]string{0.37: "200 m", 3.9: "2 km", 48: "20 km", 51: "50 km", 730: "500 km"} {
		if _, got := niceDistance(km); got != want {
			t.Errorf("niceDistance(%g) = %q, want %q", km, got, want)
		}
	}
	for _, c := range []struct {
		v        float64
		pos, neg string
		step     float64
		want     string
	}{{-73.25, "E", "W", 0.05, "73.25°W"}, {190, "E", "W", 5, "170°W"}, {180, "E", "W", 10, "180°"}, {-4.5, "N", "S", 0.5, "4.5°S"}, {0, "N", "S", 1, "0°"}} {
		if got := degrees(c.v, c.pos, c.neg, c.step); got != c.want {
			t.Errorf("degrees(%g) = %q, want %q", c.v, got, c.want)
		}
	}
}
