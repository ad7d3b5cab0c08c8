package reliability

import (
	"context"
	"regexp"
)

type requestedIDKey struct{}

// WithCorrelationID asks Run to use id as the correlation id of the tool
// call made with ctx, instead of a random one. A client that already has a
// request id can then find its call in our logs and in the catalog's access
// log (the id goes upstream as X-Correlation-ID), and a test harness can key
// a seeded fault schedule on ids that are the same on every run.
//
// The id is sent as a header and written to logs, so Run accepts only 1 to
// 64 characters from letters, digits and . _ : / -; any other id is
// rejected with a warning log naming it, and the call gets a random id.
func WithCorrelationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestedIDKey{}, id)
}

var validCorrelationID = regexp.MustCompile(`^[A-Za-z0-9._:/-]{1,64}$`)

// applyRequestedID gives rec the caller's correlation id when ctx carries a
// valid one.
func (l *Layer) applyRequestedID(ctx context.Context, rec *callRecord) {
	id, ok := ctx.Value(requestedIDKey{}).(string)
	if !ok {
		return
	}
	if !validCorrelationID.MatchString(id) {
		l.log.Warn().Str("event", "correlation_id_rejected").Str("requested_id", id).Str("correlation_id", rec.correlationID).
			Str("tool_name", rec.tool).Msg("requested correlation id rejected (accepted: 1 to 64 of A-Z a-z 0-9 . _ : / -); using a random id")
		return
	}
	rec.correlationID = id
}
