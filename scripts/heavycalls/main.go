// Command heavycalls makes many concurrent heavy tool calls against a
// stac-mcp binary over stdio and prints what they cost the server process:
// the measurement behind the process-wide work bounds
// (tools/internal/workbudget, adr/0025), which keep a burst of such calls from
// exhausting memory or leaving CPU-heavy work running past deadlines.
//
//   - preview: n concurrent get_item_preview calls of a ~70 kB PNG that
//     declares 4000×4000 pixels (64 MiB decoded); prints the process's peak
//     RSS (VmHWM) before and after the calls.
//   - coverage: n concurrent check_coverage calls over item footprints of
//     many vertices, with a short tool timeout; prints the CPU time
//     (utime+stime of the server process) burnt from the moment the calls
//     returned to 10 s later: work a deadline left running.
//   - map: the same with map_items (drawings that outlive their calls).
//
// The catalog is an in-process STAC API (stacserver) on loopback.
//
//	go build -o /tmp/stac-mcp ./cmd/stac-mcp
//	go run ./scripts/heavycalls -bin /tmp/stac-mcp -mode preview -n 8
//	go run ./scripts/heavycalls -bin /tmp/stac-mcp -mode coverage -n 4 -items 100 -vertices 4000 -timeout 2
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/image/tiff"

	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
)

// say writes the measurement to standard error, like every other program
// in this repository outside cmd/: standard output is kept for MCP wires,
// and this client drives the server over the child's pipes.
func say(format string, args ...any) { _, _ = fmt.Fprintf(os.Stderr, format, args...) }

func main() {
	bin := flag.String("bin", "", "stac-mcp binary")
	mode := flag.String("mode", "preview", "preview, coverage or map")
	n := flag.Int("n", 8, "concurrent calls")
	items := flag.Int("items", 100, "coverage: items")
	vertices := flag.Int("vertices", 4000, "coverage: vertices per footprint")
	timeout := flag.Int("timeout", 2, "tool timeout, seconds")
	settle := flag.Duration("settle", 10*time.Second, "coverage: how long CPU is sampled after the calls returned")
	env := flag.String("env", "", "extra environment, NAME=value pairs separated by ','")
	kind := flag.String("image", "png", "preview: png (4000x4000, 8-bit) or tiff16 (2800x2800, 16-bit RGBA, Deflate)")
	flag.Parse()
	if *bin == "" {
		log.Fatal("-bin is required")
	}

	store := stacserver.NewStore()
	must(store.AddCollection([]byte(`{"type":"Collection","stac_version":"1.0.0","id":"c","description":"d","license":"CC0-1.0",
		"extent":{"spatial":{"bbox":[[10,45,12,47]]},"temporal":{"interval":[["2024-01-01T00:00:00Z",null]]}},"links":[]}`)))
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	big, mime := bigPNG(), "image/png"
	if *kind == "tiff16" {
		big, mime = bigTIFF16(), "image/tiff"
	}
	mux.HandleFunc("/big.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", mime)
		_, _ = w.Write(big)
	})
	switch *mode {
	case "preview":
		must(store.AddItem([]byte(fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"big","collection":"c","bbox":[10,45,11,46],
			"geometry":{"type":"Polygon","coordinates":[[[10,45],[11,45],[11,46],[10,46],[10,45]]]},
			"properties":{"datetime":"2024-06-01T00:00:00Z"},"links":[],
			"assets":{"thumbnail":{"href":%q,"type":%q,"roles":["thumbnail"]}}}`, srv.URL+"/big.png", mime))))
	case "coverage", "map":
		for i := range *items {
			must(store.AddItem([]byte(fmt.Sprintf(`{"type":"Feature","stac_version":"1.0.0","id":"i%03d","collection":"c","bbox":[10,45,12,47],
				"geometry":{"type":"Polygon","coordinates":[%s]},"properties":{"datetime":"2024-06-%02dT00:00:00Z","eo:cloud_cover":%d},
				"links":[],"assets":{}}`, i, ring(10.3+0.014*float64(i%10*10), 45.3+0.14*float64(i/10%10), 0.6, *vertices, i), 1+i%28, i%37))))
		}
	default:
		log.Fatalf("unknown -mode %q", *mode)
	}
	mux.Handle("/", stacserver.New(store, stacserver.Options{}))

	cmd := exec.Command(*bin)
	state, err := os.MkdirTemp("", "heavycalls")
	must(err)
	defer func() { _ = os.RemoveAll(state) }()
	cmd.Env = append(os.Environ(), "STAC_MCP_CATALOG_URL="+srv.URL, "STAC_MCP_TOOL_TIMEOUT_SECS="+strconv.Itoa(*timeout),
		"STAC_MCP_LOG_LEVEL=error", "STAC_MCP_STATE_DIR="+state, "STAC_MCP_MAX_ITEMS_CEILING=1000")
	for _, kv := range strings.Split(*env, ",") {
		if kv != "" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stderr = os.Stderr
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "heavycalls", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	must(err)
	defer func() { _ = cs.Close() }()
	pid := cmd.Process.Pid

	name, args := "get_item_preview", map[string]any{"collection_id": "c", "item_id": "big"}
	switch *mode {
	case "coverage":
		name, args = "check_coverage", map[string]any{"bbox": "10,45,12,47", "max_items": *items}
	case "map":
		name, args = "map_items", map[string]any{"bbox": "10,45,12,47", "max_items": *items}
	}
	say("mode %s, %d concurrent %s, tool timeout %d s, GOMAXPROCS of this machine %s\n", *mode, *n, name, *timeout, os.Getenv("GOMAXPROCS"))
	if *mode == "preview" {
		say("image: %s, %d bytes\n", *kind, len(big))
	} else {
		say("footprints: %d items x %d vertices\n", *items, *vertices)
	}
	say("before: RSS %s, CPU %.2f s\n", mib(status(pid, "VmRSS")), cpuSeconds(pid))

	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for range *n {
		wg.Go(func() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			what := "ok"
			switch {
			case err != nil:
				what = "protocol error: " + err.Error()
			case res.IsError:
				what = "isError: " + firstText(res)
			case *mode == "preview" && !hasImage(res):
				what = "no image: " + firstText(res)
			}
			mu.Lock()
			outcomes[trim(what, 200)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	took := time.Since(start)
	cpuAtReturn := cpuSeconds(pid)
	say("calls returned after %.2f s: CPU %.2f s, RSS %s, peak RSS (VmHWM) %s\n", took.Seconds(), cpuAtReturn,
		mib(status(pid, "VmRSS")), mib(status(pid, "VmHWM")))
	for what, count := range outcomes {
		say("  %d x %s\n", count, what)
	}
	if *mode != "preview" {
		time.Sleep(*settle)
		after := cpuSeconds(pid)
		say("%v after the calls returned: CPU %.2f s (+%.2f s burnt after return), RSS %s, peak RSS %s\n", *settle, after,
			after-cpuAtReturn, mib(status(pid, "VmRSS")), mib(status(pid, "VmHWM")))
	}
}

// bigPNG is one colour at 4000×4000: about 70 kB of PNG, 64 MiB decoded.
func bigPNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 4000, 4000))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = 0x40, 0x80, 0xc0, 0xff
	}
	img.SetNRGBA(0, 0, color.NRGBA{A: 0x80}) // one translucent pixel: decoded as NRGBA
	var buf bytes.Buffer
	must(png.Encode(&buf, img))
	return buf.Bytes()
}

// bigTIFF16 is a 16-bit RGBA gradient at 2800×2800 (Deflate): 60 MiB
// decoded, just under the 16 Mpx a preview may decode (16-bit counts 2).
func bigTIFF16() []byte {
	img := image.NewNRGBA64(image.Rect(0, 0, 2800, 2800))
	for y := range 2800 {
		for x := range 2800 {
			img.SetNRGBA64(x, y, color.NRGBA64{R: uint16(1000 + x), G: uint16(1000 + y), B: 1500, A: 0xffff})
		}
	}
	var buf bytes.Buffer
	must(tiff.Encode(&buf, img, &tiff.Options{Compression: tiff.Deflate}))
	return buf.Bytes()
}

// ring is a GeoJSON ring of n vertices round (cx, cy), slightly wavy.
func ring(cx, cy, r float64, n, seed int) string {
	pts := make([]string, 0, n+1)
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		rr := r * (1 + 0.05*math.Sin(7*a+float64(seed)))
		pts = append(pts, fmt.Sprintf("[%.6f,%.6f]", cx+rr*math.Cos(a), cy+rr*math.Sin(a)))
	}
	pts = append(pts, pts[0])
	return "[" + strings.Join(pts, ",") + "]"
}

// status is a field of /proc/pid/status in kB.
func status(pid int, field string) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	must(err)
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb
		}
	}
	return -1
}

// cpuSeconds is utime+stime of the process (/proc/pid/stat; clock ticks of 1/100 s).
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	must(err)
	// Fields after the command name, which is in parentheses.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+2:]))
	ut, _ := strconv.ParseFloat(fields[11], 64)
	st, _ := strconv.ParseFloat(fields[12], 64)
	return (ut + st) / 100
}

func mib(kb int64) string { return fmt.Sprintf("%d MiB", kb/1024) }

func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return ""
}

func hasImage(res *mcp.CallToolResult) bool {
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			return true
		}
	}
	return false
}

func trim(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
