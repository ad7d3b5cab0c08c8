package tools

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progress sends notifications/progress for one tool call when the client
// asked for them (a progressToken in the request's _meta). Tools report a
// step per upstream page or HEAD probe, so a client can show that a long
// search is moving. Without a token every method is a no-op, so tools call
// it unconditionally.
type progress struct {
	session *mcp.ServerSession
	token   any

	mu    sync.Mutex // HEAD probes report from several goroutines
	steps float64
}

// newProgress returns the reporter for c's request (a no-op one when the
// client sent no progress token).
func newProgress(c *Call) *progress {
	if c == nil || c.Request == nil || c.Request.Params == nil || c.Request.Session == nil {
		return &progress{}
	}
	return &progress{session: c.Request.Session, token: c.Request.Params.GetProgressToken()}
}

// step reports one unit of work done. total is the number of steps
// expected, or 0 when unknown (paging ends when the catalog says so).
// Progress counts steps, so it increases with every notification as the
// protocol requires, even when a page brought no new items.
func (p *progress) step(ctx context.Context, total int, format string, args ...any) {
	if p == nil || p.token == nil || p.session == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock() // held while sending, so notifications leave in order
	p.steps++
	params := &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: p.steps, Message: fmt.Sprintf(format, args...)}
	if total > 0 && float64(total) >= p.steps {
		params.Total = float64(total)
	}
	// A failed notification (the client went away) must not fail the call:
	// the result is what matters, and cancellation arrives through ctx.
	_ = p.session.NotifyProgress(ctx, params)
}

type progressKey struct{}

// withProgress puts p in ctx for helpers that only see a context (the
// collection scans, the HEAD probes).
func withProgress(ctx context.Context, p *progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressFrom returns the reporter in ctx, or a no-op one.
func progressFrom(ctx context.Context) *progress {
	if p, ok := ctx.Value(progressKey{}).(*progress); ok {
		return p
	}
	return &progress{}
}
