package reliability

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file reads what an upstream answer says about itself: the human
// message of an error body and the Retry-After header. The reliability
// layer needs both for its denials, and stacclient for its typed errors;
// one implementation keeps the two from telling the model different things
// about the same answer.

// MaxMessageRunes is how much of an upstream message is kept.
const MaxMessageRunes = 300

// upstreamMessageKeys are the members servers put their explanation in:
// stac-server "description", stac-fastapi "detail", API Gateway "message",
// RFC 9457 "title"/"detail".
var upstreamMessageKeys = []string{"description", "detail", "message", "title", "error"}

// UpstreamMessage extracts a short human explanation from an error body:
// the first string message member of a JSON object, else its first
// structured one (FastAPI validation errors), else the text with HTML
// reduced to what a person would read; whitespace collapsed and cut to
// MaxMessageRunes with a visible "…".
func UpstreamMessage(body []byte) string {
	body = []byte(strings.TrimSpace(string(body)))
	if len(body) == 0 {
		return ""
	}
	if !utf8.Valid(body) {
		return fmt.Sprintf("(%d bytes of non-text body)", len(body))
	}
	var obj map[string]json.RawMessage
	if body[0] == '{' && json.Unmarshal(body, &obj) == nil {
		var structured json.RawMessage
		for _, key := range upstreamMessageKeys {
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
		return TrimMessage(string(body))
	}
	return TrimMessage(htmlToText(string(body)))
}

var (
	htmlDropBlocks = regexp.MustCompile(`(?is)<(script|style|head)\b.*?</(script|style|head)>|<!--.*?-->|<!doctype[^>]*>`)
	htmlTitle      = regexp.MustCompile(`(?is)<title[^>]*>.*?</title>`)
	htmlTag        = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlHeadingEnd = regexp.MustCompile(`(?i)</h[1-6]\s*>`)
	spaceRun       = regexp.MustCompile(`\s+`)
)

// htmlToText keeps the readable text of an HTML error page. The <title> is
// dropped when the page has a body, because it usually repeats the heading.
func htmlToText(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	s = htmlDropBlocks.ReplaceAllString(s, " ")
	if withoutTitle := htmlTitle.ReplaceAllString(s, " "); strings.TrimSpace(htmlTag.ReplaceAllString(withoutTitle, "")) != "" {
		s = withoutTitle
	}
	s = htmlHeadingEnd.ReplaceAllString(s, ": ") // "Unauthorized: The server could not…"
	s = htmlTag.ReplaceAllString(s, " ")
	s = strings.TrimSpace(spaceRun.ReplaceAllString(html.UnescapeString(s), " "))
	return strings.TrimRight(s, ": ")
}

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
