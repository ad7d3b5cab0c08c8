package stacserver

import "fmt"

// apiError is an error answered as {"code":..., "description":...}.
type apiError struct {
	status      int
	code        string
	description string
}

func (e *apiError) Error() string { return e.description }

// badParam is a 400 naming the parameter, what was received and what is
// accepted.
func badParam(param, got, accepted, reason string) *apiError {
	if len(got) > 200 {
		got = got[:200] + "…"
	}
	return &apiError{status: 400, code: "BadRequest", description: fmt.Sprintf(
		"parameter %q: %s (received %q; accepted: %s)", param, reason, got, accepted)}
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: 400, code: "BadRequest", description: fmt.Sprintf(format, args...)}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{status: 404, code: "NotFound", description: fmt.Sprintf(format, args...)}
}
