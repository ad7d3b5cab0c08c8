// Package writeflow is the write protocol the five write tools share
// (create_item, update_item, delete_item, create_collection,
// update_collection): Run makes each write happen once whatever the model
// retries (adr/0014-idempotent-writes.md):
//
//  1. Check everything that needs no side effect: the key, the document,
//     the catalog's Transaction class. A refusal here records nothing.
//  2. Claim (caller, tool, key) in the idempotency store. A key with a
//     stored outcome returns it (duplicate: true); a key another call holds
//     is an in_flight denial; a key used with other arguments an
//     idempotency_conflict denial.
//  3. Send the write once. An answer settles it (stored: success or
//     failure). A write that provably never left is released.
//  4. An answer lost after sending (reset, timeout, 5xx) is resolved by
//     looking the document up: there as written means success (looked-up);
//     absent means one replay (replayed). If even the lookup fails, the key
//     is left "unknown" and the next call with it starts at the lookup.
//
// The tools check the arguments and the document (step 1 up to the key's
// own check, which KeyProblem words), build the Op and render its errors;
// this package claims, sends, looks up, replays and stores.
package writeflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
	"github.com/stacmcp/stac-mcp/tools/internal/catalog"
)

// Replay decisions: how a write call reached its outcome (Outcome's
// replay_decision; the layer records it in the receipt, the log and the
// writes_total metric).
const (
	// DecisionExecuted: the write was sent and answered (once).
	DecisionExecuted = "executed"
	// DecisionDuplicate: the key had a stored outcome; nothing was sent.
	DecisionDuplicate = "duplicate"
	// DecisionLookedUp: the answer to the write was lost, and a read showed
	// the catalog holds the document as written, so nothing was sent again.
	DecisionLookedUp = "looked-up"
	// DecisionReplayed: the answer was lost and a read showed the write had
	// not been applied, so it was sent a second (and last) time.
	DecisionReplayed = "replayed"
)

// Outcome is the result of every write tool (the tools' WriteOut), the
// same on the first call and on every duplicate (which only sets
// duplicate: true). It is also what the idempotency store keeps for a key,
// so its JSON is a stored format as well as the tools' output.
type Outcome struct {
	Status         string   `json:"status" jsonschema:"created, updated, deleted, accepted (the catalog queued the write; it is not visible yet) or failed"`
	Operation      string   `json:"operation" jsonschema:"the tool that made the write"`
	SideEffect     string   `json:"side_effect" jsonschema:"create, update or delete"`
	CatalogURL     string   `json:"catalog_url"`
	CollectionID   string   `json:"collection_id"`
	ItemID         string   `json:"item_id,omitempty"`
	Location       string   `json:"location,omitempty" jsonschema:"the written resource's URL, when the catalog gave one"`
	UpstreamStatus int      `json:"upstream_status,omitempty" jsonschema:"the catalog's HTTP status for the write; absent when the outcome was established by looking the document up"`
	IdempotencyKey string   `json:"idempotency_key"`
	ReplayDecision string   `json:"replay_decision" jsonschema:"how the outcome was reached: executed (sent once, answered), looked-up (the answer was lost; a read showed the write applied, so it was not sent again) or replayed (the answer was lost and the write was not applied, so it was sent once more)"`
	Duplicate      bool     `json:"duplicate" jsonschema:"true when this is the stored outcome of an earlier call with the same key: nothing was sent this time"`
	CorrelationID  string   `json:"correlation_id" jsonschema:"the call that made the write (for a duplicate, the first call)"`
	Error          string   `json:"error,omitempty" jsonschema:"why the write failed (status failed)"`
	Notes          []string `json:"notes"`
}

// Op is one write, as a tool hands it to Run.
type Op struct {
	Tool       string
	SideEffect string // reliability.SideEffectCreate, …
	Scope      stacclient.TxScope
	Key        string // the idempotency_key argument
	// Args are the normalised arguments; their fingerprint binds the key.
	Args any
	// Out has the identity fields (operation, collection, item) filled.
	Out Outcome
	// Done is the status word of a success: created, updated, deleted.
	Done string
	// Prepare, when set, runs before each send, on the catalog as it is
	// then (a merge patch checks the document it would produce); an error
	// releases the key: nothing was sent.
	Prepare func(ctx context.Context) error
	// Send makes the write once.
	Send func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error)
	// Applied looks the catalog up (with a fresh read): does it hold the
	// result of the write? An error means it could not tell. Document's
	// Holds and Gone make it.
	Applied func(ctx context.Context) (bool, error)
	// Describe says what was written, for the text block ("item x in collection c").
	Describe string
}

// Env is what a write runs against.
type Env struct {
	// Store keeps the idempotency records.
	Store idempotency.Store
	// Lease is how long the call may hold the key before another call with
	// the same key presumes it died and recovers it.
	Lease time.Duration
	// Caller names who is calling (CallerOf): keys are scoped by it.
	Caller string
	// Catalog is the catalog written to.
	Catalog *catalog.Catalog
	// Logger hears of a record the store could not keep.
	Logger zerolog.Logger
	// Render words a failed write's cause for the model (the tools' error
	// wording); the failure's text and Outcome.Error are what it returns.
	Render func(err error) string
}

// storedOutcome is what the idempotency store keeps for a key: only what
// the repeat cannot rebuild. A repeat has the same arguments (the key's
// fingerprint binds them), so the catalog, the ids, the tool and the key
// come from the repeat itself, and the text is rendered again from these
// fields (headline): no document, URL or text is stored twice, and a
// record stays a few hundred bytes.
type storedOutcome struct {
	Status         string   `json:"s"`
	Location       string   `json:"l,omitempty"`
	UpstreamStatus int      `json:"u,omitempty"`
	ReplayDecision string   `json:"r"`
	CorrelationID  string   `json:"c,omitempty"`
	Error          string   `json:"e,omitempty"`
	Notes          []string `json:"n,omitempty"`
	IsError        bool     `json:"x,omitempty"`
}

// maxStoredError bounds a failure's error text in the store (a catalog's
// error body can be long; the repeat says it was cut).
const maxStoredError = 2048

// Failed is a failure with a structured result: a write whose stored
// outcome is a failure returns it the same way every time (the tools
// return it as an isError result with structuredContent).
type Failed struct {
	Outcome Outcome
	Text    string
	cause   error
}

func (e *Failed) Error() string { return e.Text }
func (e *Failed) Unwrap() error { return e.cause }

// StoreDown refuses a write because the idempotency store did not answer
// its claim: nothing was sent. Its message is phrased for the model.
type StoreDown struct {
	Tool string
	Err  error
}

func (e *StoreDown) Error() string {
	return fmt.Sprintf("%s: nothing was sent: the idempotency store did not answer (%v). Call again later with the same idempotency_key.", e.Tool, e.Err)
}
func (e *StoreDown) Unwrap() error { return e.Err }

// Upper bounds on the store's answers: a store slower than this refuses
// the write rather than hold the call.
const storeTimeout = 5 * time.Second

// Run runs op under its idempotency key (see the package comment). The key
// itself was checked by the caller (KeyProblem).
func Run(ctx context.Context, env Env, op Op) (Outcome, string, error) {
	note := reliability.WriteNote{SideEffect: op.SideEffect, IdempotencyKey: op.Key}
	reliability.NoteWrite(ctx, note)
	if err := env.Catalog.Client.RequireTransactions(ctx, op.Scope); err != nil {
		return Outcome{}, "", err
	}
	key := idempotency.Key{Caller: env.Caller, Tool: op.Tool, Key: op.Key}
	claimCtx, cancel := context.WithTimeout(ctx, storeTimeout)
	claim, err := env.Store.Begin(claimCtx, key, fingerprint(env.Catalog.Key, op.Args), env.Lease)
	cancel()
	var limit *idempotency.LimitError
	if errors.As(err, &limit) {
		return Outcome{}, "", fmt.Errorf("%s: nothing was sent: %w. Repeat an earlier write with its own idempotency_key (that is still answered), or wait for older records to expire", op.Tool, err)
	}
	if err != nil {
		return Outcome{}, "", &StoreDown{Tool: op.Tool, Err: err}
	}
	op.Out.IdempotencyKey, op.Out.SideEffect, op.Out.Operation = op.Key, op.SideEffect, op.Tool
	op.Out.CatalogURL = env.Catalog.Ref
	if op.Out.Notes == nil {
		op.Out.Notes = []string{}
	}
	switch claim.Status {
	case idempotency.Conflict:
		return Outcome{}, "", idempotencyDenial(env, op, reliability.CodeIdempotencyConflict, time.Time{},
			"This idempotency_key was first used with different arguments (another document, id or catalog). To learn the outcome of that write, call again with its original arguments; for a different write, use a new idempotency_key.")
	case idempotency.Busy:
		return Outcome{}, "", idempotencyDenial(env, op, reliability.CodeInFlight, claim.Record.LeaseUntil,
			"Another call with this idempotency_key and these arguments is still running. Wait, then call again with the same key and arguments: you will get its outcome.")
	case idempotency.Completed:
		return duplicateOf(ctx, op, claim.Record.Outcome)
	}
	r := &run{env: env, op: op, key: key, token: claim.Token, note: note}
	if claim.Status == idempotency.Recovering {
		// An earlier call's write may have been applied: look before sending.
		return r.resolve(ctx, nil, true)
	}
	return r.execute(ctx, DecisionExecuted)
}

// run is one claimed write on its way to an outcome.
type run struct {
	env   Env
	op    Op
	key   idempotency.Key
	token string
	note  reliability.WriteNote
}

// answer classifies what a send returned.
type answer int

const (
	answerApplied  answer = iota // a 2xx: the write is done (or queued, 202)
	answerRejected               // a definitive refusal (4xx, 501, 505): nothing applied, stored as the outcome
	answerNotSent                // provably never reached the catalog, or refused before acting (429, 408)
	answerLost                   // sent, and the answer lost or unreliable (reset, timeout, 5xx)
)

func classifyAnswer(res *stacclient.WriteResult, err error) answer {
	if err == nil && res != nil {
		return answerApplied
	}
	if reliability.NotSent(err) {
		return answerNotSent
	}
	var se *stacclient.Error
	var pe *stacclient.ParamError
	var de *stacdoc.Error
	switch {
	case errors.As(err, &pe), errors.As(err, &de):
		return answerNotSent // refused before sending (checked earlier too, so rare)
	case errors.As(err, &se) && se.Kind == stacclient.KindUnsupported:
		return answerNotSent
	case errors.As(err, &se) && (se.Status == http.StatusTooManyRequests || se.Status == http.StatusRequestTimeout):
		return answerNotSent
	case errors.As(err, &se) && se.Status >= 400 && se.Status < 500,
		errors.As(err, &se) && (se.Status == http.StatusNotImplemented || se.Status == http.StatusHTTPVersionNotSupported):
		return answerRejected
	}
	return answerLost
}

// send makes the write once (no layer retry, no net/http replay).
func (r *run) send(ctx context.Context) (*stacclient.WriteResult, error) {
	return r.op.Send(reliability.OneAttempt(ctx), stacclient.WriteOptions{IdempotencyKey: upstreamKey(r.key)})
}

// execute sends the write and settles what its answer says; decision is
// executed for the first send and replayed for the second.
func (r *run) execute(ctx context.Context, decision string) (Outcome, string, error) {
	if r.op.Prepare != nil {
		if err := r.op.Prepare(ctx); err != nil {
			r.end(ctx, func(ctx context.Context) error { return r.env.Store.Release(ctx, r.key, r.token) })
			r.noteDecision(ctx, "")
			return Outcome{}, "", err
		}
	}
	res, err := r.send(ctx)
	switch classifyAnswer(res, err) {
	case answerApplied:
		return r.succeed(ctx, decision, res)
	case answerRejected:
		if decision == DecisionReplayed && r.op.SideEffect != reliability.SideEffectUpdate {
			// A replayed create that finds the document, or a replayed
			// delete that finds none, may be meeting the first send,
			// applied late: look once more before calling it a failure.
			if ok, verr := r.op.Applied(stacclient.Fresh(ctx)); verr == nil && ok {
				return r.succeed(ctx, DecisionLookedUp, nil)
			}
		}
		return r.failed(ctx, decision, err)
	case answerNotSent:
		r.end(ctx, func(ctx context.Context) error { return r.env.Store.Release(ctx, r.key, r.token) })
		r.noteDecision(ctx, "")
		return Outcome{}, "", err
	}
	// The answer was lost; after the one replay, only a lookup may settle it.
	return r.resolve(ctx, err, decision != DecisionReplayed)
}

// resolve finds out whether a write whose answer was lost (cause; nil when
// it was an earlier call's) was applied, and when it was not, sends it once
// more if mayReplay.
func (r *run) resolve(ctx context.Context, cause error, mayReplay bool) (Outcome, string, error) {
	applied, err := r.op.Applied(stacclient.Fresh(ctx))
	switch {
	case err != nil:
		return r.unknown(ctx, cause, err)
	case applied:
		return r.succeed(ctx, DecisionLookedUp, nil)
	case !mayReplay:
		return r.unknown(ctx, cause, errors.New("the replayed write's answer was lost too, and a read shows it not applied (yet)"))
	}
	return r.execute(ctx, DecisionReplayed)
}

// succeed stores and returns a success.
func (r *run) succeed(ctx context.Context, decision string, res *stacclient.WriteResult) (Outcome, string, error) {
	out := r.op.Out
	out.Status, out.ReplayDecision = r.op.Done, decision
	if res != nil {
		out.UpstreamStatus, out.Location = res.Status, res.Location
		if res.Accepted {
			out.Status = "accepted"
		}
	}
	switch decision {
	case DecisionLookedUp:
		out.Notes = append(out.Notes, "The answer to the write was lost; a fresh read showed the catalog holds it as written, so it was not sent again.")
	case DecisionReplayed:
		out.Notes = append(out.Notes, "The answer to the first send was lost and a fresh read showed it had not been applied, so the write was sent once more.")
	}
	return r.record(ctx, out, false, nil)
}

// headline is the first line of a write's text, from its outcome: what
// happened, or why it failed.
func (op Op) headline(out Outcome, isError bool) string {
	var text strings.Builder
	switch {
	case isError:
		text.WriteString(out.Error)
		text.WriteString(" Nothing was written.")
		if out.UpstreamStatus == http.StatusConflict && op.SideEffect == reliability.SideEffectCreate {
			text.WriteString(" It exists already: read it with get_item or get_collection, or replace it with the update tool.")
		}
		return text.String()
	case out.Status == "accepted":
		fmt.Fprintf(&text, "The catalog accepted the write of %s for later processing (HTTP 202): it is not visible yet; check with get_item or get_collection in a little while.", op.Describe)
	default:
		fmt.Fprintf(&text, "%s %s.", capitalize(op.Done), op.Describe)
	}
	if out.UpstreamStatus != 0 {
		fmt.Fprintf(&text, " HTTP %d.", out.UpstreamStatus)
	}
	if out.Location != "" {
		fmt.Fprintf(&text, " Location: %s.", out.Location)
	}
	return text.String()
}

// text is a write's whole text: the headline, then everything the
// structured output says, for a host that forwards only the text.
func (op Op) text(out Outcome, isError bool) string {
	var text strings.Builder
	text.WriteString(op.headline(out, isError))
	fmt.Fprintf(&text, "\nStatus %s: %s (side effect %s) on %s; idempotency_key %q, replay decision %s, correlation_id %s.",
		out.Status, out.Operation, out.SideEffect, out.CatalogURL, op.Key, out.ReplayDecision, out.CorrelationID)
	for _, n := range out.Notes {
		text.WriteString("\nNote: " + n)
	}
	return text.String()
}

// failed stores and returns a definitive failure.
func (r *run) failed(ctx context.Context, decision string, cause error) (Outcome, string, error) {
	out := r.op.Out
	out.Status, out.ReplayDecision = "failed", decision
	var se *stacclient.Error
	if errors.As(cause, &se) {
		out.UpstreamStatus = se.Status
	}
	out.Error = r.env.Render(cause)
	return r.record(ctx, out, true, cause)
}

// record stores the outcome under the key and returns it.
func (r *run) record(ctx context.Context, out Outcome, isError bool, cause error) (Outcome, string, error) {
	if rc, ok := reliability.CurrentReceipt(ctx); ok {
		out.CorrelationID = rc.CorrelationID
	}
	stored := storedOutcome{Status: out.Status, Location: out.Location, UpstreamStatus: out.UpstreamStatus,
		ReplayDecision: out.ReplayDecision, CorrelationID: out.CorrelationID, Error: out.Error, Notes: out.Notes, IsError: isError}
	if len(stored.Error) > maxStoredError {
		stored.Error = strings.ToValidUTF8(stored.Error[:maxStoredError], "") + "… (cut in the idempotency record)"
	}
	raw, _ := json.Marshal(stored) // our own struct always encodes
	var storeErr error
	r.end(ctx, func(ctx context.Context) error {
		ttl := time.Duration(0) // the store's TTL
		if isError {
			// Nothing was applied: keep the refusal only for an immediate
			// repeat, so that it never holds the key (adr/0014 as
			// amended).
			ttl = idempotency.FailureTTL
		}
		storeErr = r.env.Store.Finish(ctx, r.key, r.token, raw, ttl)
		return storeErr
	})
	if storeErr != nil && !errors.Is(storeErr, idempotency.ErrNotHolder) {
		out.Notes = append(out.Notes, "The outcome could not be recorded ("+storeErr.Error()+"): a repeat with the same idempotency_key will look the document up before sending anything.")
	}
	r.noteDecision(ctx, out.ReplayDecision)
	text := r.op.text(out, isError)
	if isError {
		return Outcome{}, "", &Failed{Outcome: out, Text: text, cause: cause}
	}
	return out, text, nil
}

// unknown leaves the key for the next call to resolve and says so.
func (r *run) unknown(ctx context.Context, cause, lookupErr error) (Outcome, string, error) {
	r.end(ctx, func(ctx context.Context) error { return r.env.Store.Abandon(ctx, r.key, r.token) })
	r.noteDecision(ctx, "")
	d := idempotencyDenial(r.env, r.op, reliability.CodeOutcomeUnknown, time.Time{},
		"Call again with the same arguments and idempotency_key (never a new key): the server will look the "+r.op.describeKind()+" up first and send the write again only if it is not there.")
	d.Err = errors.Join(cause, fmt.Errorf("the lookup failed: %w", lookupErr))
	var ld *reliability.Denial
	if errors.As(lookupErr, &ld) {
		d.LastStatus, d.LastMessage, d.ErrorClass, d.RetryAt = ld.LastStatus, ld.LastMessage, ld.ErrorClass, ld.RetryAt
	}
	return Outcome{}, "", d
}

// end runs a store operation even when the call's own deadline is past: a
// write that was sent must leave its record behind.
func (r *run) end(ctx context.Context, f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := f(ctx); err != nil && !errors.Is(err, idempotency.ErrNotHolder) {
		r.env.Logger.Warn().Err(err).Str("tool_name", r.op.Tool).Msg("idempotency store: could not record a write's state")
	}
}

func (r *run) noteDecision(ctx context.Context, decision string) {
	r.note.ReplayDecision = decision
	reliability.NoteWrite(ctx, r.note)
}

// duplicateOf returns a stored outcome unchanged but for duplicate: true;
// what the record does not keep comes from op, the repeat (same
// arguments).
func duplicateOf(ctx context.Context, op Op, raw []byte) (Outcome, string, error) {
	var s storedOutcome
	err := json.Unmarshal(raw, &s)
	if err == nil && s.Status == "" {
		// A record of an older release kept the whole outcome and text.
		var legacy struct {
			Out     Outcome `json:"out"`
			IsError bool    `json:"is_error"`
		}
		if json.Unmarshal(raw, &legacy) == nil && legacy.Out.Status != "" {
			o := legacy.Out
			s = storedOutcome{Status: o.Status, Location: o.Location, UpstreamStatus: o.UpstreamStatus, ReplayDecision: o.ReplayDecision,
				CorrelationID: o.CorrelationID, Error: o.Error, Notes: o.Notes, IsError: legacy.IsError}
		}
	}
	if err != nil || s.Status == "" {
		if err == nil {
			err = errors.New("no status")
		}
		return Outcome{}, "", fmt.Errorf("%s: the stored outcome of this idempotency_key is unreadable (%w); nothing was sent", op.Tool, err)
	}
	reliability.NoteWrite(ctx, reliability.WriteNote{SideEffect: op.SideEffect, IdempotencyKey: op.Key,
		ReplayDecision: DecisionDuplicate, Duplicate: true, OriginalCorrelationID: s.CorrelationID})
	out := op.Out
	out.Status, out.Location, out.UpstreamStatus, out.ReplayDecision = s.Status, s.Location, s.UpstreamStatus, s.ReplayDecision
	out.CorrelationID, out.Error, out.Notes = s.CorrelationID, s.Error, s.Notes
	if out.Notes == nil {
		out.Notes = []string{}
	}
	out.Duplicate = true
	text := fmt.Sprintf("Duplicate (same idempotency_key and arguments as call %s): nothing was sent; this is that call's outcome.\n%s", s.CorrelationID, op.text(out, s.IsError))
	if s.IsError {
		return Outcome{}, "", &Failed{Outcome: out, Text: text}
	}
	return out, text, nil
}

// idempotencyDenial is a typed denial of a write tool.
func idempotencyDenial(env Env, op Op, code string, retryAt time.Time, next string) *reliability.Denial {
	d := &reliability.Denial{Code: code, Host: env.Catalog.Host, Next: next, SideEffect: op.SideEffect, IdempotencyKey: op.Key}
	switch code {
	case reliability.CodeInFlight:
		d.Recovery = reliability.RecoveryRetrySameKey
		if wait := time.Until(retryAt); wait > 0 {
			d.RetryAt, d.RetryAfterMS = retryAt, wait.Milliseconds()
		}
	case reliability.CodeIdempotencyConflict:
		d.Recovery = reliability.RecoveryNewKey
	default:
		d.Recovery = reliability.RecoveryRetrySameKey
	}
	return d
}

func (op Op) describeKind() string {
	if op.Scope == stacclient.TxCollections {
		return "collection"
	}
	return "item"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// isKind reports whether err is a stacclient error of kind k.
func isKind(err error, k stacclient.ErrorKind) bool {
	var se *stacclient.Error
	return errors.As(err, &se) && se.Kind == k
}
