//go:build ignore

// make_images writes the test images of package picture. They are our own,
// drawn from formulas (no photograph, no third-party file), so they carry no
// licence but the project's. Run from this directory:
//
//	go run make_images.go && cwebp -q 80 -quiet scene.png -o scene.webp && rm scene.png
//
// (cwebp is Debian's webp package; Go has no WebP encoder.)
package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/tiff"
)

// scene is a made-up "satellite scene": fields, a river and a road.
func scene(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			field := (int(fx*8) + int(fy*6)) % 3
			g := 90 + 40*math.Sin(fx*23+fy*7) + float64(field*25)
			r := 70 + 30*math.Cos(fx*11-fy*5) + float64(field*20)
			b := 50 + 15*math.Sin(fy*17)
			if d := math.Abs(fy - 0.5 - 0.15*math.Sin(fx*9)); d < 0.03 { // river
				r, g, b = 40, 70, 140
			}
			if math.Abs(fx-0.3-0.2*fy) < 0.006 { // road
				r, g, b = 200, 200, 190
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(r), uint8(g), uint8(b), 255})
		}
	}
	return img
}

// tileWithNodata is a scene tile whose data footprint is a rotated square:
// outside it the pixels are transparent, as in many STAC thumbnails.
func tileWithNodata(n int) *image.NRGBA {
	img := scene(n, n)
	c := float64(n) / 2
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			dx, dy := float64(x)-c, float64(y)-c
			u, v := dx*math.Cos(0.3)+dy*math.Sin(0.3), -dx*math.Sin(0.3)+dy*math.Cos(0.3)
			if math.Abs(u) > 0.36*float64(n) || math.Abs(v) > 0.36*float64(n) {
				img.SetNRGBA(x, y, color.NRGBA{})
			}
		}
	}
	return img
}

func write(name string, data []byte) {
	if err := os.WriteFile(name, data, 0o644); err != nil {
		panic(err)
	}
}

func main() {
	var buf bytes.Buffer
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	must(jpeg.Encode(&buf, scene(640, 480), &jpeg.Options{Quality: 90}))
	write("scene.jpg", buf.Bytes())
	buf.Reset()
	must(png.Encode(&buf, scene(320, 240)))
	write("scene.png", buf.Bytes()) // input of cwebp, removed afterwards
	buf.Reset()
	must(png.Encode(&buf, tileWithNodata(300)))
	write("tile-nodata.png", buf.Bytes())
	buf.Reset()
	must(tiff.Encode(&buf, scene(200, 150), &tiff.Options{Compression: tiff.Deflate}))
	write("scene.tif", buf.Bytes())
	buf.Reset()
	gray := image.NewGray16(image.Rect(0, 0, 120, 90))
	for y := 0; y < 90; y++ {
		for x := 0; x < 120; x++ {
			gray.SetGray16(x, y, color.Gray16{uint16(1000 + 20*x + 10*y)}) // reflectance-like values, not full range
		}
	}
	must(tiff.Encode(&buf, gray, nil))
	write("gray16.tif", buf.Bytes())
	// A PNG whose header declares 100 000 × 100 000 pixels (40 GB decoded)
	// in 33 bytes (signature and IHDR): what must be refused before decoding.
	buf.Reset()
	must(png.Encode(&buf, image.NewGray(image.Rect(0, 0, 1, 1))))
	bomb := buf.Bytes()[:33]
	copy(bomb[16:24], []byte{0, 1, 0x86, 0xa0, 0, 1, 0x86, 0xa0})
	binary.BigEndian.PutUint32(bomb[29:33], crc32.ChecksumIEEE(bomb[12:29])) // IHDR's CRC covers type and data
	write("bomb.png", bomb)
	write("not-an-image.txt", []byte("<html><body>403 Forbidden</body></html>\n"))
}
