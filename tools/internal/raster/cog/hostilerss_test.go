package cog

import (
	"context"
	"image"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestHostileFilesRSS measures what concurrent calls on hostile files cost
// the process: peak RSS (VmHWM) and CPU, for bench/RESULTS.md. It uses only
// Open and ReadWindow, so that it measures any version of the reader, and
// runs only when asked, one attack per process:
//
//	STAC_MCP_COG_HOSTILE_RSS=16 go test -run 'TestHostileFilesRSS/amplified-byte' -v ./tools/internal/raster/cog/
func TestHostileFilesRSS(t *testing.T) {
	calls, _ := strconv.Atoi(os.Getenv("STAC_MCP_COG_HOSTILE_RSS"))
	if calls <= 0 {
		t.Skip("a measurement: set STAC_MCP_COG_HOSTILE_RSS to the number of concurrent calls")
	}
	blob := make([]byte, 256)
	attacks := map[string]func() ([]byte, image.Rectangle){
		// The file: 16 IFDs whose TileOffsets and TileByteCounts,
		// typed BYTE, declare 4M values each, all one shared 4 MiB range.
		"amplified-byte": func() ([]byte, image.Rectangle) {
			return amplifiedHeader(16, 4<<20, tByte), image.Rect(0, 0, 256, 256)
		},
		// The same with LONG offsets, 1M each over a shared 4 MiB range.
		"amplified-long": func() ([]byte, image.Rectangle) {
			return amplifiedHeader(16, 1<<20, tLong), image.Rect(0, 0, 256, 256)
		},
		// 1×1-pixel tiles, a 1024×1024 window: a million blocks.
		"tiles-1px": func() ([]byte, image.Rectangle) {
			return buildTIFF(blob, tiledIFD(0, 1024, 1024, 1, 1, repeated(tLong, 1<<20, 8), repeated(tLong, 1<<20, 1))), image.Rect(0, 0, 1024, 1024)
		},
	}
	// A read of 16×16-pixel tiles 32 KiB apart from a host answering each
	// range in 5 ms, its call ended 50 ms in: the CPU the read spends
	// after its call's end, over the calls (a 1024×1024 window, 4096
	// ranges; then 128×128, 64 ranges).
	for _, side := range []int{1024, 128} {
		t.Run("cancel-"+strconv.Itoa(side), func(t *testing.T) {
			var after time.Duration
			var mu sync.Mutex
			var wg sync.WaitGroup
			var first error
			for range calls {
				wg.Go(func() {
					src := spacedTiles(32 << 10)
					src.onRead = func() { time.Sleep(5 * time.Millisecond) }
					f, err := Open(context.Background(), src, Options{})
					if err != nil {
						t.Error(err)
						return
					}
					ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
					defer cancel()
					var cpuAtEnd time.Duration
					go func() {
						<-ctx.Done()
						cpuAtEnd = processCPU()
					}()
					_, err = f.ReadWindow(ctx, 0, image.Rect(0, 0, side, side), nil)
					<-ctx.Done()
					cancel()
					time.Sleep(time.Millisecond)
					mu.Lock()
					if d := processCPU() - cpuAtEnd; d > 0 {
						after += d
					}
					if first == nil {
						first = err
					}
					mu.Unlock()
				})
			}
			wg.Wait()
			t.Logf("cancel-%d: %d calls: CPU after the calls' end %v in all; first error: %v", side, calls, after.Round(time.Millisecond), first)
		})
	}
	for n, attack := range attacks {
		t.Run(n, func(t *testing.T) {
			file, win := attack()
			var ru0, ru1 syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			start := time.Now()
			var wg sync.WaitGroup
			errs := make([]error, calls)
			for i := range calls {
				wg.Go(func() {
					f, err := Open(context.Background(), BytesSource(n+strconv.Itoa(i), file), Options{})
					if err == nil {
						_, err = f.ReadWindow(context.Background(), 0, win, nil)
					}
					errs[i] = err
				})
			}
			wg.Wait()
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := time.Duration(ru1.Utime.Nano()-ru0.Utime.Nano()+ru1.Stime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
			status, _ := os.ReadFile("/proc/self/status")
			hwm := ""
			for _, line := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(line, "VmHWM:") {
					hwm = strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
				}
			}
			t.Logf("%s: %d calls on a %d-byte file: peak RSS %s, CPU %v, wall %v; first error: %v",
				n, calls, len(file), hwm, cpu.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), errs[0])
		})
	}
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
