package reliability

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"syscall"
	"testing"

	"github.com/stacmcp/stac-mcp/reliability/origin"
)

func TestClassifyErrors(t *testing.T) {
	wrap := func(err error) error { return &url.Error{Op: "Get", URL: "https://x/", Err: err} }
	cases := []struct {
		name      string
		err       error
		class     string
		retryable bool
		neverSent bool
	}{
		{"refused", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), classNeverSent, true, true},
		// Nothing listens on a loopback port; a retry would not change that.
		{"refused on loopback", wrap(&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9},
			Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), classNeverSent, false, true},
		{"refused on ::1", wrap(&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv6loopback, Port: 9},
			Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), classNeverSent, false, true},
		{"refused elsewhere", wrap(&net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 443},
			Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}), classNeverSent, true, true},
		{"dial unreachable", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("network is unreachable")}), classNeverSent, true, true},
		{"reset", wrap(&net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}), classTransport, true, false},
		{"eof", wrap(io.EOF), classTransport, true, false},
		{"body cut", wrap(&bodyReadError{err: io.ErrUnexpectedEOF}), classBodyRead, true, false},
		{"attempt timeout", wrap(&attemptTimeoutError{limit: "4s"}), classAttemptTimeout, true, false},
		{"dns not found", wrap(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.invalid", IsNotFound: true}}), classDNS, false, false},
		{"dns temporary", wrap(&net.OpError{Op: "read", Err: &net.DNSError{Err: "server misbehaving", Name: "x", IsTemporary: true}}), classTransport, true, false},
		{"untrusted certificate", wrap(x509.UnknownAuthorityError{}), classTLS, false, false},
		{"redirect loop", wrap(origin.ErrTooManyRedirects), classRedirect, false, false},
		{"bad scheme", wrap(errors.New(`unsupported protocol scheme "ftp"`)), classBadRequest, false, false},
		{"too large", wrap(&bodyTooLargeError{limit: 1 << 20}), classTooLarge, false, false},
		{"breaker", wrap(errCircuitOpen), classCircuitOpen, false, false},
		{"cancelled", wrap(context.Canceled), classCancelled, false, false},
		{"other", wrap(fmt.Errorf("net/http: HTTP/1.x transport connection broken: malformed HTTP response")), classTransport, true, false},
	}
	for _, c := range cases {
		got := classify(nil, c.err)
		if got.class != c.class || got.retryable != c.retryable || got.neverSent != c.neverSent {
			t.Errorf("%s: %+v, want class %s retryable %v neverSent %v", c.name, got, c.class, c.retryable, c.neverSent)
		}
	}
}

func TestClassifyStatus(t *testing.T) {
	for status, retry := range map[int]bool{
		200: false, 304: false, 400: false, 401: false, 403: false, 404: false, 408: false, 422: false,
		429: true, 500: true, 501: false, 502: true, 503: true, 504: true, 505: false, 599: true,
	} {
		if got := classifyStatus(status).retryable; got != retry {
			t.Errorf("status %d retryable = %v, want %v", status, got, retry)
		}
	}
}
