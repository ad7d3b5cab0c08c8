package plot

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"github.com/stacmcp/stac-mcp/tools/internal/canvas"
)

// Point is one value of a time series; Low and High (both NaN for none)
// are drawn as a bar around it (e.g. the 2nd and 98th percentiles).
type Point struct {
	Time             time.Time
	Value, Low, High float64
}

// Series is what a chart shows.
type Series struct {
	Title  string
	YLabel string
	Points []Point // in time order
}

// Chart sizes.
const (
	chartW = 720
	chartH = 360
	padL   = 62
	padR   = 20
	padT   = 34
	padB   = 48
)

var (
	lineCol  = color.NRGBA{0x1a, 0x98, 0x50, 0xff}
	rangeCol = color.NRGBA{0x1a, 0x98, 0x50, 0x55}
	gridCol  = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}
)

// Chart draws s: a line through the values with a dot at each, bars for
// their ranges, a y axis with round ticks and dates on the x axis.
func Chart(s Series) (*Picture, error) {
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("nothing to draw: the series has no point")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range s.Points {
		for _, v := range []float64{p.Value, p.Low, p.High} {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return nil, fmt.Errorf("nothing to draw: the series has no value")
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-0.5, hi+0.5
	}
	step := niceStep((hi - lo) / 5)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	t0, t1 := s.Points[0].Time, s.Points[len(s.Points)-1].Time
	span := t1.Sub(t0).Seconds()
	plotW, plotH := float64(chartW-padL-padR), float64(chartH-padT-padB)
	// The first and last dates sit a little inside the axes.
	inset := 0.04 * plotW
	x := func(t time.Time) float64 {
		if span <= 0 {
			return padL + plotW/2
		}
		return padL + inset + t.Sub(t0).Seconds()/span*(plotW-2*inset)
	}
	y := func(v float64) float64 { return padT + (hi-v)/(hi-lo)*plotH }

	cv := canvas.New(chartW, chartH, paper)
	cv.Text(canvas.FitText(s.Title, chartW-2*margin, 13), margin, 20, 13, ink)
	for v := lo; v <= hi+step/2; v += step {
		yy := y(v)
		cv.Rect(padL, yy, chartW-padR, yy+1, gridCol)
		l := trimNum(v)
		cv.Text(l, padL-6-canvas.TextWidth(l, 11), yy+4, 11, faintInk)
	}
	cv.Rect(padL, padT, padL+1, padT+plotH, ink)
	cv.Rect(padL, padT+plotH, chartW-padR, padT+plotH+1, ink)
	// Date labels: the first, the last and evenly spaced ones between,
	// skipped where they would overlap.
	lastEnd := math.Inf(-1)
	n := len(s.Points)
	for k := 0; k < n; k++ {
		if n > 6 && k != 0 && k != n-1 && k%((n+5)/6) != 0 {
			continue
		}
		p := s.Points[k]
		l := p.Time.UTC().Format(time.DateOnly)
		w := canvas.TextWidth(l, 11)
		xx := math.Min(math.Max(x(p.Time)-w/2, padL-20), chartW-padR-w)
		if xx < lastEnd+8 {
			continue
		}
		cv.Rect(x(p.Time), padT+plotH, x(p.Time)+1, padT+plotH+5, ink)
		cv.Text(l, xx, padT+plotH+18, 11, faintInk)
		lastEnd = xx + w
	}
	cv.Text(canvas.FitText(s.YLabel, chartW-2*margin, 11), margin, chartH-10, 11, faintInk)
	var line []pt
	for _, p := range s.Points {
		if !math.IsNaN(p.Low) && !math.IsNaN(p.High) {
			cv.Rect(x(p.Time)-2, y(p.High), x(p.Time)+2, y(p.Low), rangeCol)
		}
		if !math.IsNaN(p.Value) {
			line = append(line, pt{X: x(p.Time), Y: y(p.Value)})
		}
	}
	cv.Stroke([][]pt{line}, 2, lineCol)
	for _, q := range line {
		cv.Dot(q, 3.5, lineCol)
	}
	return &Picture{Image: cv.Img}, nil
}

// niceStep is the 1-2-5 step not below v.
func niceStep(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, k := range []float64{1, 2, 5, 10} {
		if k*p >= v {
			return k * p
		}
	}
	return 10 * p
}
