package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawClient drives an MCP server the way a host does over stdio: it writes
// a JSON-RPC request line to the server's stdin and reads the response line
// from its stdout, through OS pipes and the SDK's IOTransport (what
// mcp.StdioTransport is over os.Stdin and os.Stdout). It does not decode
// the response: in production the client is the host (Claude Desktop's
// JSON.parse, say), not Go code, so what a call costs in this process is the
// server's share alone: request bytes in, response bytes out.
type rawClient struct {
	w    *os.File      // the server's stdin
	r    *bufio.Reader // the server's stdout
	id   int
	line []byte // the last response line, reused
	req  []byte // the request being written, reused
}

// connectRaw connects server over stdio-style pipes and initializes the
// session; the pipes are closed and the session awaited when the test ends.
func connectRaw(tb testing.TB, server *mcp.Server) *rawClient {
	tb.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	ss, err := server.Connect(context.Background(), &mcp.IOTransport{Reader: inR, Writer: outW}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	c := &rawClient{w: inW, r: bufio.NewReaderSize(outR, 256<<10)}
	tb.Cleanup(func() {
		_ = inW.Close()
		_ = ss.Close()
		_ = outR.Close()
		_ = ss.Wait()
	})
	init := `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}`
	if _, err := c.request("initialize", []byte(init)); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		tb.Fatal(err)
	}
	return c
}

// request writes one request and returns its response line (valid until
// the next request). Notifications the server sends meanwhile are skipped;
// a JSON-RPC error is returned as an error.
func (c *rawClient) request(method string, params []byte) ([]byte, error) {
	c.id++
	c.req = append(c.req[:0], `{"jsonrpc":"2.0","id":`...)
	c.req = strconv.AppendInt(c.req, int64(c.id), 10)
	c.req = append(c.req, `,"method":"`...)
	c.req = append(c.req, method...)
	c.req = append(c.req, `","params":`...)
	c.req = append(c.req, params...)
	c.req = append(c.req, "}\n"...)
	if _, err := c.w.Write(c.req); err != nil {
		return nil, err
	}
	// The SDK writes a response as {"jsonrpc":"2.0","id":N,"result"|"error":…}.
	var prefix [48]byte
	want := strconv.AppendInt(append(prefix[:0], `{"jsonrpc":"2.0","id":`...), int64(c.id), 10)
	want = append(want, ',')
	for {
		c.line = c.line[:0]
		for {
			chunk, err := c.r.ReadSlice('\n')
			c.line = append(c.line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if err != nil {
				return nil, err
			}
			break
		}
		if !bytes.HasPrefix(c.line, want) {
			continue // a notification or a request from the server
		}
		if rest := c.line[len(want):]; bytes.HasPrefix(rest, []byte(`"error"`)) {
			return nil, fmt.Errorf("%s: %s", method, c.line)
		}
		return c.line, nil
	}
}

// callTool makes one tools/call with params (the JSON of name and
// arguments) and returns the response line undecoded.
func (c *rawClient) callTool(params []byte) ([]byte, error) {
	return c.request("tools/call", params)
}

// decodeResult decodes a response line's result, to check it once outside
// the timed loop.
func decodeResult(line []byte) (*mcp.CallToolResult, error) {
	var resp struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, err
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
