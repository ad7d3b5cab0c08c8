package tools

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/tools/advice"
	"github.com/stacmcp/stac-mcp/tools/internal/workbudget"
)

// Keys of a tool result's _meta.
const (
	MetaReceipt = "stac-mcp/receipt" // reliability.Receipt: what the call cost
	MetaDenial  = "stac-mcp/denial"  // reliability.Denial: why the layer gave up
)

// resultMeta is the _meta of a tool result.
func resultMeta(receipt reliability.Receipt, denial *reliability.Denial) mcp.Meta {
	m := mcp.Meta{MetaReceipt: receipt}
	if denial != nil {
		m[MetaDenial] = denial
	}
	return m
}

// callMeta carries one call's receipt from the tool handler out to
// callMetaMiddleware.
//
// Why a holder in the context: when a typed handler returns an error, the
// SDK builds the isError result itself (CallToolResult.SetError) and the
// handler never sees it, so the handler cannot put the receipt in its _meta.
// The receiving middleware wraps "tools/call", so it sees the final result,
// error or not, and copies what the handler recorded here.
type callMeta struct {
	mu      sync.Mutex
	set     bool
	receipt reliability.Receipt
	denial  *reliability.Denial
}

type callMetaKey struct{}

func withCallMeta(ctx context.Context, m *callMeta) context.Context {
	return context.WithValue(ctx, callMetaKey{}, m)
}

// callMetaFrom returns the holder of this call, or nil outside the
// middleware (record on nil is a no-op).
func callMetaFrom(ctx context.Context) *callMeta {
	m, _ := ctx.Value(callMetaKey{}).(*callMeta)
	return m
}

func (m *callMeta) record(receipt reliability.Receipt, err error) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set, m.receipt = true, receipt
	var denial *reliability.Denial
	var busy *workbudget.BusyError
	switch {
	case errors.As(err, &denial):
		m.denial = denial
	case errors.As(err, &busy):
		m.denial = busyDenial(receipt)
	}
}

// busyDenial is the _meta denial of a call that waited in line for one of
// this server's work budgets (CPU slots, decoded pixels) until its wait
// ended: the code the layer gives a request refused by one of its own
// limits, so that a client reads the same retry signal from either, where
// an error without a denial reads as a failure nobody explained.
func busyDenial(receipt reliability.Receipt) *reliability.Denial {
	d := &reliability.Denial{Code: reliability.CodeOverloaded, Attempts: receipt.Attempts,
		ElapsedMS: receipt.ElapsedMS, Recovery: reliability.RecoveryRetry}
	d.Next = advice.Next(d, reliability.Situation{})
	return d
}

// handlerRan reports whether the tool handler ran (and recorded a
// receipt); false means the SDK rejected the call before it.
func (m *callMeta) handlerRan() bool {
	if m == nil {
		return true // outside the middleware nothing can be concluded
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.set
}

// applyTo adds the recorded receipt (and denial) to res's _meta, keeping
// whatever the handler already put there.
func (m *callMeta) applyTo(res *mcp.CallToolResult) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.set {
		return // the SDK rejected the arguments before the handler ran
	}
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	for k, v := range resultMeta(m.receipt, m.denial) {
		if _, ok := res.Meta[k]; !ok {
			res.Meta[k] = v
		}
	}
}

// callMetaMiddleware gives every tools/call a callMeta holder and attaches
// what the handler recorded to the result, including SDK-built error
// results.
func callMetaMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		holder := &callMeta{}
		res, err := next(withCallMeta(ctx, holder), method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
			holder.applyTo(r)
		}
		return res, err
	}
}
