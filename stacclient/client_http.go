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
	"reflect"
	"strings"

	"github.com/stacmcp/stac-mcp/reliability/origin"
	"github.com/stacmcp/stac-mcp/reliability/upstream"
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

// sameOrigin reports whether u has the catalog's scheme, host and port.
func (c *Client) sameOrigin(u *url.URL) bool {
	return origin.Of(u) == c.origin
}

// showsCatalogText reports whether an error answer from the catalog's own
// origin may be shown as its text (upstream.CatalogMessage): the operator
// configured it, or its landing page answered as STAC.
func (c *Client) showsCatalogText() bool {
	return c.knownCatalog || c.answeredAsCatalog.Load()
}

// send performs one request and returns its 2xx body, or an *Error. accept
// is the Accept header value.
func (c *Client) send(ctx context.Context, r Request, accept string) (*fetchedBody, error) {
	return c.sendCapped(ctx, r, accept, c.maxBody, "the cap is Options.MaxBodyBytes: ask for fewer items (a smaller limit) or exclude fields")
}

// sendCapped is send with a body cap of its own (at most the client's) and
// the advice a too-large answer gets.
func (c *Client) sendCapped(ctx context.Context, r Request, accept string, maxBody int64, tooLargeAdvice string) (*fetchedBody, error) {
	return c.sendRange(ctx, r, accept, "", maxBody, tooLargeAdvice)
}

// sendRange is sendCapped with a Range header (rangeHeader, "" for none),
// sent to any origin: unlike the catalog's headers it carries no secret.
func (c *Client) sendRange(ctx context.Context, r Request, accept, rangeHeader string, maxBody int64, tooLargeAdvice string) (*fetchedBody, error) {
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
	if onOrigin && c.showsCatalogText() {
		ctx = upstream.WithCatalogOrigin(ctx, c.origin)
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
	if rangeHeader != "" {
		req.Header.Set("Range", rangeHeader)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if isFresh(ctx) {
		req.Header.Set("Cache-Control", "no-cache")
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
	c.answered.Store(true)
	fb := &fetchedBody{status: resp.StatusCode, url: resp.Request.URL, header: resp.Header, contentLength: resp.ContentLength}
	if method == http.MethodHead {
		return fb, nil
	}
	fb.body, err = readCapped(resp, min(maxBody, c.maxBody), tooLargeAdvice)
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
func readCapped(resp *http.Response, maxBody int64, advice string) ([]byte, error) {
	if resp.ContentLength > maxBody {
		return nil, tooLargeError(resp.ContentLength, maxBody, advice)
	}
	data, err := readAllSized(io.LimitReader(resp.Body, maxBody+1), resp.ContentLength)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > maxBody {
		return nil, tooLargeError(-1, maxBody, advice)
	}
	return data, nil
}

// readAllSized is io.ReadAll into a buffer of the declared length (the
// reliability layer declares the length of every body it buffered), read
// on past it if the body is longer: io.ReadAll grows from 512 bytes, a
// dozen allocations and copies for a 40 KB item.
func readAllSized(r io.Reader, declared int64) ([]byte, error) {
	if declared < 0 || declared > 64<<20 {
		return io.ReadAll(r)
	}
	data := make([]byte, 0, declared+1) // +1: the read that finds the end needs room
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // longer than declared
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
	}
}

func tooLargeError(declared, maxBody int64, advice string) *Error {
	msg := fmt.Sprintf("the response body is larger than the %d-byte cap", maxBody)
	if declared > 0 {
		msg = fmt.Sprintf("the response declares %d bytes, over the %d-byte cap", declared, maxBody)
	}
	return &Error{Kind: KindTooLarge, Message: msg + "; " + advice}
}

// transportMessage is a short description of a failure without an HTTP answer.
func transportMessage(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "the deadline passed before the catalog answered"
	case errors.Is(err, context.Canceled):
		return "the request was cancelled"
	}
	return upstream.TrimMessage(err.Error())
}

// checkRedirect applies the layer's redirect policy (credentials stay on
// the origin they were configured for; see origin.CheckRedirect), then
// the caller's own. Behind the reliability layer redirects are followed
// inside it and this never runs; it covers a plain *http.Client.
func (c *Client) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if err := origin.CheckRedirect(req, via); err != nil || next == nil {
			return err
		}
		return next(req, via)
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
		msg := fmt.Sprintf("expected a STAC %s as JSON, got %s that is not one", what, notJSONDescription(fb, err))
		if errors.Is(err, errTooDeep) {
			msg = fmt.Sprintf("the %s is nested more than %d levels deep, which no STAC document needs; it was not read", what, maxDocumentDepth)
		}
		return fb, &Error{Kind: KindInvalidSTAC, Status: fb.status, Method: methodOrGet(r.Method), URL: r.URL, Message: msg}
	}
	if validate != nil {
		if problem := validate(); problem != "" {
			return fb, &Error{Kind: KindInvalidSTAC, Status: fb.status, Method: methodOrGet(r.Method), URL: r.URL,
				Message: fmt.Sprintf("expected a STAC %s: %s", what, problem)}
		}
	}
	return fb, nil
}

// maxDocumentDepth bounds the nesting of an upstream document. Real STAC
// documents nest a few dozen levels at most; an answer nested near the
// 1000 levels encoding/json allows would be read, then fail when a tool's
// output (which wraps it a few levels deeper) is checked by the MCP SDK,
// as a protocol error instead of a tool error.
const maxDocumentDepth = 512

var errTooDeep = fmt.Errorf("JSON nested more than %d levels deep", maxDocumentDepth)

// decodeBody parses by content, not by media type: static catalogs are often
// served as text/plain. A UTF-8 byte order mark is tolerated.
func decodeBody(body []byte, dst any) error {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("empty body")
	}
	if nestingExceeds(body, maxDocumentDepth) {
		return errTooDeep
	}
	// A model type decodes itself: encoding/json would validate the body,
	// then scan it once more to find where the value ends before calling
	// UnmarshalJSON, a tenth of a millisecond for a 40 KB item.
	// The validation is kept (the model codec's splitters rely on it); an
	// invalid body still gets encoding/json's error.
	if u, ok := dst.(json.Unmarshaler); ok && !isNilPointer(dst) && json.Valid(body) {
		return u.UnmarshalJSON(bytes.TrimSpace(body))
	}
	return json.Unmarshal(body, dst)
}

// isNilPointer reports whether v is a nil pointer (which json.Unmarshal
// refuses with its own error).
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// notJSONDescription says what came back instead of the expected JSON,
// without echoing it: the body may come from a service that is not a
// catalog (a URL the model chose), so only its type, size and, for JSON of
// the wrong shape, the decoder's complaint about types are shown.
func notJSONDescription(fb *fetchedBody, err error) string {
	if len(bytes.TrimSpace(fb.body)) == 0 {
		return "an empty answer"
	}
	desc := upstream.DescribeBody(fb.header.Get("Content-Type"), len(fb.body))
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		desc += fmt.Sprintf(" (JSON with a %s where a %s belongs", typeErr.Value, typeErr.Type)
		if typeErr.Field != "" {
			desc += " at " + typeErr.Field
		}
		desc += ")"
	}
	return desc
}

func methodOrGet(m string) string {
	if m == "" {
		return http.MethodGet
	}
	return strings.ToUpper(m)
}
