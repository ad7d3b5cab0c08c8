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
	// Marks are dates without a point, drawn as a × along the x axis
	// (grey: skipped, red: failed).
	Marks []Mark
	// Gaps are spans of time with no observation at all (not dates left
	// out, which are Marks): shaded, and the line is broken across them.
	Gaps []Gap
	// Clip holds the y axis within YMin..YMax (an index's possible
	// range), whatever the values or their bars reach.
	Clip       bool
	YMin, YMax float64
}

// Gap is a span of time without observations.
type Gap struct{ From, To time.Time }

// Mark is a date without a value.
type Mark struct {
	Time   time.Time
	Failed bool
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
	lineCol   = color.NRGBA{0x1a, 0x98, 0x50, 0xff}
	rangeCol  = color.NRGBA{0x1a, 0x98, 0x50, 0x55}
	gridCol   = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}
	gapCol    = color.NRGBA{0xee, 0xee, 0xee, 0xff}
	skipCol   = color.NRGBA{0x88, 0x88, 0x88, 0xff}
	failedCol = color.NRGBA{0xd7, 0x30, 0x1f, 0xff}
)

// Chart draws s: a line through the values with a dot at each, bars for
// their ranges, the marks along the x axis, a y axis with round ticks and
// dates (or months, over a longer span) on the x axis.
func Chart(s Series) (*Picture, error) {
	if len(s.Points) == 0 && len(s.Marks) == 0 {
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
		if len(s.Points) > 0 {
			return nil, fmt.Errorf("nothing to draw: the series has no value")
		}
		lo, hi = 0, 1
		if s.Clip {
			lo, hi = s.YMin, s.YMax
		}
	}
	if s.Clip {
		lo, hi = math.Max(lo, s.YMin), math.Min(hi, s.YMax)
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-0.5, hi+0.5
		if s.Clip {
			lo, hi = math.Max(lo, s.YMin), math.Min(hi, s.YMax)
		}
	}
	step := niceStep((hi - lo) / 5)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if s.Clip {
		lo, hi = math.Max(lo, s.YMin), math.Min(hi, s.YMax)
	}
	var times []time.Time
	for _, p := range s.Points {
		times = append(times, p.Time)
	}
	for _, m := range s.Marks {
		times = append(times, m.Time)
	}
	for _, g := range s.Gaps {
		times = append(times, g.From, g.To)
	}
	t0, t1 := times[0], times[0]
	for _, t := range times {
		if t.Before(t0) {
			t0 = t
		}
		if t.After(t1) {
			t1 = t
		}
	}
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
	y := func(v float64) float64 {
		v = math.Min(math.Max(v, lo), hi)
		return padT + (hi-v)/(hi-lo)*plotH
	}

	cv := canvas.New(chartW, chartH, paper)
	cv.Text(canvas.FitText(s.Title, chartW-2*margin, 13), margin, 20, 13, ink)
	// Gaps first, under everything.
	for _, g := range s.Gaps {
		if a, b := x(g.From)+4, x(g.To)-4; b > a {
			cv.Rect(a, padT, b, padT+plotH, gapCol)
		}
	}
	for v := lo; v <= hi+step/2; v += step {
		yy := y(v)
		cv.Rect(padL, yy, chartW-padR, yy+1, gridCol)
		l := trimNum(v)
		cv.Text(l, padL-6-canvas.TextWidth(l, 11), yy+4, 11, faintInk)
	}
	cv.Rect(padL, padT, padL+1, padT+plotH, ink)
	cv.Rect(padL, padT+plotH, chartW-padR, padT+plotH+1, ink)
	if t1.Sub(t0) > 75*24*time.Hour {
		monthTicks(cv, t0, t1, x, padT+plotH)
	} else {
		dateTicks(cv, s.Points, x, padT+plotH)
	}
	cv.Text(canvas.FitText(s.YLabel, chartW-2*margin, 11), margin, chartH-10, 11, faintInk)
	for _, m := range s.Marks {
		c := skipCol
		if m.Failed {
			c = failedCol
		}
		xx, yy := x(m.Time), padT+plotH-7
		cv.Stroke([][]pt{{{X: xx - 3, Y: yy - 3}, {X: xx + 3, Y: yy + 3}}, {{X: xx - 3, Y: yy + 3}, {X: xx + 3, Y: yy - 3}}}, 1.5, c)
	}
	var lines [][]pt
	var line []pt
	var dots []pt
	for k, p := range s.Points {
		if !math.IsNaN(p.Low) && !math.IsNaN(p.High) {
			cv.Rect(x(p.Time)-2, y(p.High), x(p.Time)+2, y(p.Low), rangeCol)
		}
		if math.IsNaN(p.Value) {
			continue
		}
		if k > 0 && len(line) > 0 && gapBetween(s.Gaps, s.Points[k-1].Time, p.Time) {
			lines = append(lines, line)
			line = nil
		}
		q := pt{X: x(p.Time), Y: y(p.Value)}
		line = append(line, q)
		dots = append(dots, q)
	}
	lines = append(lines, line)
	width, rad := 2.0, 3.5
	if len(dots) > 40 {
		width, rad = 1.5, 2.5
	}
	cv.Stroke(lines, width, lineCol)
	for _, q := range dots {
		cv.Dot(q, rad, lineCol)
	}
	return &Picture{Image: cv.Img}, nil
}

// gapBetween says whether a gap lies between a and b.
func gapBetween(gaps []Gap, a, b time.Time) bool {
	for _, g := range gaps {
		if !g.From.Before(a) && !g.To.After(b) {
			return true
		}
	}
	return false
}

// dateTicks labels the points' dates: the first, the last and evenly
// spaced ones between, skipped where they would overlap.
func dateTicks(cv *canvas.Canvas, points []Point, x func(time.Time) float64, axisY float64) {
	lastEnd := math.Inf(-1)
	n := len(points)
	for k := 0; k < n; k++ {
		if n > 6 && k != 0 && k != n-1 && k%((n+5)/6) != 0 {
			continue
		}
		p := points[k]
		l := p.Time.UTC().Format(time.DateOnly)
		w := canvas.TextWidth(l, 11)
		xx := math.Min(math.Max(x(p.Time)-w/2, padL-20), chartW-padR-w)
		if xx < lastEnd+8 {
			continue
		}
		cv.Rect(x(p.Time), axisY, x(p.Time)+1, axisY+5, ink)
		cv.Text(l, xx, axisY+18, 11, faintInk)
		lastEnd = xx + w
	}
}

// monthTicks marks the first of each month (of every few months over
// years), labelled "Jan 2024", "Feb", …: a year of dates reads by month.
func monthTicks(cv *canvas.Canvas, t0, t1 time.Time, x func(time.Time) float64, axisY float64) {
	months := int(t1.Sub(t0).Hours()/24/30) + 1
	every := 1
	for months/every > 12 {
		every++
	}
	m := time.Date(t0.Year(), t0.Month(), 1, 0, 0, 0, 0, time.UTC)
	if m.Before(t0) {
		m = m.AddDate(0, 1, 0)
	}
	lastEnd := math.Inf(-1)
	first := true
	for ; !m.After(t1); m = m.AddDate(0, 1, 0) {
		if (int(m.Month())-1)%every != 0 {
			continue
		}
		l := m.Format("Jan")
		if first || m.Month() == time.January {
			l = m.Format("Jan 2006")
		}
		w := canvas.TextWidth(l, 11)
		xx := math.Min(math.Max(x(m)-w/2, padL-20), chartW-padR-w)
		cv.Rect(x(m), axisY, x(m)+1, axisY+5, ink)
		if xx >= lastEnd+6 {
			cv.Text(l, xx, axisY+18, 11, faintInk)
			lastEnd = xx + w
			first = false
		}
	}
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
