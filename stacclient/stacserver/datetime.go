package stacserver

import (
	"fmt"
	"strings"
	"time"

	"github.com/stacmcp/stac-mcp/stacclient/stacdoc"
)

// timeRange is a closed interval; a zero bound is open.
type timeRange struct {
	start, end time.Time
}

const datetimeAccepted = `an RFC 3339 instant ("2020-01-02T00:00:00Z") or an interval "start/end" with ".." or "" for an open end`

// parseDatetimeParam parses the STAC datetime parameter.
func parseDatetimeParam(s string) (timeRange, error) {
	parts := strings.Split(s, "/")
	bad := func(reason string) (timeRange, error) {
		return timeRange{}, badParam("datetime", s, datetimeAccepted, reason)
	}
	switch len(parts) {
	case 1:
		t, err := stacdoc.ParseTime(s)
		if err != nil {
			return bad("not an RFC 3339 timestamp: " + err.Error())
		}
		return timeRange{start: t, end: t}, nil
	case 2:
		var r timeRange
		for i, p := range parts {
			if p == ".." || p == "" {
				continue
			}
			t, err := stacdoc.ParseTime(p) // leap seconds, lowercase t/z; no comma decimal
			if err != nil {
				return bad(fmt.Sprintf("%q is not an RFC 3339 timestamp: %v", p, err))
			}
			if i == 0 {
				r.start = t
			} else {
				r.end = t
			}
		}
		if r.start.IsZero() && r.end.IsZero() {
			// "../.." too: the STAC API allows one open end (stac-fastapi: 400).
			return bad("both ends are open; leave datetime out for no time limit")
		}
		if !r.start.IsZero() && !r.end.IsZero() && r.end.Before(r.start) {
			return bad("the end is before the start")
		}
		return r, nil
	default:
		return bad("more than one \"/\"")
	}
}

// overlaps reports whether [start,end] meets the range.
func (r timeRange) overlaps(start, end time.Time) bool {
	if !r.start.IsZero() && end.Before(r.start) {
		return false
	}
	if !r.end.IsZero() && start.After(r.end) {
		return false
	}
	return true
}
