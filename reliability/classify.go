package reliability

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"

	"github.com/stacmcp/stac-mcp/reliability/origin"
)

// Error classes, used in logs, denials and the retry decision.
const (
	classOK             = "ok"
	classHTTP5xx        = "http_5xx"
	classThrottled      = "http_429"
	classHTTP4xx        = "http_4xx"
	classNotImplemented = "http_501_505"
	classTransport      = "transport"
	classNeverSent      = "connect"
	classAttemptTimeout = "attempt_timeout"
	classBodyRead       = "body_read"
	classTooLarge       = "too_large"
	classTLS            = "tls"
	classRedirect       = "redirect"
	classDNS            = "dns_not_found"
	classBadRequest     = "invalid_request"
	classCircuitOpen    = "circuit_open"
	classNetworkDenied  = "network_denied"
	classCancelled      = "cancelled"
	classLocalLimit     = "local_limit" // a limit of this server: host table full, body budget spent
)

// outcome is the verdict on one attempt.
type outcome struct {
	class     string
	retryable bool
	// neverSent marks failures where the request provably did not reach the
	// server (the connection was never established), which may be retried
	// without a backoff wait.
	neverSent bool
}

// errCircuitOpen is the attempt transport refusing a request to a host
// whose breaker is open.
var errCircuitOpen = errors.New("circuit breaker open for this host")

// attemptTimeoutError is one attempt exceeding Policy.AttemptTimeout while the
// tool deadline was still ahead.
type attemptTimeoutError struct{ limit string }

func (e *attemptTimeoutError) Error() string {
	return "upstream attempt timed out after " + e.limit
}
func (e *attemptTimeoutError) Timeout() bool { return true }

// bodyTooLargeError is a response body over Policy.MaxBodyBytes.
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string {
	return "upstream response body exceeds the " + FormatBytes(e.limit) + " cap"
}

// isLocalLimit reports a refusal by one of this server's own resource
// limits, which says nothing about the catalog.
func isLocalLimit(err error) bool {
	return errors.As(err, new(*bodyBudgetError)) || errors.As(err, new(*hostLimitError))
}

// bodyReadError is a failure while reading a response whose headers arrived.
type bodyReadError struct{ err error }

func (e *bodyReadError) Error() string { return "reading upstream response body: " + e.err.Error() }
func (e *bodyReadError) Unwrap() error { return e.err }

// classify decides whether one attempt failed in a way worth retrying. The
// caller has already ruled out the tool deadline and caller cancellation.
func classify(resp *http.Response, err error) outcome {
	if err == nil {
		return classifyStatus(resp.StatusCode)
	}
	var timeoutErr *attemptTimeoutError
	var tooLarge *bodyTooLargeError
	var bodyErr *bodyReadError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var denied *NetworkDeniedError
	switch {
	case errors.Is(err, errCircuitOpen):
		return outcome{class: classCircuitOpen}
	case isLocalLimit(err):
		return outcome{class: classLocalLimit}
	case errors.As(err, &denied):
		return outcome{class: classNetworkDenied}
	case errors.As(err, &timeoutErr):
		return outcome{class: classAttemptTimeout, retryable: true}
	case errors.As(err, &tooLarge):
		return outcome{class: classTooLarge}
	case errors.Is(err, context.Canceled):
		return outcome{class: classCancelled}
	case isTLSError(err):
		return outcome{class: classTLS}
	case errors.Is(err, origin.ErrTooManyRedirects):
		return outcome{class: classRedirect}
	case errors.As(err, &bodyErr):
		return outcome{class: classBodyRead, retryable: true}
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return outcome{class: classDNS}
	case strings.Contains(err.Error(), "unsupported protocol scheme"),
		strings.Contains(err.Error(), "invalid header"):
		return outcome{class: classBadRequest}
	case errors.Is(err, syscall.ECONNREFUSED) && refusedOnLoopback(err):
		// Nothing listens on that port of this machine: it will not start
		// listening within a backoff, so a retry only delays the answer
		// (a stopped local catalog was answered "retrying about 1.6s from now").
		return outcome{class: classNeverSent, neverSent: true}
	case errors.Is(err, syscall.ECONNREFUSED),
		errors.As(err, &opErr) && opErr.Op == "dial":
		return outcome{class: classNeverSent, retryable: true, neverSent: true}
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.EPIPE):
		return outcome{class: classTransport, retryable: true}
	}
	// Anything else from the network stack (protocol errors, closed idle
	// connections, temporary DNS failures) is transient more often than not.
	return outcome{class: classTransport, retryable: true}
}

// refusedOnLoopback reports a connection refused by a loopback address.
func refusedOnLoopback(err error) bool {
	var opErr *net.OpError
	if !errors.As(err, &opErr) || opErr.Addr == nil {
		return false
	}
	host, _, splitErr := net.SplitHostPort(opErr.Addr.String())
	if splitErr != nil {
		host = opErr.Addr.String()
	}
	addr, parseErr := netip.ParseAddr(host)
	return parseErr == nil && addr.Unmap().IsLoopback()
}

func classifyStatus(status int) outcome {
	switch {
	case status == http.StatusTooManyRequests:
		return outcome{class: classThrottled, retryable: true}
	case status == http.StatusNotImplemented || status == http.StatusHTTPVersionNotSupported:
		return outcome{class: classNotImplemented}
	case status >= 500:
		return outcome{class: classHTTP5xx, retryable: true}
	case status >= 400:
		return outcome{class: classHTTP4xx}
	}
	return outcome{class: classOK}
}

func isTLSError(err error) bool {
	var verify *tls.CertificateVerificationError
	var unknownAuthority x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	return errors.As(err, &verify) || errors.As(err, &unknownAuthority) || errors.As(err, &hostname) ||
		errors.As(err, &invalid) || errors.As(err, &record) || errors.As(err, &alert)
}

// statusClass is the label for upstream_requests_total.
func statusClass(resp *http.Response, err error) string {
	if err != nil || resp == nil {
		return "error"
	}
	switch {
	case resp.StatusCode >= 500:
		return "5xx"
	case resp.StatusCode >= 400:
		return "4xx"
	case resp.StatusCode >= 300:
		return "3xx"
	}
	return "2xx"
}
