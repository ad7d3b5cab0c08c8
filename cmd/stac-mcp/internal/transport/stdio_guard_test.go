package transport

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestStdioSkipsAnOverlongLine(t *testing.T) {
	t.Parallel()
	r := &validatingReader{src: bufio.NewReaderSize(strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`+strings.Repeat("x", maxStdioLine)+`"}}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n"), 4096), out: &strings.Builder{}}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n" {
		t.Errorf("passed on %.100q, want only the second message", got)
	}
	if out := r.out.(*strings.Builder).String(); !strings.Contains(out, `"code":-32600`) || !strings.Contains(out, "longer than") {
		t.Errorf("the overlong line was answered with %q", out)
	}
}
