package main

import (
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
)

// The bundle's icon, drawn here rather than taken from anywhere: three
// stacked isometric tiles (a STAC catalog is a stack of imagery over the
// same ground), the top one a grid of coloured pixels, on a rounded navy
// square. TestIconMatchesTheGenerator keeps icon.png equal to it.

const iconSize = 512

// iconSupersample is the samples per pixel side: edges are anti-aliased by
// averaging supersample² point samples.
const iconSupersample = 4

func writeIcon(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, drawIcon()); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func drawIcon() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, iconSize, iconSize))
	n := float64(iconSupersample)
	for py := 0; py < iconSize; py++ {
		for px := 0; px < iconSize; px++ {
			var r, g, b, a float64
			for sy := 0; sy < iconSupersample; sy++ {
				for sx := 0; sx < iconSupersample; sx++ {
					c, ok := iconSample(float64(px)+(float64(sx)+0.5)/n, float64(py)+(float64(sy)+0.5)/n)
					if !ok {
						continue
					}
					r, g, b, a = r+float64(c.R), g+float64(c.G), b+float64(c.B), a+1
				}
			}
			if a == 0 {
				continue
			}
			// Colour averaged over covered samples, alpha = coverage
			// (non-premultiplied, as NRGBA stores it).
			img.SetNRGBA(px, py, color.NRGBA{
				R: uint8(math.Round(r / a)), G: uint8(math.Round(g / a)), B: uint8(math.Round(b / a)),
				A: uint8(math.Round(255 * a / (n * n))),
			})
		}
	}
	return img
}

var (
	iconNavyTop    = color.NRGBA{0x0d, 0x2b, 0x4e, 0xff}
	iconNavyBottom = color.NRGBA{0x13, 0x4e, 0x6f, 0xff}
	iconGridLine   = color.NRGBA{0xf1, 0xfa, 0xee, 0xff}
	// Tiles bottom to top: face colour; the sides are darker shades.
	iconTiles = []color.NRGBA{
		{0xe9, 0xc4, 0x6a, 0xff}, // sand: elevation, land cover
		{0x5a, 0xa9, 0xe6, 0xff}, // blue: radar, water
		{0xf1, 0xfa, 0xee, 0xff}, // the imagery tile, painted as pixels
	}
	// iconPixels colour the top tile's 4×4 grid: fields, forest, water,
	// bare ground, as a true-colour scene would show them.
	iconPixels = [4][4]color.NRGBA{
		{{0x6a, 0x99, 0x4e, 0xff}, {0x8a, 0xb1, 0x7d, 0xff}, {0x2a, 0x9d, 0x8f, 0xff}, {0x26, 0x72, 0xa8, 0xff}},
		{{0x8a, 0xb1, 0x7d, 0xff}, {0xe9, 0xc4, 0x6a, 0xff}, {0x6a, 0x99, 0x4e, 0xff}, {0x2a, 0x9d, 0x8f, 0xff}},
		{{0x38, 0x66, 0x41, 0xff}, {0x6a, 0x99, 0x4e, 0xff}, {0xf4, 0xa2, 0x61, 0xff}, {0x8a, 0xb1, 0x7d, 0xff}},
		{{0x38, 0x66, 0x41, 0xff}, {0x38, 0x66, 0x41, 0xff}, {0x8a, 0xb1, 0x7d, 0xff}, {0xe9, 0xc4, 0x6a, 0xff}},
	}
)

// Tile geometry: a 2:1 isometric square of half-width iconTileW and
// half-height iconTileH, iconTileD thick, centres iconTileStep apart.
const (
	iconTileW    = 150.0
	iconTileH    = 75.0
	iconTileD    = 22.0
	iconTileStep = 58.0
	iconTileTopY = 188.0 // centre of the top tile's face
	iconRadius   = 96.0  // corner radius of the background square
)

// iconSample is the colour at (x, y), ok false outside the rounded square.
func iconSample(x, y float64) (color.NRGBA, bool) {
	if !insideRoundedSquare(x, y) {
		return color.NRGBA{}, false
	}
	// Painter's order: later tiles (higher up) cover earlier ones.
	c := lerp(iconNavyTop, iconNavyBottom, y/iconSize)
	for i := range iconTiles {
		cy := iconTileTopY + float64(len(iconTiles)-1-i)*iconTileStep
		if tc, ok := tileSample(i, x-iconSize/2, y-cy); ok {
			c = tc
		}
	}
	return c, true
}

// tileSample paints tile i at (dx, dy) from the centre of its top face.
func tileSample(i int, dx, dy float64) (color.NRGBA, bool) {
	// (u, v) in [0,1]² on the top face: u runs to the right-hand corner,
	// v to the left-hand one, from the far (top) corner.
	u := (dx/iconTileW + (dy+iconTileH)/iconTileH) / 2
	v := ((dy+iconTileH)/iconTileH - dx/iconTileW) / 2
	if u >= 0 && u <= 1 && v >= 0 && v <= 1 {
		if i < len(iconTiles)-1 {
			return iconTiles[i], true
		}
		// The imagery tile: a 4×4 grid of pixels with thin light lines.
		gu, gv := u*4, v*4
		if fu, fv := gu-math.Floor(gu), gv-math.Floor(gv); fu < 0.06 || fv < 0.06 || fu > 0.94 || fv > 0.94 {
			return iconGridLine, true
		}
		return iconPixels[min(int(gv), 3)][min(int(gu), 3)], true
	}
	// The two visible sides hang below the near edges of the face.
	base := iconTiles[i]
	if i == len(iconTiles)-1 {
		base = iconPixels[3][3]
	}
	switch {
	case dx >= -iconTileW && dx <= 0 && dy >= iconTileH*(1+dx/iconTileW) && dy <= iconTileH*(1+dx/iconTileW)+iconTileD:
		return shade(base, 0.72), true // left side
	case dx > 0 && dx <= iconTileW && dy >= iconTileH*(1-dx/iconTileW) && dy <= iconTileH*(1-dx/iconTileW)+iconTileD:
		return shade(base, 0.55), true // right side
	}
	return color.NRGBA{}, false
}

func insideRoundedSquare(x, y float64) bool {
	const lo, hi = iconRadius, iconSize - iconRadius
	cx, cy := math.Max(lo, math.Min(hi, x)), math.Max(lo, math.Min(hi, y))
	return x >= 0 && y >= 0 && x <= iconSize && y <= iconSize && math.Hypot(x-cx, y-cy) <= iconRadius
}

func lerp(a, b color.NRGBA, t float64) color.NRGBA {
	mix := func(p, q uint8) uint8 { return uint8(math.Round(float64(p) + (float64(q)-float64(p))*t)) }
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

func shade(c color.NRGBA, f float64) color.NRGBA {
	s := func(p uint8) uint8 { return uint8(math.Round(float64(p) * f)) }
	return color.NRGBA{s(c.R), s(c.G), s(c.B), 0xff}
}
