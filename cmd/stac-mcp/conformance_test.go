package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/internal/reporoot"
)

// TestConformanceSuiteOverStreamableHTTP runs the official MCP conformance
// suite (@modelcontextprotocol/conformance 0.1.16, Node 22) against the
// built binary's `http` command on a free loopback port. Scenarios that
// call the SDKs' fixture tools, resources and prompts are listed with the
// reason in e2e/conformance/baseline.yml; every other one must pass, and a
// listed one that starts passing fails the run (stale baseline).
func TestConformanceSuiteOverStreamableHTTP(t *testing.T) {
	// Not parallel: the binary listens on a port found free and released
	// (startBinaryHTTP), which another test's listener could take meanwhile.
	conformance, env := nodeTool(t, "conformance")
	url, stop := startBinaryHTTP(t)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, conformance, "server", "--url", url+"/mcp",
		"--expected-failures", filepath.Join(reporoot.ForTest(t), "e2e", "conformance", "baseline.yml"),
		"-o", t.TempDir())
	cmd.Dir = t.TempDir()
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil || !strings.Contains(text, "Baseline check passed") {
		t.Fatalf("conformance suite: %v\n%s", err, tail(text, 4000))
	}
	scenarios := regexp.MustCompile(`(?m)^[✓✗] (\S+): (\d+) passed, (\d+) failed`).FindAllStringSubmatch(text, -1)
	passed, expected := 0, 0
	for _, m := range scenarios {
		if m[3] == "0" {
			passed++
		} else {
			expected++
		}
	}
	total := regexp.MustCompile(`Total: \d+ passed, \d+ failed`).FindString(text)
	t.Logf("conformance: %d scenarios passed, %d expected failures (baseline); checks %s", passed, expected, total)
	if passed == 0 || len(scenarios) == 0 {
		t.Errorf("no scenario passed; output:\n%s", tail(text, 4000))
	}

	// SIGTERM with nothing in flight: the binary exits 0 promptly.
	if err := stop(); err != nil {
		t.Errorf("stac-mcp http after SIGTERM: %v", err)
	}
}

// startBinaryHTTP starts `stac-mcp http --catalog demo` on a free loopback
// port, waits for /healthz and returns its URL and a stop that sends
// SIGTERM and waits for the exit.
func startBinaryHTTP(t *testing.T) (url string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	stderr := &syncBuffer{} // read while the process may still write
	cmd := exec.Command(binary(t), "http", "--catalog", "demo", "--addr", addr, "--log-level", "warn")
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				return fmt.Errorf("%w; stderr:\n%s", err, stderr.String())
			}
			return nil
		case <-time.After(patience):
			_ = cmd.Process.Kill()
			<-exited //nolint:errcheck // killed: its exit error says nothing the message below does not
			return fmt.Errorf("did not exit within %v of SIGTERM", patience)
		}
	}
	t.Cleanup(func() { _ = stop() })

	url = "http://" + addr
	hc := &http.Client{Timeout: time.Second}
	defer hc.CloseIdleConnections()
	deadline := time.Now().Add(patience)
	for {
		resp, err := hc.Get(url + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url, stop
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("stac-mcp http did not answer /healthz on %s: %v\n%s", addr, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
