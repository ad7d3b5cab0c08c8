package canvas

import (
	"image"
	"image/color"
	"image/draw"
	"strings"
	"testing"

	"golang.org/x/image/vector"
)

var ink = color.NRGBA{200, 40, 30, 255}

// Fill rasterizes only the shapes' bounding box: what it draws must be what
// rasterizing the whole canvas draws, up to float32 rounding of the shifted
// coordinates (one 8-bit level), and nothing outside the box.
func TestFillBoundingBoxMatchesWholeCanvas(t *testing.T) {
	polys := [][]Pt{
		{{X: 10.3, Y: 12.7}, {X: 40.5, Y: 8.2}, {X: 35.1, Y: 30.9}},
		{{X: 50, Y: 40}, {X: 58.5, Y: 40}, {X: 58.5, Y: 47.25}, {X: 50, Y: 47.25}},
	}
	cv := New(64, 64, color.White)
	cv.Fill(polys, ink)

	want := image.NewRGBA(image.Rect(0, 0, 64, 64))
	draw.Draw(want, want.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	r := vector.NewRasterizer(64, 64)
	for _, p := range polys {
		r.MoveTo(float32(p[0].X), float32(p[0].Y))
		for _, q := range p[1:] {
			r.LineTo(float32(q.X), float32(q.Y))
		}
		r.ClosePath()
	}
	r.Draw(want, want.Bounds(), image.NewUniform(ink), image.Point{})

	for i := range want.Pix {
		if d := int(want.Pix[i]) - int(cv.Img.Pix[i]); d < -1 || d > 1 {
			t.Fatalf("pixel %d channel %d: %d, want %d", i/4%64, i%4, cv.Img.Pix[i], want.Pix[i])
		}
	}
}

// Shapes and lines wholly off the canvas draw nothing (and do not panic on
// an empty box).
func TestOffCanvasDrawsNothing(t *testing.T) {
	cv := New(32, 32, color.White)
	before := append([]byte(nil), cv.Img.Pix...)
	cv.Fill([][]Pt{{{X: -50, Y: -50}, {X: -40, Y: -50}, {X: -45, Y: -40}}}, ink)
	cv.Stroke([][]Pt{{{X: 100, Y: 5}, {X: 200, Y: 5}, {X: 300, Y: 40}}}, 3, ink)
	cv.Dot(Pt{X: 5, Y: -30}, 4, ink)
	if string(before) != string(cv.Img.Pix) {
		t.Fatal("off-canvas shapes changed pixels")
	}
}

// Lines 1.5 px or wider get round joins: the outer corner of a right angle
// is covered, where two bare quadrilaterals would leave a notch.
func TestStrokeRoundJoin(t *testing.T) {
	cv := New(32, 32, color.White)
	cv.Stroke([][]Pt{{{X: 5.5, Y: 20.5}, {X: 20.5, Y: 20.5}, {X: 20.5, Y: 5.5}}}, 3, ink)
	// (21.5, 21.5) is inside the corner's disc and outside both segments' quads.
	if c := cv.Img.RGBAAt(21, 21); c.G > 200 {
		t.Fatalf("outer corner pixel %v is bare: no round join", c)
	}
}

func TestFitText(t *testing.T) {
	if got := FitText("NDVI", 200, 11); got != "NDVI" {
		t.Errorf("a fitting text was changed: %q", got)
	}
	long := strings.Repeat("long title ", 20)
	got := FitText(long, 120, 11)
	if !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("FitText(long) = %q: want a prefix and an ellipsis", got)
	}
	if w := TextWidth(got, 11); w > 120 {
		t.Errorf("FitText(long) is %.1f px wide, over 120", w)
	}
	if longer := []rune(strings.TrimSuffix(got, "…")); TextWidth(string([]rune(long)[:len(longer)+1])+"…", 11) <= 120 {
		t.Errorf("FitText(long) = %q is not the longest prefix that fits", got)
	}
	if got := FitText(long, 2, 11); got != "" {
		t.Errorf("FitText with no room = %q, want \"\"", got)
	}
}

// Text returns the advance TextWidth measures (callers lay out with both).
func TestTextAdvanceIsTextWidth(t *testing.T) {
	cv := New(200, 40, color.White)
	if w, want := cv.Text("0.25 NDVI", 4, 20, 11, ink), TextWidth("0.25 NDVI", 11); w != want || w <= 0 {
		t.Fatalf("Text advance %v, TextWidth %v", w, want)
	}
}

func TestCanDraw(t *testing.T) {
	for s, want := range map[string]bool{"Lisbon": true, "Maracanaú": true, "Москва": true, "東京": false, "": true} {
		if got := CanDraw(s, 11); got != want {
			t.Errorf("CanDraw(%q) = %v, want %v", s, got, want)
		}
	}
}
