package pixel

import (
	"fmt"
	"math"
)

// Change is the difference of one layer between two dates or periods
// (later − earlier), per pixel of an area, where both show the pixel
// clear with a value; the pixels clear on one side only are counted, not
// guessed.
type Change struct {
	Area
	Name string
	// Values are later − earlier, NaN where either side has no clear
	// value.
	Values []float64
	// Both, EarlierOnly, LaterOnly and Neither count the area's pixels by
	// which sides show them clear with a value.
	Both, EarlierOnly, LaterOnly, Neither int
	// Stats are the difference's statistics over the area (ValidShare is
	// Both's share of it).
	Stats Stats
	// Classes are the area's pixels by how much they changed.
	Classes []ChangeClass
}

// ChangeClass is the pixels whose difference lies in [Low, High) (Low
// −Inf, High +Inf at the ends), and their share of the whole area.
type ChangeClass struct {
	Low, High float64
	Pixels    int
	Share     float64
}

// Label is the class in words: "< −0.2", "−0.2 to −0.1", "≥ 0.2".
func (c ChangeClass) Label() string {
	switch {
	case math.IsInf(c.Low, -1):
		return "< " + signed(c.High)
	case math.IsInf(c.High, 1):
		return "≥ " + signed(c.Low)
	}
	return signed(c.Low) + " to " + signed(c.High)
}

func signed(v float64) string {
	if v < 0 {
		return "−" + trimFloat(-v)
	}
	if v > 0 {
		return "+" + trimFloat(v)
	}
	return "0"
}

// Diff is later − earlier over area, each a layer on area's grid (NaN:
// no clear value), with the area's pixels classed by thresholds (in
// increasing order, e.g. −0.2, −0.1, 0.1, 0.2: five classes).
func Diff(area Area, name string, earlier, later []float64, thresholds []float64) (*Change, error) {
	n := area.W * area.H
	if len(earlier) != n || len(later) != n {
		return nil, fmt.Errorf("layers of %d and %d values on a grid of %d", len(earlier), len(later), n)
	}
	c := &Change{Area: area, Name: name, Values: make([]float64, n)}
	bounds := append(append([]float64{math.Inf(-1)}, thresholds...), math.Inf(1))
	for k := 0; k+1 < len(bounds); k++ {
		c.Classes = append(c.Classes, ChangeClass{Low: bounds[k], High: bounds[k+1]})
	}
	valid := make([]bool, n)
	for i := range n {
		c.Values[i] = math.NaN()
		if !area.Inside[i] {
			continue
		}
		e, l := !math.IsNaN(earlier[i]), !math.IsNaN(later[i])
		switch {
		case e && l:
			c.Both++
			d := later[i] - earlier[i]
			c.Values[i], valid[i] = d, true
			for k := range c.Classes {
				if d >= c.Classes[k].Low && d < c.Classes[k].High {
					c.Classes[k].Pixels++
					break
				}
			}
		case e:
			c.EarlierOnly++
		case l:
			c.LaterOnly++
		default:
			c.Neither++
		}
	}
	for k := range c.Classes {
		if area.AOIPixels > 0 {
			c.Classes[k].Share = float64(c.Classes[k].Pixels) / float64(area.AOIPixels)
		}
	}
	p := &Pixels{Inside: area.Inside, Keep: area.Inside, AOIPixels: area.AOIPixels}
	c.Stats = p.Stats(name, c.Values, valid)
	return c, nil
}

// Area is the mosaic's grid over the area, for Diff.
func (m *Mosaic) Area() Area {
	return Area{Grid: m.Grid, W: m.W, H: m.H, Inside: m.Inside, Outline: m.Outline, PixelMetres: m.PixelMetres,
		Resolution: m.Resolution, AOIPixels: m.AOIPixels}
}
