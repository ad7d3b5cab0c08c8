package picture

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"runtime"
	"testing"
	"testing/synctest"

	"golang.org/x/image/tiff"

	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// scene.jpg is 640×480: 307,200 pixels to reserve.
const scenePixels = 640 * 480

// A decode waits in line while other images hold the process's pixel
// budget, runs once they give it back, and gives its own back when done.
func TestMakeWaitsForThePixelBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pixels := workbudget.NewPixels(scenePixels+1000, "SETTING", 0)
		other, err := pixels.Acquire(t.Context(), 2000) // another image being decoded
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := MakeContext(t.Context(), readTestdata(t, "scene.jpg"), Options{Pixels: pixels})
			done <- err
		}()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("decoded while the budget was spent (err %v)", err)
		default:
		}
		other()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := pixels.InUse(); n != 0 {
			t.Errorf("%d pixels still reserved after the decode", n)
		}
	})
}

// A call whose context ends while it waits is refused, clearly, without
// decoding; an image larger than the whole budget is refused at once.
func TestMakeRefusesWhenTheBudgetIsSpentOrTooSmall(t *testing.T) {
	pixels := workbudget.NewPixels(scenePixels, "STAC_MCP_DECODE_BUDGET_PIXELS", 0)
	hold, _ := pixels.Acquire(context.Background(), 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := MakeContext(ctx, readTestdata(t, "scene.jpg"), Options{Pixels: pixels})
	var busy *workbudget.BusyError
	if !errors.As(err, &busy) || !errors.Is(err, context.Canceled) {
		t.Fatalf("spent budget, cancelled call: err = %v, want a workbudget.BusyError", err)
	}
	hold()

	small := workbudget.NewPixels(scenePixels-1, "STAC_MCP_DECODE_BUDGET_PIXELS", 0)
	_, err = MakeContext(context.Background(), readTestdata(t, "scene.jpg"), Options{Pixels: small})
	var tl *workbudget.TooLargeError
	if !errors.As(err, &tl) || tl.Cost != scenePixels {
		t.Fatalf("image over the whole budget: err = %v, want a workbudget.TooLargeError for %d pixels", err, scenePixels)
	}

	// 16-bit RGBA counts double (8 bytes a pixel), and a TIFF double
	// again (the decoder's buffer of a strip can be the whole image).
	deep := image.NewNRGBA64(image.Rect(0, 0, 100, 100))
	var buf bytes.Buffer
	if err := tiff.Encode(&buf, deep, nil); err != nil {
		t.Fatal(err)
	}
	_, err = MakeContext(context.Background(), buf.Bytes(), Options{Pixels: workbudget.NewPixels(4*100*100-1, "S", 0)})
	if !errors.As(err, &tl) || tl.Cost != 4*100*100 {
		t.Fatalf("16-bit TIFF: err = %v, want a workbudget.TooLargeError for %d pixels", err, 4*100*100)
	}
}

func TestMakeStopsWhenTheCallIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := MakeContext(ctx, readTestdata(t, "scene.jpg"), Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// A large 16-bit image is stretched by the percentiles of all its pixels
// and scaled down in 16 bits (no full-size 8-bit copy).
func TestLargeSixteenBitImagesAreScaledThenStretched(t *testing.T) {
	img := image.NewGray16(image.Rect(0, 0, 1200, 900))
	for y := range 900 {
		for x := range 1200 {
			img.SetGray16(x, y, color.Gray16{Y: uint16(1000 + 2*x + y)})
		}
	}
	var buf bytes.Buffer
	if err := tiff.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	p, err := Make(buf.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Width != 512 || p.Height != 384 || p.SourceWidth != 1200 {
		t.Fatalf("got %d×%d from %d wide, want 512×384 from 1200", p.Width, p.Height, p.SourceWidth)
	}
	if p.Stretch == nil || p.Stretch.Low < 1250 || p.Stretch.Low > 1350 || p.Stretch.High < 3950 || p.Stretch.High > 4050 {
		t.Fatalf("stretch = %+v, want about 1300..4000", p.Stretch)
	}
	out, _, err := image.Decode(bytes.NewReader(p.Data))
	if err != nil {
		t.Fatal(err)
	}
	if r, _, _, _ := out.At(511, 383).RGBA(); r>>8 < 240 {
		t.Errorf("brightest corner is %d of 255, want near white", r>>8)
	}
	if r, _, _, _ := out.At(0, 0).RGBA(); r>>8 > 15 {
		t.Errorf("darkest corner is %d of 255, want near black", r>>8)
	}
}

// Scaling a 4000×4000 image down to 512 must not allocate another image's
// worth: Catmull-Rom's buffer alone was 64 MiB (32 bytes for each output
// column times each source row), uncounted by the pixel budget. Averaging
// blocks first keeps it near the output's size.
func TestFitOfALargeImageAllocatesLittle(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 4000, 4000))
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 7)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	dst := Fit(src, 512)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("Fit allocated %d MiB scaling 4000×4000 to 512, want under 16 (the image itself is 61 MiB)", got>>20)
	}
	if dst.Bounds().Dx() != 512 || dst.Bounds().Dy() != 512 {
		t.Errorf("got %v", dst.Bounds())
	}
}

// Averaging first does not alias: a one-pixel checkerboard of black and
// white scaled 8 times down is an even grey, not a pattern.
func TestFitOfFineDetailIsAnEvenGrey(t *testing.T) {
	src := image.NewGray(image.Rect(0, 0, 4096, 2048))
	for y := range 2048 {
		for x := range 4096 {
			if (x+y)%2 == 0 {
				src.SetGray(x, y, color.Gray{Y: 255})
			}
		}
	}
	dst := Fit(src, 512)
	lo, hi := uint8(255), uint8(0)
	for i := 0; i < len(dst.Pix); i += 4 {
		lo, hi = min(lo, dst.Pix[i]), max(hi, dst.Pix[i])
	}
	if lo < 120 || hi > 135 {
		t.Errorf("grey ranges %d..%d, want about 128 everywhere", lo, hi)
	}
}

// A progressive JPEG's decoder keeps 4 bytes of coefficients for every
// sample until its last scan: its budget cost counts them, one unit per
// component, on top of its pixels.
func TestProgressiveJPEGsCostTheirCoefficients(t *testing.T) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 200, 100)), nil); err != nil {
		t.Fatal(err)
	}
	baseline := buf.Bytes()
	sof := bytes.Index(baseline, []byte{0xff, 0xc0})
	if sof < 0 {
		t.Fatal("no SOF0 in Go's JPEG")
	}
	progressive := append([]byte(nil), baseline...)
	progressive[sof+1] = 0xc2 // the same frame, declared progressive

	if comps, prog := jpegFrame(baseline); comps != 3 || prog {
		t.Errorf("baseline: %d components, progressive %v", comps, prog)
	}
	pixels := workbudget.NewPixels(200*100*4-1, "S", 0)
	_, err := MakeContext(context.Background(), progressive, Options{Pixels: pixels})
	var tl *workbudget.TooLargeError
	if !errors.As(err, &tl) || tl.Cost != 200*100*4 {
		t.Fatalf("progressive 3-component JPEG: err = %v, want a workbudget.TooLargeError for %d (pixels + 3 × samples)", err, 200*100*4)
	}
	if _, err := MakeContext(context.Background(), baseline, Options{Pixels: pixels}); err != nil {
		t.Fatalf("the baseline JPEG costs its pixels only: %v", err)
	}
}
