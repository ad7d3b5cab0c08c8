package stacclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability"
)

// fetchedBody is a successful (2xx) response, read in full under the size cap.
type fetchedBody struct {
	status int
	url    *url.URL // the URL that answered, after redirects
	header http.Header
	body   []byte
	// contentLength is the declared length (-1 unknown); for HEAD it is the
	// size of the resource, not of the (empty) body read.
	contentLength int64
}

// catalogHeaderNamesKey carries the names of the catalog-only headers of a
// request into CheckRedirect, which strips them when a redirect leaves the
// catalog's origin.
type catalogHeaderNamesKey struct{}

// sameOrigin reports whether u has the catalog's scheme, host and port.
func (c *Client) sameOrigin(u *url.URL) bool {
	return originOf(u) == c.origin
}

func originOf(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// send performs one request and returns its 2xx body, or an *Error. accept
// is the Accept header value.
func (c *Client) send(ctx context.Context, r Request, accept string) (*fetchedBody, error) {
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Error{Kind: KindInvalidSTAC, Method: r.Method, URL: r.URL,
			Message: "the catalog gave a URL that is not an absolute http(s) URL", Err: err}
	}
	method := methodOrGet(r.Method)
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(r.Body)
	}
	onOrigin := c.sameOrigin(u)
	var catalogHeaderNames []string
	if onOrigin {
		for name := range c.headers {
			catalogHeaderNames = append(catalogHeaderNames, name)
		}
		for name := range r.Headers {
			catalogHeaderNames = append(catalogHeaderNames, name)
		}
		ctx = context.WithValue(ctx, catalogHeaderNamesKey{}, catalogHeaderNames)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, &Error{Kind: KindTransport, Method: method, URL: r.URL, Message: "could not build the request", Err: err}
	}
	if onOrigin {
		for name, values := range c.headers {
			for _, v := range values {
				req.Header.Add(name, v)
			}
		}
		for name, v := range r.Headers {
			req.Header.Set(name, v)
		}
	}
	req.Header.Set("User-Agent", c.userAgent)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}

	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &Error{Kind: KindTransport, Method: method, URL: r.URL, Message: transportMessage(err), Err: err}
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Only the start of an error page is needed for its message, and an
		// error page over the body cap is still reported by its status.
		head, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBodyBytes))
		return nil, statusError(method, r.URL, resp, head)
	}
	fb := &fetchedBody{status: resp.StatusCode, url: resp.Request.URL, header: resp.Header, contentLength: resp.ContentLength}
	if method == http.MethodHead {
		return fb, nil
	}
	fb.body, err = c.readCapped(resp)
	if err != nil {
		var tooLarge *Error
		if errors.As(err, &tooLarge) {
			tooLarge.Method, tooLarge.URL, tooLarge.Status = method, r.URL, resp.StatusCode
			return nil, tooLarge
		}
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err) // keep errors.Is(err, context.DeadlineExceeded) true
		}
		return nil, &Error{Kind: KindTransport, Status: resp.StatusCode, Method: method, URL: r.URL,
			Message: "the response body was cut off: " + transportMessage(err), Err: err}
	}
	return fb, nil
}

// maxErrorBodyBytes is how much of an error response is read for its message.
const maxErrorBodyBytes = 64 << 10

// readCapped reads the body, failing with KindTooLarge past maxBody bytes
// rather than silently truncating it.
func (c *Client) readCapped(resp *http.Response) ([]byte, error) {
	if resp.ContentLength > c.maxBody {
		return nil, c.tooLargeError(resp.ContentLength)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxBody+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.maxBody {
		return nil, c.tooLargeError(-1)
	}
	return data, nil
}

func (c *Client) tooLargeError(declared int64) *Error {
	msg := fmt.Sprintf("the response body is larger than the %d-byte cap (Options.MaxBodyBytes)", c.maxBody)
	if declared > 0 {
		msg = fmt.Sprintf("the response declares %d bytes, over the %d-byte cap (Options.MaxBodyBytes)", declared, c.maxBody)
	}
	return &Error{Kind: KindTooLarge, Message: msg + "; ask for fewer items (a smaller limit) or exclude fields"}
}

// transportMessage is a short description of a failure without an HTTP answer.
func transportMessage(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the deadline passed before the catalog answered"
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	}
	return reliability.TrimMessage(err.Error())
}

// checkRedirect removes catalog-only headers when a redirect leaves the
// catalog's origin, then defers to the caller's own redirect policy.
func (c *Client) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if !c.sameOrigin(req.URL) {
			if names, ok := req.Context().Value(catalogHeaderNamesKey{}).([]string); ok {
				for _, name := range names {
					req.Header.Del(name)
				}
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// requireList is a getJSON check for a list member the document must have:
// a nil slice after decoding means the JSON had no such member, which is
// reported as "the JSON has no <what>".
func requireList[T any](list *[]T, what string) func() string {
	return func() string {
		if *list == nil {
			return "the JSON has no " + what
		}
		return ""
	}
}

// getJSON fetches r and decodes the body into dst; what names the expected
// STAC object for error messages. validate (optional) rejects JSON that
// decoded but is not that object.
func (c *Client) getJSON(ctx context.Context, r Request, accept string, dst any, what string, validate func() string) (*fetchedBody, error) {
	fb, err := c.send(ctx, r, accept)
	if err != nil {
		return nil, err
	}
	if err := decodeBody(fb.body, dst); err != nil {
		return fb, &Error{Kind: KindInvalidSTAC, Status: fb.status, Method: methodOrGet(r.Method), URL: r.URL,
			Message: fmt.Sprintf("expected a STAC %s as JSON, got: %s", what, reliability.TrimMessage(bodyPreview(fb.body))), Err: err}
	}
	if validate != nil {
		if problem := validate(); problem != "" {
			return fb, &Error{Kind: KindInvalidSTAC, Status: fb.status, Method: methodOrGet(r.Method), URL: r.URL,
				Message: fmt.Sprintf("expected a STAC %s: %s", what, problem)}
		}
	}
	return fb, nil
}

// decodeBody parses by content, not by media type: static catalogs are often
// served as text/plain. A UTF-8 byte order mark is tolerated.
func decodeBody(body []byte, dst any) error {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("empty body")
	}
	return json.Unmarshal(body, dst)
}

func bodyPreview(body []byte) string {
	if len(body) == 0 {
		return "an empty body"
	}
	if len(body) > 400 {
		body = body[:400]
	}
	return strings.ToValidUTF8(string(body), "?")
}

func methodOrGet(m string) string {
	if m == "" {
		return http.MethodGet
	}
	return strings.ToUpper(m)
}
