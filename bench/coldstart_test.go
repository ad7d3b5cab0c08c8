package bench

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkColdStart measures, per iteration, a fresh stac-mcp process from
// exec to its answer to tools/list over stdio (initialize, initialized,
// tools/list), with the default configuration. Target: under 50 ms.
//
//	go test -run '^$' -bench ColdStart -benchtime 20x ./bench/
func BenchmarkColdStart(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "stac-mcp")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/stac-mcp").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	const handshake = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}
{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}
`
	var starts []time.Duration
	state := b.TempDir() // the stdio cursor key file: made by the first start, read by the others
	for b.Loop() {
		cmd := exec.Command(bin, "stdio")
		cmd.Env = append(os.Environ(), "STAC_MCP_LOG_LEVEL=error", "XDG_STATE_HOME="+state)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if _, err := io.WriteString(stdin, handshake); err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		answered := false
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), `{"jsonrpc":"2.0","id":2,"result"`) {
				answered = true
				break
			}
		}
		elapsed := time.Since(start)
		_ = stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("stac-mcp exited with %v", err)
		}
		if !answered {
			b.Fatal("no tools/list answer on stdout")
		}
		starts = append(starts, elapsed)
	}
	b.ReportMetric(ms(median(starts)), "cold_start_ms")
}
