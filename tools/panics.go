package tools

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// A panic in a handler is a bug, but one request must never take the whole
// server down (over http it is shared by every user). Every handler is
// covered twice: recoverAs inside the code that runs a handler (the tool
// adapter, the resource adapter, goroutines the tools start), where the
// panic's own stack is still there to log; and panicMiddleware around
// every MCP method, the last resort for whatever else panics (prompts, the
// completion handler, the SDK's own code). The caller gets an error
// result; the log gets the value and the stack at error level.

// panicError is what a recovered panic becomes.
type panicError struct {
	where string
	value any
}

func (e *panicError) Error() string {
	return fmt.Sprintf("internal error: %s failed on a bug in stac-mcp (%v); nothing was changed, the server keeps running. "+
		"Retrying the same call will fail the same way: try other arguments, and report the bug with the server log, which has the details", e.where, e.value)
}

// recoverAs turns a panic into *errp, logging it with its stack. Use it
// deferred, directly: defer recoverAs(log, "search_items", &err).
func recoverAs(log zerolog.Logger, where string, errp *error) {
	if v := recover(); v != nil {
		*errp = logPanic(log, where, v)
	}
}

// logPanic logs a recovered value and returns it as an error.
func logPanic(log zerolog.Logger, where string, v any) error {
	log.Error().Str("event", "panic").Str("where", where).Str("panic", fmt.Sprint(v)).
		Str("stack", string(debug.Stack())).Msg("recovered from a panic: this is a bug")
	return &panicError{where: where, value: v}
}

// panicMiddleware answers a panicking request with an error instead of
// letting it end the process: an isError result for tools/call (what a
// failed tool returns), a JSON-RPC error for every other method.
func panicMiddleware(log zerolog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				where := method
				if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
					where = p.Name
				}
				perr := logPanic(log, where, v)
				if method == "tools/call" {
					res, err = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: perr.Error()}}}, nil
					return
				}
				res, err = nil, perr
			}()
			return next(ctx, method, req)
		}
	}
}
