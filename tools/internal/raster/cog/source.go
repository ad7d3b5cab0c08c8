package cog

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// Range is a byte range of a file: Len bytes from offset Off.
type Range struct{ Off, Len int64 }

func (r Range) end() int64 { return r.Off + r.Len }

// Source reads byte ranges of one file. ReadRanges returns one slice per
// range, in order; a slice is shorter than asked only when its range runs
// past the end of the file. String names the file (never with credentials
// or signing tokens): it keys the cache, so two sources with the same name
// must serve the same bytes.
type Source interface {
	ReadRanges(ctx context.Context, rs []Range) ([][]byte, error)
	String() string
}

// BytesSource serves ranges of b (tests, in-process files).
func BytesSource(name string, b []byte) Source { return bytesSource{name: name, b: b} }

type bytesSource struct {
	name string
	b    []byte
}

func (s bytesSource) String() string { return s.name }

func (s bytesSource) ReadRanges(ctx context.Context, rs []Range) ([][]byte, error) {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.Off < 0 || r.Len < 0 || r.Off > int64(len(s.b)) {
			return nil, fmt.Errorf("%s: range %d+%d is outside the file's %d bytes", s.name, r.Off, r.Len, len(s.b))
		}
		out[i] = s.b[r.Off:min(r.end(), int64(len(s.b)))]
	}
	return out, nil
}

// ReaderAtSource serves ranges of r, a file of size bytes (a local
// catalog's asset opened by the caller, who decides which paths may be
// read). name keys the cache: a path and its modification time, say.
func ReaderAtSource(name string, r io.ReaderAt, size int64) Source {
	return readerAtSource{name: name, r: r, size: size}
}

type readerAtSource struct {
	name string
	r    io.ReaderAt
	size int64
}

func (s readerAtSource) String() string { return s.name }

func (s readerAtSource) ReadRanges(ctx context.Context, rs []Range) ([][]byte, error) {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.Off < 0 || r.Len < 0 || r.Off > s.size {
			return nil, fmt.Errorf("%s: range %d+%d is outside the file's %d bytes", s.name, r.Off, r.Len, s.size)
		}
		b := make([]byte, min(r.end(), s.size)-r.Off)
		n, err := s.r.ReadAt(b, r.Off)
		if err != nil && !(errors.Is(err, io.EOF) && n == len(b)) {
			return nil, fmt.Errorf("%s: reading %d bytes at %d: %w", s.name, len(b), r.Off, err)
		}
		out[i] = b
	}
	return out, nil
}

// RangeFetcher fetches n bytes of href from offset off with one HTTP
// Range request. *stacclient.Client implements it (FetchRange) with the
// reliability layer's attempts, backoff, budgets, breaker, hedging and
// address rules; it must refuse a server that ignores Range rather than
// read the whole file.
type RangeFetcher interface {
	FetchRange(ctx context.Context, href string, off, n int64) ([]byte, error)
}

// HTTPSource reads ranges of href with f, one request per range (the
// reader merges adjacent ranges before it asks, and reads ranges side by
// side). name is what String returns: the href without a signing token.
func HTTPSource(f RangeFetcher, href, name string) Source {
	return httpSource{f: f, href: href, name: name}
}

type httpSource struct {
	f          RangeFetcher
	href, name string
}

func (s httpSource) String() string { return s.name }

func (s httpSource) ReadRanges(ctx context.Context, rs []Range) ([][]byte, error) {
	out := make([][]byte, len(rs))
	for i, r := range rs {
		b, err := s.f.FetchRange(ctx, s.href, r.Off, r.Len)
		if err != nil {
			return nil, err
		}
		if int64(len(b)) > r.Len {
			return nil, fmt.Errorf("%s: asked for %d bytes at %d, got %d", s.name, r.Len, r.Off, len(b))
		}
		out[i] = b
	}
	return out, nil
}
