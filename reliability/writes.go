package reliability

import (
	"context"
	"errors"
	"net/http"
)

// Side-effect classes, the first field of the retry-budget checklist: what a
// tool call may change upstream. Reads may be retried freely; the others
// only under an idempotency key (adr/0014-idempotent-writes.md).
const (
	SideEffectRead   = "read"
	SideEffectCreate = "create"
	SideEffectUpdate = "update"
	SideEffectDelete = "delete"
)

// WriteNote is what a write tool tells the layer about its call, for the
// receipt, the denial and the write metrics.
type WriteNote struct {
	SideEffect     string // SideEffectCreate, …
	IdempotencyKey string
	// ReplayDecision is how the write reached its outcome, in the write
	// protocol's words (tools/internal/writeflow: executed, duplicate,
	// looked-up, replayed); empty while undecided (a denial before anything
	// was sent). The layer records it as given.
	ReplayDecision        string
	Duplicate             bool   // the stored outcome of an earlier call was returned
	OriginalCorrelationID string // of the call whose outcome a duplicate returns
}

func (n WriteNote) writes() bool { return n.SideEffect != "" && n.SideEffect != SideEffectRead }

// NoteWrite records n on the tool call ctx belongs to (a no-op outside Run).
// A later call replaces the earlier note.
func NoteWrite(ctx context.Context, n WriteNote) {
	if r := recordFrom(ctx); r != nil && r.insideRun {
		r.update(func(c *callRecord) { c.write = n })
	}
}

// CurrentReceipt is the receipt of the tool call ctx belongs to, as it
// stands now (a write stores it with its outcome, so that a duplicate can
// name the call that did the work).
func CurrentReceipt(ctx context.Context) (Receipt, bool) {
	r := recordFrom(ctx)
	if r == nil || !r.insideRun {
		return Receipt{}, false
	}
	return r.receipt(), true
}

// NotSent reports an error after which the catalog provably never saw the
// request: the breaker refused it, or its only attempt could not connect.
// A write that failed this way changed nothing and may be sent again.
func NotSent(err error) bool {
	var d *Denial
	if !errors.As(err, &d) {
		return false
	}
	return d.Attempts == 0 && (d.Code == CodeCircuitOpen || d.Code == CodeBudgetExhausted) ||
		d.Attempts == 1 && d.ErrorClass == classNeverSent
}

// oneAttemptKey marks a context whose requests are sent at most once.
type oneAttemptKey struct{}

// OneAttempt returns a context whose requests the layer sends once (and
// net/http never replays), even a PUT or DELETE with an Idempotency-Key,
// which the policy would otherwise retry. A caller that recovers a lost
// answer itself (a write tool: look the result up before any replay) uses
// it, so that a retry never applies a write twice or overwrites a change
// made between two attempts.
func OneAttempt(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneAttemptKey{}, true)
}

// sendOnce reports a request the layer must not send more than once.
func sendOnce(req *http.Request) bool {
	once, _ := req.Context().Value(oneAttemptKey{}).(bool)
	return once || !idempotent(req)
}

// Recovery actions: what a caller may do after a denial (the checklist's
// "recovery action allowed next").
const (
	// RecoveryRetry: call again with the same arguments, after retry_at
	// when it is given (reads).
	RecoveryRetry = "retry"
	// RecoveryRetrySameKey: call again with the same arguments and the
	// same idempotency_key, after retry_at when given. A new key could
	// apply the write twice.
	RecoveryRetrySameKey = "retry_same_key"
	// RecoveryFixRequest: change the arguments; the same call fails the same way.
	RecoveryFixRequest = "fix_request"
	// RecoveryNewKey: the key belongs to other arguments; send those again
	// to get their outcome, or use a new key for these.
	RecoveryNewKey = "new_key"
)

// recoveryFor is the recovery a denial code allows.
func recoveryFor(code string, write bool) string {
	switch code {
	case CodeNotRetryable:
		return RecoveryFixRequest
	case CodeIdempotencyConflict:
		return RecoveryNewKey
	case CodeInFlight, CodeOutcomeUnknown:
		return RecoveryRetrySameKey
	}
	if write {
		return RecoveryRetrySameKey
	}
	return RecoveryRetry
}
