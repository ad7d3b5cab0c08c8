package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// stdioSession is `stac-mcp` (stdio) running in-process on pipes.
type stdioSession struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *bufio.Scanner
	exited chan struct{} // closed when run returned, with code set
	code   int
	stderr *syncBuffer
}

func startStdio(t *testing.T, args ...string) *stdioSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &stdioSession{t: t, in: inW, out: bufio.NewScanner(outR), exited: make(chan struct{}), stderr: &syncBuffer{}}
	s.out.Buffer(make([]byte, 0, 1<<20), 1<<24)
	go func() {
		s.code = run(context.Background(), args, inR, outW, s.stderr,
			func(string) (string, bool) { return "", false }, func() []string { return nil })
		_ = inR.Close() // a writer blocked on a dead server gets an error
		_ = outW.Close()
		close(s.exited)
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		select {
		case <-s.exited:
		case <-time.After(patience):
			t.Error("the stdio server did not stop after stdin closed")
		}
	})
	return s
}

func (s *stdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing %.80q: %v (the server stopped reading; stderr: %s)", line, err, s.stderr.String())
	}
}

// next reads the next message the server wrote.
func (s *stdioSession) next() map[string]any {
	s.t.Helper()
	if !s.out.Scan() {
		s.t.Fatalf("the server wrote nothing more (stdout closed: %v); stderr: %s", s.out.Err(), s.stderr.String())
	}
	var m map[string]any
	if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
		s.t.Fatalf("stdout line is not JSON: %q", s.out.Text())
	}
	return m
}

// TestStdioAnswersMalformedLinesAndKeepsServing: each of
// these lines used to end the process with exit 1 and no answer. Now each
// gets a JSON-RPC error (-32700 for what is not JSON, -32600 for what is
// not a valid request; the id when it has a valid one, else null), and the
// server keeps answering.
func TestStdioAnswersMalformedLinesAndKeepsServing(t *testing.T) {
	// Not parallel: runStdio takes the process's SIGINT and SIGTERM.
	s := startStdio(t, "--catalog", "demo", "--log-level", "error")
	s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := s.next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	for i, c := range []struct {
		line string
		code float64
		id   any
	}{
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, -32600, float64(1)},
		{`null`, -32600, nil},
		{`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`, -32600, nil},
		{`[]`, -32600, nil},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":true,"method":"ping"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":3,"method":"ping","params":NaN}`, -32700, nil},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"a\x01b\",\"method\":\"ping\"}", -32700, nil},
		{`{"jsonrpc":"2.0","id":4,"method":"ping","params":{"a":` + deep + `}}`, -32700, nil},
		{`{"jsonrpc":"2.0","id":"five","method":5}`, -32600, "five"},
		{`{"jsonrpc":"2.0"}`, -32600, nil},
		{`42`, -32600, nil},
		{`{"jsonrpc":"2.0","id":6,"method":"ping"} trailing`, -32700, nil},
	} {
		s.send(c.line)
		m := s.next()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != c.code || m["id"] != c.id || m["jsonrpc"] != "2.0" || e["message"] == "" {
			t.Errorf("line %d %.60q: answer %v; want error %v with id %v", i, c.line, m, c.code, c.id)
		}
		if _, hasID := m["id"]; !hasID {
			t.Errorf("line %d: the error has no id member (JSON-RPC wants \"id\": null): %v", i, m)
		}
		// Still serving.
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i))
		if m := s.next(); m["id"] != float64(100+i) || m["result"] == nil {
			t.Fatalf("after line %d the server no longer answers a ping: %v", i, m)
		}
	}
	// A real call still works end to end.
	s.send(`{"jsonrpc":"2.0","id":200,"method":"tools/call","params":{"name":"list_catalogs","arguments":{}}}`)
	if m := s.next(); m["id"] != float64(200) || m["result"] == nil {
		t.Errorf("tools/call after the malformed lines: %v", m)
	}
	_ = s.in.Close()
	<-s.exited
	if s.code != 0 {
		t.Errorf("exit %d at end of input, want 0; stderr: %s", s.code, s.stderr.String())
	}
}
