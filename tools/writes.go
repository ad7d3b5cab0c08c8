package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/reliability/idempotency"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// This file is what the five write tools (create_item, update_item,
// delete_item, create_collection, update_collection) share: their
// arguments and result, and runWrite, the protocol that makes each write
// happen once whatever the model retries (adr/0014-idempotent-writes.md):
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

// Writes turns the write tools on (Deps.Writes; --allow-writes).
type Writes struct {
	// Store keeps the idempotency records: SQLite on disk, or Redis.
	Store idempotency.Store
	// Lease is how long a call may hold a key before another call with the
	// same key presumes it died and recovers it; 0 means the tool timeout
	// plus 5 s.
	Lease time.Duration
}

// WriteTools are the tools that change catalogs, in the order a model
// should meet them. They are registered only when Deps.Writes is set, and
// form the "write" toolset (Tool.SideEffect says which each one is).
func WriteTools() []Tool {
	return inToolset(ToolsetWrite, CreateItem(), UpdateItem(), DeleteItem(), CreateCollection(), UpdateCollection())
}

// IdempotencyKeyArg is the key every write tool requires.
type IdempotencyKeyArg struct {
	IdempotencyKey string `json:"idempotency_key" jsonschema:"a new key (e.g. a UUID, at most 255 characters) per logical write; the SAME key on every retry of it"`
}

// DocumentArg is a JSON object (a STAC Item or Collection, or a merge
// patch), also accepted as a JSON-encoded string.
type DocumentArg json.RawMessage

func (a *DocumentArg) UnmarshalJSON(b []byte) error { *a = keepRaw(b); return nil }
func (a DocumentArg) MarshalJSON() ([]byte, error)  { return rawOrNull(a) }

func init() {
	argTypeSchemas[reflect.TypeFor[DocumentArg]()] = &jsonschema.Schema{Types: []string{"object", "string"},
		Description: "a JSON object, or its JSON-encoded string"}
}

// object decodes the document; present is false when it was not given.
func (a DocumentArg) object(param string) (doc map[string]any, present bool, err error) {
	v, err := decodeArg(param, a, "a JSON object")
	if err != nil || v == nil {
		return nil, false, err
	}
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return nil, false, nil
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return nil, true, &stacclient.ParamError{Param: param, Got: trimText(s, 200), Reason: "a string that is not JSON: " + err.Error(), Accepted: "a JSON object"}
		}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, true, &stacclient.ParamError{Param: param, Got: trimText(string(a), 200), Reason: "not a JSON object", Accepted: "a JSON object"}
	}
	return m, true, nil
}

// required is object for an argument that must be given.
func (a DocumentArg) required(param, accepted string) (map[string]any, error) {
	doc, present, err := a.object(param)
	if err == nil && !present {
		err = &stacclient.ParamError{Param: param, Got: "nothing", Reason: "missing", Accepted: accepted}
	}
	return doc, err
}

// WriteOut is the result of every write tool, the same on the first call
// and on every duplicate (which only sets duplicate: true).
type WriteOut struct {
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

// writeOp is one write, as a tool hands it to runWrite.
type writeOp struct {
	tool       string
	sideEffect string
	scope      stacclient.TxScope
	key        string
	// args are the normalised arguments; their fingerprint binds the key.
	args any
	// out has the identity fields (operation, collection, item) filled.
	out WriteOut
	// done is the status word of a success: created, updated, deleted.
	done string
	// prepare, when set, runs before each send, on the catalog as it is
	// then (a merge patch checks the document it would produce); an error
	// releases the key: nothing was sent.
	prepare func(ctx context.Context) error
	// send makes the write once.
	send func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error)
	// applied looks the catalog up (with a fresh read): does it hold the
	// result of the write? An error means it could not tell.
	applied func(ctx context.Context) (bool, error)
	// describe says what was written, for the text block ("item x in collection c").
	describe string
}

// storedOutcome is what the idempotency store keeps for a key.
type storedOutcome struct {
	Out     WriteOut `json:"out"`
	Text    string   `json:"text"`
	IsError bool     `json:"is_error"`
}

// failedResult is a failure with a structured result: a write whose
// stored outcome is a failure returns it the same way every time. define's
// adapter returns it as an isError result with structuredContent.
type failedResult struct {
	out   any
	text  string
	cause error
}

func (e *failedResult) Error() string { return e.text }
func (e *failedResult) Unwrap() error { return e.cause }

// Upper bounds on the store's answers: a store slower than this refuses
// the write rather than hold the call.
const storeTimeout = 5 * time.Second

// checkIdempotencyKey refuses a key the store cannot take.
func checkIdempotencyKey(key string) error {
	accepted := "a string of 1 to 255 characters without control characters, e.g. a new UUID per logical write"
	switch {
	case strings.TrimSpace(key) == "":
		return &stacclient.ParamError{Param: "idempotency_key", Got: key, Reason: "empty", Accepted: accepted}
	case len(key) > idempotency.MaxKeyLength:
		return &stacclient.ParamError{Param: "idempotency_key", Got: trimText(key, 60), Reason: fmt.Sprintf("%d bytes long", len(key)), Accepted: accepted}
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return &stacclient.ParamError{Param: "idempotency_key", Got: trimText(key, 60), Reason: "contains a control character", Accepted: accepted}
	}
	return nil
}

// callerOf names who is calling, for the idempotency records: a hash of
// the HTTP bearer token (never the token itself), else the HTTP client's
// name, else "stdio" (stdio and the in-process `call` command, whose
// single user is the operator).
func callerOf(req *mcp.CallToolRequest) string {
	if req == nil || req.Extra == nil {
		return "stdio"
	}
	if ti := req.Extra.TokenInfo; ti != nil && ti.UserID != "" {
		return "user:" + shortHash("stac-mcp user\x00"+ti.UserID)
	}
	if req.Extra.Header == nil {
		return "stdio"
	}
	if scheme, token, ok := strings.Cut(strings.TrimSpace(req.Extra.Header.Get("Authorization")), " "); ok &&
		strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(token) != "" {
		return "token:" + shortHash("stac-mcp token\x00"+strings.TrimSpace(token))
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			return "http-client:" + p.ClientInfo.Name
		}
	}
	return "http"
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// writeFingerprint binds a key to the catalog and the arguments (the key
// itself excluded); JSON encoding sorts map keys, so it is canonical.
func writeFingerprint(catalogKey string, args any) string {
	raw, _ := json.Marshal(map[string]any{"catalog": catalogKey, "args": args}) // decoded JSON always encodes
	return shortHash(string(raw))
}

// upstreamKey is the Idempotency-Key sent to the catalog: derived from the
// record's key, so that every send of one write carries the same value
// while two callers' equal keys differ.
func upstreamKey(k idempotency.Key) string {
	return shortHash("stac-mcp upstream\x00" + k.Caller + "\x00" + k.Tool + "\x00" + k.Key)
}

// runWrite runs op under its idempotency key (see the top of this file).
func runWrite(ctx context.Context, c *Call, op writeOp) (WriteOut, string, error) {
	fail := failWith[WriteOut]()
	if err := checkIdempotencyKey(op.key); err != nil {
		return fail(err)
	}
	w := c.Deps.Writes
	if w == nil || w.Store == nil {
		return fail(errors.New(op.tool + ": writes are not enabled on this server (start it with --allow-writes)"))
	}
	note := reliability.WriteNote{SideEffect: op.sideEffect, IdempotencyKey: op.key}
	reliability.NoteWrite(ctx, note)
	if err := c.Catalog.Client.RequireTransactions(ctx, op.scope); err != nil {
		return fail(err)
	}
	key := idempotency.Key{Caller: callerOf(c.Request), Tool: op.tool, Key: op.key}
	lease := w.Lease
	if lease <= 0 {
		lease = c.Deps.Layer.Policy().ToolTimeout + 5*time.Second
	}
	claimCtx, cancel := context.WithTimeout(ctx, storeTimeout)
	claim, err := w.Store.Begin(claimCtx, key, writeFingerprint(c.Catalog.Key, op.args), lease)
	cancel()
	if err != nil {
		return fail(actionable(err, "%s: nothing was sent: the idempotency store did not answer (%v). Call again later with the same idempotency_key.", op.tool, err))
	}
	op.out.IdempotencyKey, op.out.SideEffect, op.out.Operation = op.key, op.sideEffect, op.tool
	op.out.CatalogURL = c.Catalog.Ref
	if op.out.Notes == nil {
		op.out.Notes = []string{}
	}
	switch claim.Status {
	case idempotency.Conflict:
		return fail(idempotencyDenial(c, op, reliability.CodeIdempotencyConflict, time.Time{},
			"This idempotency_key was first used with different arguments (another document, id or catalog). To learn the outcome of that write, call again with its original arguments; for a different write, use a new idempotency_key."))
	case idempotency.Busy:
		return fail(idempotencyDenial(c, op, reliability.CodeInFlight, claim.Record.LeaseUntil,
			"Another call with this idempotency_key and these arguments is still running. Wait, then call again with the same key and arguments: you will get its outcome."))
	case idempotency.Completed:
		return duplicateOf(ctx, op, claim.Record.Outcome)
	}
	r := &writeRun{ctx: ctx, c: c, op: op, store: w.Store, key: key, token: claim.Token, note: note}
	if claim.Status == idempotency.Recovering {
		// An earlier call's write may have been applied: look before sending.
		return r.resolve(nil, true)
	}
	return r.execute(reliability.DecisionExecuted)
}

// writeRun is one claimed write on its way to an outcome.
type writeRun struct {
	ctx   context.Context
	c     *Call
	op    writeOp
	store idempotency.Store
	key   idempotency.Key
	token string
	note  reliability.WriteNote
}

// writeAnswer classifies what a send returned.
type writeAnswer int

const (
	answerApplied  writeAnswer = iota // a 2xx: the write is done (or queued, 202)
	answerRejected                    // a definitive refusal (4xx, 501, 505): nothing applied, stored as the outcome
	answerNotSent                     // provably never reached the catalog, or refused before acting (429, 408)
	answerLost                        // sent, and the answer lost or unreliable (reset, timeout, 5xx)
)

func classifyWriteAnswer(res *stacclient.WriteResult, err error) writeAnswer {
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
func (r *writeRun) send() (*stacclient.WriteResult, error) {
	return r.op.send(reliability.OneAttempt(r.ctx), stacclient.WriteOptions{IdempotencyKey: upstreamKey(r.key)})
}

// execute sends the write and settles what its answer says; decision is
// executed for the first send and replayed for the second.
func (r *writeRun) execute(decision string) (WriteOut, string, error) {
	if r.op.prepare != nil {
		if err := r.op.prepare(r.ctx); err != nil {
			r.end(func(ctx context.Context) error { return r.store.Release(ctx, r.key, r.token) })
			r.noteDecision("")
			return failWith[WriteOut]()(err)
		}
	}
	res, err := r.send()
	switch classifyWriteAnswer(res, err) {
	case answerApplied:
		return r.succeed(decision, res)
	case answerRejected:
		if decision == reliability.DecisionReplayed && r.op.sideEffect != reliability.SideEffectUpdate {
			// A replayed create that finds the document, or a replayed
			// delete that finds none, may be meeting the first send,
			// applied late: look once more before calling it a failure.
			if ok, verr := r.op.applied(stacclient.Fresh(r.ctx)); verr == nil && ok {
				return r.succeed(reliability.DecisionLookedUp, nil)
			}
		}
		return r.failed(decision, err)
	case answerNotSent:
		r.end(func(ctx context.Context) error { return r.store.Release(ctx, r.key, r.token) })
		r.noteDecision("")
		return failWith[WriteOut]()(err)
	}
	// The answer was lost; after the one replay, only a lookup may settle it.
	return r.resolve(err, decision != reliability.DecisionReplayed)
}

// resolve finds out whether a write whose answer was lost (cause; nil when
// it was an earlier call's) was applied, and when it was not, sends it once
// more if mayReplay.
func (r *writeRun) resolve(cause error, mayReplay bool) (WriteOut, string, error) {
	applied, err := r.op.applied(stacclient.Fresh(r.ctx))
	switch {
	case err != nil:
		return r.unknown(cause, err)
	case applied:
		return r.succeed(reliability.DecisionLookedUp, nil)
	case !mayReplay:
		return r.unknown(cause, errors.New("the replayed write's answer was lost too, and a read shows it not applied (yet)"))
	}
	return r.execute(reliability.DecisionReplayed)
}

// succeed stores and returns a success.
func (r *writeRun) succeed(decision string, res *stacclient.WriteResult) (WriteOut, string, error) {
	out := r.op.out
	out.Status, out.ReplayDecision = r.op.done, decision
	var text strings.Builder
	switch {
	case res != nil && res.Accepted:
		out.Status = "accepted"
		fmt.Fprintf(&text, "The catalog accepted the write of %s for later processing (HTTP 202): it is not visible yet; check with get_item or get_collection in a little while.", r.op.describe)
	default:
		fmt.Fprintf(&text, "%s %s.", capitalize(r.op.done), r.op.describe)
	}
	if res != nil {
		out.UpstreamStatus, out.Location = res.Status, res.Location
		if res.Status != 0 {
			fmt.Fprintf(&text, " HTTP %d.", res.Status)
		}
		if res.Location != "" {
			fmt.Fprintf(&text, " Location: %s.", res.Location)
		}
	}
	switch decision {
	case reliability.DecisionLookedUp:
		out.Notes = append(out.Notes, "The answer to the write was lost; a fresh read showed the catalog holds it as written, so it was not sent again.")
	case reliability.DecisionReplayed:
		out.Notes = append(out.Notes, "The answer to the first send was lost and a fresh read showed it had not been applied, so the write was sent once more.")
	}
	return r.record(out, &text, false, nil)
}

// failed stores and returns a definitive failure.
func (r *writeRun) failed(decision string, cause error) (WriteOut, string, error) {
	out := r.op.out
	out.Status, out.ReplayDecision = "failed", decision
	var se *stacclient.Error
	if errors.As(cause, &se) {
		out.UpstreamStatus = se.Status
	}
	rendered := renderError(r.op.tool, cause).Error()
	out.Error = rendered
	var text strings.Builder
	text.WriteString(rendered)
	text.WriteString(" Nothing was written.")
	if isKind(cause, stacclient.KindConflict) && r.op.sideEffect == reliability.SideEffectCreate {
		text.WriteString(" It exists already: read it with get_item or get_collection, or replace it with the update tool.")
	}
	return r.record(out, &text, true, cause)
}

// record stores the outcome under the key and returns it.
func (r *writeRun) record(out WriteOut, text *strings.Builder, isError bool, cause error) (WriteOut, string, error) {
	if rc, ok := reliability.CurrentReceipt(r.ctx); ok {
		out.CorrelationID = rc.CorrelationID
	}
	// Everything the structured output says, for a host that forwards only
	// the text.
	fmt.Fprintf(text, "\nStatus %s: %s (side effect %s) on %s; idempotency_key %q, replay decision %s, correlation_id %s.",
		out.Status, out.Operation, out.SideEffect, out.CatalogURL, r.op.key, out.ReplayDecision, out.CorrelationID)
	for _, n := range out.Notes {
		text.WriteString("\nNote: " + n)
	}
	raw, _ := json.Marshal(storedOutcome{Out: out, Text: text.String(), IsError: isError}) // our own struct always encodes
	var storeErr error
	r.end(func(ctx context.Context) error {
		storeErr = r.store.Finish(ctx, r.key, r.token, raw)
		return storeErr
	})
	if storeErr != nil && !errors.Is(storeErr, idempotency.ErrNotHolder) {
		note := "The outcome could not be recorded (" + storeErr.Error() + "): a repeat with the same idempotency_key will look the document up before sending anything."
		out.Notes = append(out.Notes, note)
		text.WriteString("\nNote: " + note)
	}
	r.noteDecision(out.ReplayDecision)
	if isError {
		return failWith[WriteOut]()(&failedResult{out: out, text: text.String(), cause: cause})
	}
	return out, text.String(), nil
}

// unknown leaves the key for the next call to resolve and says so.
func (r *writeRun) unknown(cause, lookupErr error) (WriteOut, string, error) {
	r.end(func(ctx context.Context) error { return r.store.Abandon(ctx, r.key, r.token) })
	r.noteDecision("")
	d := idempotencyDenial(r.c, r.op, reliability.CodeOutcomeUnknown, time.Time{},
		"Call again with the same arguments and idempotency_key (never a new key): the server will look the "+r.op.describeKind()+" up first and send the write again only if it is not there.")
	d.Err = errors.Join(cause, fmt.Errorf("the lookup failed: %w", lookupErr))
	var ld *reliability.Denial
	if errors.As(lookupErr, &ld) {
		d.LastStatus, d.LastMessage, d.ErrorClass, d.RetryAt = ld.LastStatus, ld.LastMessage, ld.ErrorClass, ld.RetryAt
	}
	return failWith[WriteOut]()(d)
}

// end runs a store operation even when the call's own deadline is past: a
// write that was sent must leave its record behind.
func (r *writeRun) end(f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.ctx), storeTimeout)
	defer cancel()
	if err := f(ctx); err != nil && !errors.Is(err, idempotency.ErrNotHolder) {
		r.c.Deps.Logger.Warn().Err(err).Str("tool_name", r.op.tool).Msg("idempotency store: could not record a write's state")
	}
}

func (r *writeRun) noteDecision(decision string) {
	r.note.ReplayDecision = decision
	reliability.NoteWrite(r.ctx, r.note)
}

// duplicateOf returns a stored outcome unchanged but for duplicate: true.
func duplicateOf(ctx context.Context, op writeOp, raw []byte) (WriteOut, string, error) {
	var s storedOutcome
	if err := json.Unmarshal(raw, &s); err != nil {
		return failWith[WriteOut]()(fmt.Errorf("%s: the stored outcome of this idempotency_key is unreadable (%v); nothing was sent", op.tool, err))
	}
	reliability.NoteWrite(ctx, reliability.WriteNote{SideEffect: op.sideEffect, IdempotencyKey: op.key,
		ReplayDecision: reliability.DecisionDuplicate, Duplicate: true, OriginalCorrelationID: s.Out.CorrelationID})
	out := s.Out
	out.Duplicate = true
	text := fmt.Sprintf("Duplicate (same idempotency_key and arguments as call %s): nothing was sent; this is that call's outcome.\n%s", s.Out.CorrelationID, s.Text)
	if s.IsError {
		return failWith[WriteOut]()(&failedResult{out: out, text: text})
	}
	return out, text, nil
}

// idempotencyDenial is a typed denial of a write tool.
func idempotencyDenial(c *Call, op writeOp, code string, retryAt time.Time, next string) *reliability.Denial {
	d := &reliability.Denial{Code: code, Host: c.Catalog.Host, Next: next, SideEffect: op.sideEffect, IdempotencyKey: op.key}
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

func (op writeOp) describeKind() string {
	if op.scope == stacclient.TxCollections {
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

// writeAnnotations are honest about what a write tool does: it changes
// the catalog (readOnlyHint false), destructive when it replaces or
// deletes what is there, idempotent when repeating the same HTTP request
// changes nothing more (PUT, merge PATCH, DELETE; not a create).
func writeAnnotations(title string, destructive, idempotent bool) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		Title:           title,
		ReadOnlyHint:    false,
		DestructiveHint: jsonschema.Ptr(destructive),
		IdempotentHint:  idempotent,
		OpenWorldHint:   jsonschema.Ptr(true),
	}
}

// defineWrite is define for a write tool: its side effect is on the Tool.
func defineWrite[In catalogInput, Out any](def *mcp.Tool, sideEffect string, h Handler[In, Out]) Tool {
	t := define(def, true, h)
	t.SideEffect = sideEffect
	return t
}

// docTarget is the one document a write tool writes: an item or a
// collection, and how to read it as it is now.
type docTarget struct {
	kind string // "item" or "collection"
	read func(ctx context.Context) (any, error)
}

func itemTarget(c *Call, collectionID, itemID string) docTarget {
	return docTarget{kind: "item", read: func(ctx context.Context) (any, error) {
		return c.Catalog.Client.Item(ctx, collectionID, itemID)
	}}
}

func collectionTarget(c *Call, collectionID string) docTarget {
	return docTarget{kind: "collection", read: func(ctx context.Context) (any, error) {
		return c.Catalog.Client.Collection(ctx, collectionID)
	}}
}

// Lookups: has the write been applied? runWrite calls them with a Fresh
// context, so neither the reliability layer's cache nor a coalesced read
// can answer.

// holdsLookup reports whether the document holds want (every member want
// has; links aside, since catalogs rewrite them); absent means false.
func (t docTarget) holdsLookup(want map[string]any, patch bool) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		doc, err := t.read(ctx)
		if isKind(err, stacclient.KindNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		got, err := toJSONObject(doc)
		if err != nil {
			return false, err
		}
		return holds(got, want, patch), nil
	}
}

// goneLookup reports whether the document is absent.
func (t docTarget) goneLookup(ctx context.Context) (bool, error) {
	_, err := t.read(ctx)
	if isKind(err, stacclient.KindNotFound) {
		return true, nil
	}
	return false, err
}

// holds reports whether got contains want: every member of want (links
// aside) is in got with an equal value, objects compared member by member,
// numbers as numbers and RFC 3339 times as instants (catalogs reformat
// both). For a merge patch, a null member must be absent from got.
func holds(got, want map[string]any, patch bool) bool {
	for k, w := range want {
		if k == "links" {
			continue
		}
		g, present := got[k]
		if w == nil && patch {
			if present {
				return false
			}
			continue
		}
		if !present || !sameValue(g, w, patch) {
			return false
		}
	}
	return true
}

func sameValue(got, want any, patch bool) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		return ok && holds(g, w, patch)
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(g[i], w[i], false) {
				return false
			}
		}
		return true
	case string:
		g, ok := got.(string)
		if !ok {
			return false
		}
		if g == w {
			return true
		}
		tg, errG := time.Parse(time.RFC3339Nano, g)
		tw, errW := time.Parse(time.RFC3339Nano, w)
		return errG == nil && errW == nil && tg.Equal(tw)
	case json.Number:
		f, err := w.Float64()
		return err == nil && sameValue(got, f, patch)
	case float64:
		switch g := got.(type) {
		case float64:
			return g == w
		case json.Number:
			f, err := g.Float64()
			return err == nil && f == w
		}
		return false
	}
	return reflect.DeepEqual(got, want)
}

// normalizeDocument gives a document what the catalog manages itself when
// the model left it out: an empty links list (the catalog adds its own),
// and for an item its collection.
func normalizeDocument(doc map[string]any, collectionID string) map[string]any {
	out := make(map[string]any, len(doc)+2)
	for k, v := range doc {
		out[k] = v
	}
	if _, ok := out["links"]; !ok {
		out["links"] = []any{}
	}
	if collectionID != "" {
		if _, ok := out["collection"]; !ok {
			out["collection"] = collectionID
		}
	}
	return out
}

// pathIDs trims and checks the collection_id and (when itemID is not
// nil) item_id arguments.
func pathIDs(collectionID string, itemID *string) (string, string, error) {
	cid, err := trimmedID("collection_id", collectionID)
	if err != nil || itemID == nil {
		return cid, "", err
	}
	iid, err := trimmedID("item_id", *itemID)
	return cid, iid, err
}

// trimmedID is an id argument without surrounding space, refused when it
// cannot name a path segment.
func trimmedID(param, v string) (string, error) {
	id := strings.TrimSpace(v)
	if p := stacdoc.IDProblem(id); p != "" {
		return "", &stacclient.ParamError{Param: param, Got: v, Reason: "the id " + p, Accepted: "an id such as \"sentinel-2-l2a\" (no '/', '\\' or control characters)"}
	}
	return id, nil
}

// replacementOrPatch reads the two ways the update tools take a change:
// the complete new document (docParam) or a JSON merge patch; exactly one.
func replacementOrPatch(docArg DocumentArg, docParam string, patchArg DocumentArg) (doc, patch map[string]any, err error) {
	doc, hasDoc, err := docArg.object(docParam)
	if err != nil {
		return nil, nil, err
	}
	patch, hasPatch, err := patchArg.object("patch")
	if err != nil {
		return nil, nil, err
	}
	if hasDoc == hasPatch {
		got := "neither"
		if hasDoc {
			got = "both"
		}
		return nil, nil, &stacclient.ParamError{Param: docParam + "/patch", Got: got, Reason: "give exactly one",
			Accepted: docParam + ": the complete new document (replaces it), or patch: a JSON merge patch of the members to change (null removes one)"}
	}
	return doc, patch, nil
}

// update is what update_item and update_collection share: the document
// is replaced whole (PUT) or changed by a JSON merge patch (PATCH).
type update struct {
	target   docTarget
	docParam string         // the argument holding a replacement: "item" or "collection"
	ids      map[string]any // the path arguments (part of the fingerprint)
	keep     map[string]string
	check    func(doc map[string]any) error // a written document must pass it
	replace  func(ctx context.Context, doc map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error)
	patch    func(ctx context.Context, patch map[string]any, o stacclient.WriteOptions) (*stacclient.WriteResult, error)
}

// fill completes op for a replacement doc or a merge patch (one is nil).
// A replacement is checked now; a patch is checked for the members it may
// not change now, and its result, applied to a fresh read, before each
// send (prepare).
func (u update) fill(op *writeOp, doc, patch map[string]any) error {
	args := map[string]any{}
	for k, v := range u.ids {
		args[k] = v
	}
	op.args = args
	if doc != nil {
		if err := u.check(doc); err != nil {
			return err
		}
		args[u.docParam] = doc
		op.send = func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
			return u.replace(ctx, doc, o)
		}
		op.applied = u.target.holdsLookup(doc, false)
		return nil
	}
	if err := stacclient.CheckPatch(patch, u.keep); err != nil {
		return err
	}
	args["patch"] = patch
	op.prepare = func(ctx context.Context) error {
		current, err := u.target.read(stacclient.Fresh(ctx))
		if err != nil {
			return err
		}
		doc, err := toJSONObject(current)
		if err != nil {
			return err
		}
		if err := u.check(stacdoc.MergePatch(doc, patch)); err != nil {
			return fmt.Errorf("the patched %s would not be valid, so the patch was not sent: %w", u.target.kind, err)
		}
		return nil
	}
	op.send = func(ctx context.Context, o stacclient.WriteOptions) (*stacclient.WriteResult, error) {
		return u.patch(ctx, patch, o)
	}
	op.applied = u.target.holdsLookup(patch, true)
	return nil
}
