package picture

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestMakeIsDeterministic(t *testing.T) {
	in := readTestdata(t, "scene.jpg")
	a, err := Make(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Make(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Data, b.Data) {
		t.Error("two runs on the same input gave different bytes")
	}
}

func TestMakeRefusesOversizedImagesBeforeDecoding(t *testing.T) {
	// bomb.png is 33 bytes declaring 100000×100000 pixels: decoding it would
	// allocate 10 GB before failing. It must be refused from its header.
	_, err := Make(readTestdata(t, "bomb.png"), Options{})
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Width != 100000 || tl.Height != 100000 || tl.Format != "png" {
		t.Fatalf("err = %v, want a TooLargeError for the 100000×100000 PNG", err)
	}
	// The budget is the caller's: a real image over it is refused too.
	_, err = Make(readTestdata(t, "scene.jpg"), Options{MaxPixels: 640*480 - 1})
	if !errors.As(err, &tl) {
		t.Fatalf("scene.jpg over a budget one pixel too small: err = %v", err)
	}
	if _, err := Make(readTestdata(t, "scene.jpg"), Options{MaxPixels: 640 * 480}); err != nil {
		t.Fatalf("scene.jpg at exactly its size: %v", err)
	}
}

func TestMakeRejectsWhatIsNotAnImage(t *testing.T) {
	if _, err := Make(readTestdata(t, "not-an-image.txt"), Options{}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("HTML error page: err = %v, want ErrUnknownFormat", err)
	}
	jpg := readTestdata(t, "scene.jpg")
	_, err := Make(jpg[:len(jpg)/2], Options{})
	if err == nil || errors.Is(err, ErrUnknownFormat) {
		t.Errorf("truncated JPEG: err = %v, want a decoding error", err)
	}
}

func TestFitKeepsAspectAndNeverEnlarges(t *testing.T) {
	for _, c := range []struct{ w, h, side, wantW, wantH int }{
		{2048, 512, 512, 512, 128},
		{512, 2048, 512, 128, 512},
		{300, 200, 512, 300, 200},
		{3000, 1, 512, 512, 1},
	} {
		got := Fit(image.NewRGBA(image.Rect(0, 0, c.w, c.h)), c.side).Bounds()
		if got.Dx() != c.wantW || got.Dy() != c.wantH || got.Min != (image.Point{}) {
			t.Errorf("Fit(%dx%d, %d) = %v, want %dx%d", c.w, c.h, c.side, got, c.wantW, c.wantH)
		}
	}
}

func TestEncodeShrinksUntilUnderBudget(t *testing.T) {
	// Noise does not compress: 512 px of it is far over 20 kB even at the
	// lowest quality, so Encode must also reduce the size.
	p, err := Encode(noise(700, 700, 1), Options{MaxBytes: 20_000})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Data) > 20_000 || p.Width >= 512 || p.MIMEType != MIMEJPEG {
		t.Errorf("got %s %dx%d in %d bytes, want a smaller JPEG under 20000 bytes", p.MIMEType, p.Width, p.Height, len(p.Data))
	}
}

// FuzzMake feeds arbitrary bytes (the seeds are every test image and a few
// truncations) through the decoder path with a small pixel budget: it must
// never panic, never return an image over the limits, and refuse every
// input whose header declares more pixels than the budget. Run it with a
// short minimisation (the seeds are tens of kilobytes, and minimising each
// new input for the default 60 s looks like a hang):
//
//	go test ./tools/internal/picture/ -run XXX -fuzz FuzzMake -fuzztime 2m -fuzzminimizetime 3s
func FuzzMake(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) == ".go" {
			continue
		}
		data, err := os.ReadFile(filepath.Join("testdata", e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/3])
	}
	const maxInput = 1 << 20
	opts := Options{MaxPixels: 1 << 20, MaxSide: 128, MaxBytes: 40_000}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxInput {
			t.Skip("inputs are capped at 1 MiB, as the fetch cap bounds real ones")
		}
		p, err := Make(data, opts)
		cfg, _, cfgErr := image.DecodeConfig(bytes.NewReader(data))
		if cfgErr == nil && int64(cfg.Width)*int64(cfg.Height) > 2*int64(opts.MaxPixels) && err == nil {
			t.Fatalf("a %dx%d image was decoded past the %d-pixel budget", cfg.Width, cfg.Height, opts.MaxPixels)
		}
		if err != nil {
			return
		}
		if len(p.Data) > opts.MaxBytes || p.Width > opts.MaxSide || p.Height > opts.MaxSide || p.Width < 1 || p.Height < 1 {
			t.Fatalf("output %s %dx%d, %d bytes breaks the limits", p.MIMEType, p.Width, p.Height, len(p.Data))
		}
		if _, _, err := image.Decode(bytes.NewReader(p.Data)); err != nil {
			t.Fatalf("our own output does not decode: %v", err)
		}
	})
}

// BenchmarkMakeFrom4MBJPEG is the preview benchmark: a 4 MB JPEG
// thumbnail (noise at top quality, the worst case for decoding) to the
// 512-px preview. It reports the input and output sizes.
func BenchmarkMakeFrom4MBJPEG(b *testing.B) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, noise(1450, 1450, 7), &jpeg.Options{Quality: 100}); err != nil {
		b.Fatal(err)
	}
	in := buf.Bytes()
	var out *Picture
	b.ResetTimer()
	for b.Loop() {
		var err error
		if out, err = Make(in, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(in)), "input-bytes")
	b.ReportMetric(float64(len(out.Data)), "preview-bytes")
}

// noise is a deterministic random image.
func noise(w, h int, seed uint64) *image.NRGBA {
	r := rand.New(rand.NewPCG(seed, seed))
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		if i%4 == 3 {
			img.Pix[i] = 0xff
		} else {
			img.Pix[i] = uint8(r.UintN(256))
		}
	}
	return img
}

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSixteenBitImagesAreStretched(t *testing.T) {
	p, err := Make(readTestdata(t, "gray16.tif"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// gray16.tif holds 1000 + 20x + 10y for x < 120, y < 90: percentiles
	// 2 % and 98 % fall near 1400 and 3900.
	if p.Stretch == nil || p.Stretch.Low < 1200 || p.Stretch.Low > 1600 || p.Stretch.High < 3700 || p.Stretch.High > 4100 {
		t.Fatalf("stretch = %+v, want about 1400..3900", p.Stretch)
	}
	img, _, err := image.Decode(bytes.NewReader(p.Data))
	if err != nil {
		t.Fatal(err)
	}
	// Unstretched, every pixel would be below 16 of 255 (4000/65535).
	if r, _, _, _ := img.At(119, 89).RGBA(); r>>8 < 240 {
		t.Errorf("brightest corner is %d of 255 after stretching, want near white", r>>8)
	}
	if q, err := Make(readTestdata(t, "scene.tif"), Options{}); err != nil || q.Stretch != nil {
		t.Errorf("8-bit TIFF: stretch = %+v, err %v; want none", q.Stretch, err)
	}
}
