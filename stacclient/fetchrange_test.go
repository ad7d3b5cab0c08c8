package stacclient

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestFetchRangeAsksForTheRangeAndChecks206(t *testing.T) {
	file := make([]byte, 10000)
	for i := range file {
		file[i] = byte(i * 7)
	}
	var ranges headerLog
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ranges.add(r)
		switch r.URL.Path {
		case "/a.tif":
			http.ServeContent(w, r, "a.tif", time.Time{}, bytes.NewReader(file))
		case "/ignores.tif": // a server without Range support: the whole file, 200
			_, _ = w.Write(file)
		case "/small.tif":
			_, _ = w.Write(file[:100])
		case "/wrong.tif": // 206 for another range than asked
			w.Header().Set("Content-Range", "bytes 0-9/10000")
			w.WriteHeader(http.StatusPartialContent)
			_, _ = w.Write(file[:10])
		}
	}))
	defer srv.Close()
	c, _ := New(srv.URL, Options{})
	ctx := context.Background()

	got, err := c.FetchRange(ctx, srv.URL+"/a.tif", 1234, 500)
	if err != nil || !bytes.Equal(got, file[1234:1734]) {
		t.Fatalf("FetchRange = %d bytes, %v; want bytes 1234-1733", len(got), err)
	}
	if h := ranges.all(); h[len(h)-1].Get("Range") != "bytes=1234-1733" {
		t.Errorf("Range header %q", h[len(h)-1].Get("Range"))
	}
	// Past the end of the file: what there is.
	if got, err := c.FetchRange(ctx, srv.URL+"/a.tif", 9900, 500); err != nil || !bytes.Equal(got, file[9900:]) {
		t.Errorf("FetchRange at the end = %d bytes, %v", len(got), err)
	}
	// A server that ignores Range: refused, naming why, without reading the file.
	var se *Error
	_, err = c.FetchRange(ctx, srv.URL+"/ignores.tif", 100, 500)
	if !errors.As(err, &se) || se.Kind != KindUnsupported || !strings.Contains(se.Message, "ignored the Range request") {
		t.Errorf("FetchRange from a server ignoring Range = %v, want unsupported naming Range", err)
	}
	_, err = c.FetchRange(ctx, srv.URL+"/ignores.tif", 0, 500)
	if !errors.As(err, &se) || se.Kind != KindUnsupported || !strings.Contains(se.Message, "not read past 500 bytes") {
		t.Errorf("FetchRange from offset 0 of a server ignoring Range = %v, want unsupported", err)
	}
	// ... except that the whole of a file shorter than the range is the range.
	if got, err := c.FetchRange(ctx, srv.URL+"/small.tif", 0, 16384); err != nil || !bytes.Equal(got, file[:100]) {
		t.Errorf("FetchRange of a short file = %d bytes, %v", len(got), err)
	}
	if _, err := c.FetchRange(ctx, srv.URL+"/wrong.tif", 500, 10); !errors.As(err, &se) || !strings.Contains(se.Message, "Content-Range") {
		t.Errorf("FetchRange answered with another range = %v", err)
	}
	var pe *ParamError
	if _, err := c.FetchRange(ctx, srv.URL+"/a.tif", -1, 10); !errors.As(err, &pe) {
		t.Errorf("FetchRange(-1) = %v, want a ParamError", err)
	}
	if _, err := c.FetchRange(ctx, "s3://bucket/a.tif", 0, 10); !errors.As(err, &pe) {
		t.Errorf("FetchRange s3 = %v, want a ParamError", err)
	}
}

// An asset host that is not the catalog's origin may be any service (an
// href can name an internal one): what its answers say is not read back
// through an error, neither an error body's message nor a header.
func TestFetchRangeDoesNotEchoAnotherOrigin(t *testing.T) {
	catalog := httptest.NewServer(http.NotFoundHandler())
	defer catalog.Close()
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/denied":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"message":"QZSECRET internal token"}`))
		case "/range":
			w.Header().Set("Content-Range", "bytes QZSECRET")
			w.WriteHeader(http.StatusPartialContent)
			_, _ = w.Write([]byte("0123456789"))
		}
	}))
	defer other.Close()
	c, _ := New(catalog.URL, Options{})
	for _, path := range []string{"/denied", "/range"} {
		_, err := c.FetchRange(context.Background(), other.URL+path, 0, 10)
		if err == nil {
			t.Errorf("%s: no error", path)
			continue
		}
		if strings.Contains(err.Error(), "QZ") {
			t.Errorf("%s: the error quotes the host: %v", path, err)
		}
	}
}
