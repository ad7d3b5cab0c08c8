package transport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The go-sdk's stdio transport (mcp.IOTransport) decodes stdin with one
// json.Decoder and ends the connection on the first message it cannot
// decode: invalid JSON (NaN, raw control characters), a JSON-RPC version
// other than "2.0", a null or non-object message, an object or boolean id,
// nesting deeper than its 1000-level limit, a batch under protocol
// 2025-06-18. Its read loop returns the error, Server.Run returns it, and
// the process exits 1 without a word to the client. A JSON-RPC server must
// instead answer such a message with an error and keep serving.
//
// So stdin goes through a filter first: it reads one line at a time (MCP's
// stdio framing is one message per line), answers a malformed line on
// stdout with a JSON-RPC error (-32700 parse error, -32600 invalid request;
// the message's id when it has a valid one, else null), and hands only
// valid single messages to the SDK's transport. Writes from both share one
// lock, so an error line never splices into a message the server writes.

// maxStdioLine bounds one line (one message), as the SDK's own default
// does; a longer line is answered with an error and skipped.
const maxStdioLine = mcp.DefaultMaxLineLength

// maxStdioDepth is the SDK decoder's nesting limit.
const maxStdioDepth = 1000

// NewStdio is the MCP transport over stdin and stdout, behind the filter.
func NewStdio(stdin io.Reader, stdout io.Writer) mcp.Transport {
	out := &lockedWriter{w: stdout}
	in := &validatingReader{src: bufio.NewReaderSize(stdin, 64<<10), out: out}
	// The filter enforces the line cap, so the SDK needs none of its own.
	return &mcp.IOTransport{Reader: nopReadCloser{in}, Writer: nopWriteCloser{out}, MaxLineLength: -1}
}

type nopReadCloser struct{ io.Reader }

func (nopReadCloser) Close() error { return nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// lockedWriter serialises whole writes: each is one message line.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// validatingReader yields only the valid lines of src, one message each,
// newline-terminated; it answers the others on out.
type validatingReader struct {
	src     *bufio.Reader
	out     io.Writer
	pending []byte
	err     error // src's error, returned once pending is drained
}

func (r *validatingReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		line, tooLong, err := r.readLine()
		r.err = err
		switch {
		case tooLong:
			if _, werr := r.out.Write(jsonRPCError(nullID, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid Request: a message longer than %d bytes was skipped", maxStdioLine))); werr != nil {
				return 0, werr
			}
		case len(line) > 0:
			if reply := checkStdioMessage(line); reply != nil {
				if _, werr := r.out.Write(reply); werr != nil {
					return 0, werr
				}
				continue
			}
			r.pending = append(line, '\n')
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// readLine returns the next line without surrounding white space; tooLong
// when it exceeded maxStdioLine (it was read to its end and dropped).
func (r *validatingReader) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.src.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > maxStdioLine+2 { // +2: the line ending
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(buf), tooLong, err
	}
}

// checkStdioMessage returns the error line answering a line the SDK could
// not take, or nil when the line is one valid JSON-RPC message.
func checkStdioMessage(line []byte) []byte {
	var v json.RawMessage
	if err := json.Unmarshal(line, &v); err != nil {
		return jsonRPCError(nullID, jsonrpc.CodeParseError, "Parse error: the line is not valid JSON ("+err.Error()+")")
	}
	if depth(line) > maxStdioDepth {
		return jsonRPCError(nullID, jsonrpc.CodeParseError, fmt.Sprintf("Parse error: the message is nested deeper than %d levels", maxStdioDepth))
	}
	switch line[0] {
	case '{':
	case '[':
		return jsonRPCError(nullID, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send one message per line")
	default:
		return jsonRPCError(nullID, jsonrpc.CodeInvalidRequest, "Invalid Request: a JSON-RPC message is a JSON object, got "+truncate(string(line), 40))
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return jsonRPCError(messageID(line), jsonrpc.CodeInvalidRequest, "Invalid Request: "+err.Error())
	}
	return nil
}

// depth is the deepest nesting of arrays and objects in valid JSON.
func depth(data []byte) int {
	deepest, d := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			d++
			deepest = max(deepest, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return deepest
}

// truncate shortens s to n bytes and an ellipsis, for quoting a line.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
