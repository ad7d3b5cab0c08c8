package mapimage

import (
	"image/color"
	"math"
)

// Ramp is a colour scale: t in [0, 1] interpolates linearly between stops.
type Ramp []color.NRGBA

// At is the ramp's colour at t (clamped to [0, 1]).
func (r Ramp) At(t float64) color.NRGBA {
	if len(r) == 0 {
		return color.NRGBA{0x44, 0x77, 0xaa, 0xff}
	}
	if math.IsNaN(t) {
		t = 0
	}
	t = math.Min(math.Max(t, 0), 1) * float64(len(r)-1)
	i := int(t)
	if i >= len(r)-1 {
		return r[len(r)-1]
	}
	f := t - float64(i)
	a, b := r[i], r[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + f*(float64(y)-float64(x)))) }
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// Ramps used by map_items.
var (
	// CloudRamp runs from clear (deep blue) to overcast (grey).
	CloudRamp = Ramp{{0x08, 0x51, 0x9c, 0xff}, {0x31, 0x82, 0xbd, 0xff}, {0x6b, 0xae, 0xd6, 0xff}, {0xa6, 0xb5, 0xc2, 0xff}, {0x8c, 0x8c, 0x8c, 0xff}}
	// DateRamp is viridis, from the oldest item (purple) to the newest (yellow).
	DateRamp = Ramp{{0x44, 0x01, 0x54, 0xff}, {0x3b, 0x52, 0x8b, 0xff}, {0x21, 0x91, 0x8c, 0xff}, {0x5e, 0xc9, 0x62, 0xff}, {0xfd, 0xe7, 0x25, 0xff}}
)
