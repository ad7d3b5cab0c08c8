// Package upstream reads what an upstream HTTP answer may show about
// itself: the human message of an error body (or, for any other body, a
// description that never echoes it), trimmed to a message's length, and the
// Retry-After header. The reliability layer needs both for its denials, and
// stacclient for its typed errors; one implementation keeps the two from
// telling the model different things about the same answer.
package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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
