package reliability

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxLoggedString caps every string of a log line: a URL,
// path or error a caller or a catalog chose is logged by several events of
// one call (each retry, the give-up, the call's end), and a 900 KB URL made
// 3.4 MiB of log per call. A value longer than this keeps its first
// MaxLoggedString bytes and says how long it was.
const MaxLoggedString = 1024

// CapLogLines returns a writer that passes log lines (zerolog writes one
// JSON object per Write) to w with every string value longer than
// MaxLoggedString cut. Lines short enough to hold no such string pass
// unchanged, so the common case costs a length check. NewLogger and the
// layer's default logger use it: every logging path goes through one.
func CapLogLines(w io.Writer) io.Writer { return logCapWriter{w} }

type logCapWriter struct{ w io.Writer }

func (c logCapWriter) Write(p []byte) (int, error) {
	if len(p) <= MaxLoggedString {
		return c.w.Write(p)
	}
	capped, ok := capLogLine(p)
	if !ok {
		// Not one JSON object (another writer's format): cut the line.
		capped = append(append([]byte{}, capString(string(p))...), '\n')
	}
	if _, err := c.w.Write(capped); err != nil {
		return 0, err
	}
	return len(p), nil
}

// capLogLine rewrites one JSON object with its long values cut, keeping
// the order of its fields.
func capLogLine(line []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for first := true; dec.More(); first = false {
		tok, err := dec.Token()
		key, isKey := tok.(string)
		if err != nil || !isKey {
			return nil, false
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, false
		}
		if !first {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(capString(key))
		out.Write(k)
		out.WriteByte(':')
		out.Write(capValue(raw))
	}
	out.WriteString("}\n")
	return out.Bytes(), true
}

// capValue is raw with a long string cut, or a long object or array
// replaced by a note of its size.
func capValue(raw json.RawMessage) []byte {
	if len(raw) <= MaxLoggedString {
		return raw
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		b, _ := json.Marshal(capString(s))
		return b
	}
	b, _ := json.Marshal(fmt.Sprintf("(%d bytes of JSON, cut from the log)", len(raw)))
	return b
}

// capString is s cut to MaxLoggedString bytes on a rune boundary, saying
// how long it was.
func capString(s string) string {
	if len(s) <= MaxLoggedString {
		return s
	}
	cut := MaxLoggedString
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s...(cut: %d bytes in all)", s[:cut], len(s))
}
