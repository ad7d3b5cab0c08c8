// Package redistest starts a real redis-server for integration tests: on a
// free loopback port, in a temporary directory, with persistence off, and
// stopped when the test ends. Unit tests use miniredis; these tests check
// what only the real server does (its Lua, its expiry, its wire protocol
// under go-redis's timeouts).
//
// The binary is the Debian package redis-server (.ci/run installs it). A
// test calling Start is skipped when the binary is absent, except when
// CI=true, where that is a failure.
//
// Like net/http/httptest it is a package for tests (of reliability, cmd
// and bench); nothing in production imports it.
package redistest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is one redis-server process.
type Server struct {
	Addr string // 127.0.0.1:port
	URL  string // redis://127.0.0.1:port/0

	cmd  *exec.Cmd
	mu   sync.Mutex
	done chan struct{}

	t    testing.TB
	bin  string
	port int
}

// Start starts redis-server for t and stops it in t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not installed (apt-get install -y redis-server; .ci/run does it), and CI=true: %v", err)
		}
		t.Skipf("redis-server is not installed (apt-get install -y redis-server); skipping the real-Redis test")
	}
	var lastErr error
	// The free port is found by binding and closing it, so another process
	// may take it before redis-server binds: try a few ports.
	for range 5 {
		s, err := start(t, bin)
		if err == nil {
			t.Cleanup(s.Stop)
			return s
		}
		lastErr = err
	}
	t.Fatalf("starting redis-server: %v", lastErr)
	return nil
}

func start(t testing.TB, bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	return startOn(t, bin, port)
}

func startOn(t testing.TB, bin string, port int) (*Server, error) {
	dir := t.TempDir()
	args := []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", // no persistence
		"--daemonize", "no", "--protected-mode", "yes", "--loglevel", "warning",
	}
	cmd := exec.Command(bin, args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", bin, err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{}), t: t, bin: bin, port: port}
	s.URL = "redis://" + s.Addr + "/0"
	go func() { _ = cmd.Wait(); close(s.done) }()
	if err := s.waitReady(10 * time.Second); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w; redis-server output:\n%s", err, out.String())
	}
	return s, nil
}

// waitReady polls PING until the server answers PONG.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("redis-server exited at start")
		default:
		}
		if s.ping() {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("redis-server did not answer PING within %s", limit)
}

func (s *Server) ping() bool {
	conn, err := net.DialTimeout("tcp", s.Addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	buf := make([]byte, 16)
	n, _ := conn.Read(buf)
	return strings.HasPrefix(string(buf[:n]), "+PONG")
}

// Stop kills the server (idempotent) and waits for it to exit. Tests of
// "Redis went away" call it themselves.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
}

// Restart starts an empty redis-server on the same port after Stop, as
// when Redis comes back after an outage (without persistence: nothing
// survives). The new process is stopped when the test ends.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
	default:
		s.t.Fatal("redistest: Restart of a server that is still running; Stop it first")
	}
	var err error
	// The port was just released; a few tries cover a slow release.
	for range 20 {
		var n *Server
		if n, err = startOn(s.t, s.bin, s.port); err == nil {
			s.cmd, s.done = n.cmd, n.done
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("redistest: restarting redis-server on port %d: %v", s.port, err)
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
