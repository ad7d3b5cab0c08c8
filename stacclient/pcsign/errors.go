package pcsign

import (
	"errors"
	"strconv"
	"strings"
)

// ErrSigningFailed matches (with errors.Is) every error of this package: the
// asset hrefs were left unsigned. A tool that gets it can still return the
// item, saying that its assets are unsigned and why.
var ErrSigningFailed = errors.New("planetary computer asset signing failed; asset hrefs left unsigned")

// Error says why a token could not be had for a collection: the request
// made, the answer (status and trimmed body) when there was one, and the
// cause.
type Error struct {
	Collection string // the collection whose token was wanted
	URL        string // the token URL requested; empty when nothing was sent
	Status     int    // HTTP status of the answer; 0 when there was none
	Body       string // the answer's body, trimmed (the trim is marked)
	Reason     string // what went wrong, in words
	Err        error  // underlying cause: transport, context, decode or parameter error

	// requesterEnded is set when the request stopped because the context of
	// the call that made it ended; other callers sharing the request may
	// still want the token and ask again.
	requesterEnded bool
}

// Error reads, for example: `planetary computer asset signing failed; asset
// hrefs left unsigned: token for collection "naip": GET
// https://…/token/naip: HTTP 500: token endpoint answered with an error
// status: {"detail":"boom"}`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(ErrSigningFailed.Error())
	b.WriteString(": token for collection ")
	b.WriteString(strconv.Quote(e.Collection))
	if e.URL != "" {
		b.WriteString(": GET ")
		b.WriteString(e.URL)
	}
	if e.Status != 0 {
		b.WriteString(": HTTP ")
		b.WriteString(strconv.Itoa(e.Status))
	}
	if e.Reason != "" {
		b.WriteString(": ")
		b.WriteString(e.Reason)
	}
	if e.Body != "" {
		b.WriteString(": ")
		b.WriteString(e.Body)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap gives the cause, so errors.Is(err, context.Canceled) and
// errors.As(err, **stacclient.ParamError) see through an Error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes every Error match ErrSigningFailed.
func (e *Error) Is(target error) bool { return target == ErrSigningFailed }

// maxBodyInError is how much of an error answer is quoted: enough for a
// JSON "detail" message or the head of an HTML error page.
const maxBodyInError = 300

// trimBody collapses whitespace and cuts the body to maxBodyInError
// characters, saying when it did and how long the body was.
func trimBody(body []byte) string {
	text := strings.Join(strings.Fields(string(body)), " ")
	runes := []rune(text)
	if len(runes) <= maxBodyInError {
		return text
	}
	return string(runes[:maxBodyInError]) + "… (trimmed; " + strconv.Itoa(len(body)) + " bytes in all)"
}
