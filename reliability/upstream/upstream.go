// Package upstream reads what an upstream HTTP answer may show about
// itself: the human message of an error body (a JSON message member, or a
// catalog's own short plain-text error; any other body gets a description
// that never echoes it), trimmed to a message's length, and the
// Retry-After header. The reliability layer needs both for its denials, and
// stacclient for its typed errors; one implementation keeps the two from
// telling the model different things about the same answer.
package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stacmcp/stac-mcp/reliability/origin"
	"github.com/stacmcp/stac-mcp/reliability/redact"
)

// MaxMessageRunes is how much of an upstream message is kept.
const MaxMessageRunes = 300

// messageKeys are the members servers put their explanation in:
// stac-server "description", stac-fastapi "detail", API Gateway "message",
// RFC 9457 "title"/"detail".
var messageKeys = []string{"description", "detail", "message", "title", "error"}

// Message extracts a short human explanation from an error body:
// the first string message member of a JSON object, else its first
// structured one (FastAPI validation errors), whitespace collapsed and cut
// to MaxMessageRunes with a visible "…". Any other body (HTML, plain text,
// JSON without a message member) is described by its content type and size
// and never echoed: a URL the model chose may point at a service that is not
// a catalog, and its answer must not be read back through an error.
func Message(contentType string, body []byte) string {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return ""
	}
	var obj map[string]json.RawMessage
	if trimmed[0] == '{' && utf8.Valid(trimmed) && json.Unmarshal(trimmed, &obj) == nil {
		var structured json.RawMessage
		for _, key := range messageKeys {
			raw, ok := obj[key]
			if !ok || string(raw) == "null" {
				continue
			}
			var s string
			if json.Unmarshal(raw, &s) != nil {
				if structured == nil {
					structured = raw
				}
				continue
			}
			if s = strings.TrimSpace(s); s != "" {
				return TrimMessage(s)
			}
		}
		if structured != nil {
			return TrimMessage(string(structured))
		}
		return DescribeBody(contentType, len(body)) + ", a JSON object without a message member"
	}
	return DescribeBody(contentType, len(body))
}

// MaxShownTextBytes is the largest plain-text error body CatalogMessage
// shows: a catalog's own error text is a sentence or two ("collection is
// required"); a longer text body is a page or a dump, and is described.
const MaxShownTextBytes = 2048

// CatalogMessage is Message for an answer from a catalog's own origin: a
// short printable text body (text/plain or untyped, valid UTF-8, at most
// MaxShownTextBytes, no binary) is shown too, because a catalog that answers
// "422 text/plain: collection is required" tells the model exactly what to
// fix. It is shown cleaned: control and format characters
// removed (no terminal escapes, no bidi overrides), credentials redacted
// (redact.Secrets plus key=value, Bearer and AWS-key forms), whitespace
// collapsed and cut to MaxMessageRunes. HTML, XML and JSON without a message
// member stay described: they are pages or documents, not a message.
func CatalogMessage(contentType string, body []byte) string {
	msg := Message(contentType, body)
	if !strings.HasSuffix(msg, "answer (not shown)") {
		return msg
	}
	if text, ok := printableText(contentType, body); ok {
		return text
	}
	return msg
}

// printableText is body as a one-line message, when it is short plain text.
func printableText(contentType string, body []byte) (string, bool) {
	if len(body) > MaxShownTextBytes || !utf8.Valid(body) || bytes.IndexByte(body, 0) >= 0 {
		return "", false
	}
	if contentType != "" {
		mediaType, _, err := mime.ParseMediaType(contentType)
		if err != nil || mediaType != "text/plain" {
			return "", false
		}
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] == '<' || trimmed[0] == '{' || trimmed[0] == '[' {
		return "", false // markup or JSON sent as text: a document, not a message
	}
	var b strings.Builder
	controls := 0
	for _, r := range ansiEscape.ReplaceAllString(string(trimmed), "") {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r):
			controls++ // an escape sequence's ESC, a bidi override: dropped
		default:
			b.WriteRune(r)
		}
	}
	if controls > 8 {
		return "", false // mostly not text
	}
	text := TrimMessage(redactText(b.String()))
	return text, text != ""
}

// ansiEscape is a terminal control sequence (colours, cursor moves), dropped
// whole rather than leaving "[31m" behind.
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// secretAssignment is a credential written as name=value or name: value in
// free text (password=..., "api_key": ..., X-Api-Key: ...).
var secretAssignment = regexp.MustCompile(`(?i)\b([a-z0-9_.-]*(?:key|token|secret|passw|pwd|signature|credential|session)[a-z0-9_.-]*["']?\s*[:=]\s*["']?)[^\s"',;&]+`)

// bearer is an Authorization value quoted in text; awsKey an AWS access key
// id; jwt a JSON Web Token.
var (
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[a-z0-9._~+/=-]{8,}`)
	awsKey = regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)
	jwt    = regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*`)
)

// redactText hides the credentials a catalog's error text may quote back
// (the request's own URL with its key, an Authorization header).
func redactText(s string) string {
	s = redact.Secrets(s)
	s = secretAssignment.ReplaceAllString(s, "${1}REDACTED")
	s = bearer.ReplaceAllString(s, "${1} REDACTED")
	s = awsKey.ReplaceAllString(s, "REDACTED")
	return jwt.ReplaceAllString(s, "REDACTED")
}

// catalogOriginKey marks a request whose error answers may be shown as a
// catalog's own text (WithCatalogOrigin).
type catalogOriginKey struct{}

// WithCatalogOrigin marks ctx: requests made with it go to the catalog whose
// origin (origin.Of) is given, and an error answer from that origin may be
// shown as the catalog's text (CatalogMessage). The STAC client sets it for
// catalogs it trusts to be catalogs; an answer from any other origin (a
// redirect elsewhere, an asset host) is still only described.
func WithCatalogOrigin(ctx context.Context, catalogOrigin string) context.Context {
	return context.WithValue(ctx, catalogOriginKey{}, catalogOrigin)
}

// describeOnlyKey marks a request whose error answers from other origins
// than the catalog's are only described (WithDescribedAnswers).
type describeOnlyKey struct{}

// WithDescribedAnswers marks ctx: an error answer to a request made with it
// is described only (DescribeBody), its JSON message member not shown,
// unless it comes from the catalog's origin (WithCatalogOrigin). The STAC
// client sets it for an asset's bytes: an href may reach any service, an
// internal one included, whose answer must not be read back through an
// error.
func WithDescribedAnswers(ctx context.Context) context.Context {
	return context.WithValue(ctx, describeOnlyKey{}, true)
}

// MessageOf is the message of resp's error body: CatalogMessage when the
// request was marked with WithCatalogOrigin and resp came from that origin,
// else a description when it was marked with WithDescribedAnswers, else
// Message.
func MessageOf(resp *http.Response, body []byte) string {
	contentType := resp.Header.Get("Content-Type")
	if req := resp.Request; req != nil && req.URL != nil {
		if want, ok := req.Context().Value(catalogOriginKey{}).(string); ok && want != "" && origin.Of(req.URL) == want {
			return CatalogMessage(contentType, body)
		}
		if describe, _ := req.Context().Value(describeOnlyKey{}).(bool); describe {
			if len(bytes.TrimSpace(body)) == 0 {
				return ""
			}
			return DescribeBody(contentType, len(body))
		}
	}
	return Message(contentType, body)
}

// DescribeBody says what an answer was without showing it: "a 1532-byte
// text/html answer (not shown)".
func DescribeBody(contentType string, size int) string {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType == "" || len(mediaType) > 80 {
		mediaType = "untyped"
	}
	return fmt.Sprintf("a %d-byte %s answer (not shown)", size, mediaType)
}

var spaceRun = regexp.MustCompile(`\s+`)

// TrimMessage collapses whitespace and cuts s at MaxMessageRunes
// characters, marking the cut with "…".
func TrimMessage(s string) string {
	s = strings.TrimSpace(spaceRun.ReplaceAllString(strings.ToValidUTF8(s, "?"), " "))
	if utf8.RuneCountInString(s) <= MaxMessageRunes {
		return s
	}
	return string([]rune(s)[:MaxMessageRunes]) + "…"
}

// ParseRetryAfter reads a Retry-After value: non-negative delay-seconds or
// an HTTP date in any of the RFC 9110 forms. A date in the past means "now"
// (0). ok is false when the value is absent or unparsable.
func ParseRetryAfter(value string, now time.Time) (wait time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	when, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(when.Sub(now), 0), true
}
