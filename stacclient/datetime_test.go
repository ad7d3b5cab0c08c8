package stacclient

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDatetimeForms(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"2023-06-10T12:30:00Z", "2023-06-10T12:30:00Z"},
		{"2023-06-10t12:30:00z", "2023-06-10T12:30:00Z"},
		{"2023-06-10T12:30:00", "2023-06-10T12:30:00Z"},                         // no zone → UTC
		{"2023-06-10T12:30:00.250Z", "2023-06-10T12:30:00.25Z"},                 // fraction kept, trailing zeros dropped
		{"2023-06-10T12:30:00+02:00", "2023-06-10T10:30:00Z"},                   // offset → UTC
		{"2023-06-10T23:30:00-01:30", "2023-06-11T01:00:00Z"},                   // crosses midnight
		{"2023", "2023-01-01T00:00:00Z/2023-12-31T23:59:59.999999Z"},            // whole year
		{"2023-06", "2023-06-01T00:00:00Z/2023-06-30T23:59:59.999999Z"},         // whole month
		{"2024-02", "2024-02-01T00:00:00Z/2024-02-29T23:59:59.999999Z"},         // leap February
		{"2023-06-10", "2023-06-10T00:00:00Z/2023-06-10T23:59:59.999999Z"},      // whole day
		{"2017-06/2017-07", "2017-06-01T00:00:00Z/2017-07-31T23:59:59.999999Z"}, // end takes the end of its period
		{"2017/2018", "2017-01-01T00:00:00Z/2018-12-31T23:59:59.999999Z"},
		{"2023-06-10/2023-06-10", "2023-06-10T00:00:00Z/2023-06-10T23:59:59.999999Z"},
		{"2023-06-10T00:00:00Z/2023-06-12", "2023-06-10T00:00:00Z/2023-06-12T23:59:59.999999Z"},
		{"2023-06/2023-06-10T05:00:00+01:00", "2023-06-01T00:00:00Z/2023-06-10T04:00:00Z"},
		{"2023-06-10T00:00:00Z/..", "2023-06-10T00:00:00Z/.."},
		{"../2023-06-10T00:00:00Z", "../2023-06-10T00:00:00Z"},
		{"2023/", "2023-01-01T00:00:00Z/.."},        // empty end → open
		{"/2023", "../2023-12-31T23:59:59.999999Z"}, // empty start → open, end of period
		{" 2023-06-10 ", "2023-06-10T00:00:00Z/2023-06-10T23:59:59.999999Z"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDatetime(tt.in)
			if err != nil {
				t.Fatalf("ParseDatetime(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseDatetime(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDatetimeErrors(t *testing.T) {
	tests := []struct {
		in, reason string // reason: a fragment the error must contain
	}{
		{"2023-02-30", "day 30"},
		{"2023-13", "month 13"},
		{"2023-06-10T24:00:00Z", "out of range"},
		{"2023-06-10T12:00:00+25:00", "offset"},
		{"yesterday", "not a date"},
		{"2023-6-1", "not a date"},
		{"2023-06-10 12:00:00", "not a date"},
		{"..", "leave datetime out"},
		{"../..", "only one open end"}, // once forwarded as it was
		{"/", "both ends are open"},
		{"../", "both ends are open"},
		{"2023/2024/2025", "3 parts"},
		{"2024/2023", "start 2024-01-01T00:00:00Z is after end 2023-12-31T23:59:59.999999Z"},
		{"2023-06-10T12:00:00Z/2023-06-10T11:00:00Z", "is after end"},
		{"2023-02-29/2024", "start:"},
		{"2023/2023-02-30", "end:"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDatetime(tt.in)
			if err == nil {
				t.Fatalf("ParseDatetime(%q) = %q, want an error", tt.in, got)
			}
			assertParamError(t, err, "datetime", tt.reason)
			if !strings.Contains(err.Error(), "leave datetime out") || !strings.Contains(err.Error(), "2023-06-10T12:00:00Z") {
				t.Errorf("error does not list the accepted forms: %v", err)
			}
		})
	}
}

func TestDatetimeLooseForms(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, ""},
		{"list of two", []any{"2023-06", "2023-07"}, "2023-06-01T00:00:00Z/2023-07-31T23:59:59.999999Z"},
		{"list with null end", []any{"2023-06-10T00:00:00Z", nil}, "2023-06-10T00:00:00Z/.."},
		{"list with empty start", []any{"", "2023"}, "../2023-12-31T23:59:59.999999Z"},
		{"list of one", []string{"2023"}, "2023-01-01T00:00:00Z/2023-12-31T23:59:59.999999Z"},
		{"JSON string list", `["2023-06-10", null]`, "2023-06-10T00:00:00Z/.."},
		{"time.Time in a zone", time.Date(2023, 6, 10, 14, 0, 0, 0, time.FixedZone("CEST", 7200)), "2023-06-10T12:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLooseDatetime(tt.in)
			if err != nil {
				t.Fatalf("error: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	for _, bad := range []any{[]any{"..", ".."}, []any{nil, nil}, []any{"", ".."}, []any{"2023", "2024", "2025"}, []any{2023}, 2023.0, map[string]any{}} {
		if got, err := parseLooseDatetime(bad); err == nil {
			t.Errorf("parseLooseDatetime(%#v) = %q, want an error", bad, got)
		} else {
			assertParamError(t, err, "datetime", "")
		}
	}
}

// assertParamError checks that err is a *ParamError for param whose message
// names the parameter, contains reasonFragment and lists accepted forms.
func assertParamError(t *testing.T, err error, param, reasonFragment string) {
	t.Helper()
	var pe *ParamError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *ParamError", err, err)
	}
	if pe.Param != param {
		t.Errorf("ParamError.Param = %q, want %q (error: %v)", pe.Param, param, err)
	}
	if pe.Accepted == "" {
		t.Errorf("ParamError for %s lists no accepted forms: %v", param, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "invalid "+param+": got ") {
		t.Errorf("message does not start by naming %s: %v", param, msg)
	}
	if !strings.Contains(msg, "; accepted: "+pe.Accepted) {
		t.Errorf("message does not include the accepted forms: %v", msg)
	}
	if reasonFragment != "" && !strings.Contains(msg, reasonFragment) {
		t.Errorf("message %q does not contain %q", msg, reasonFragment)
	}
}
