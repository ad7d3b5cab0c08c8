package stacclient

import (
	"strings"
	"testing"
	"time"
)

// Item search semantics, on the client's side.
func TestDatetimeStandards(t *testing.T) {
	// A partial date as an end covers its whole last second.
	got, err := ParseDatetime("2020-06-01")
	if err != nil {
		t.Fatal(err)
	}
	end, err := time.Parse(time.RFC3339Nano, got[strings.Index(got, "/")+1:])
	if err != nil {
		t.Fatal(err)
	}
	if item := time.Date(2020, 6, 1, 23, 59, 59, 750_000_000, time.UTC); end.Before(item) {
		t.Errorf("2020-06-01 ends at %s, before an item at %s", end.Format(time.RFC3339Nano), item.Format(time.RFC3339Nano))
	}
	if next := time.Date(2020, 6, 2, 0, 0, 0, 0, time.UTC); !end.Before(next) {
		t.Errorf("2020-06-01 ends at %s, not before the next day", end.Format(time.RFC3339Nano))
	}
	for in, want := range map[string]string{
		"2016-12-31T23:59:60Z":      "2016-12-31T23:59:59.999999999Z", // a leap second (RFC 3339 §5.7)
		"2017-01-01T00:59:60+01:00": "2016-12-31T23:59:59.999999999Z",
		"2020-06-01t10:00:00z":      "2020-06-01T10:00:00Z", // lowercase t and z (RFC 3339 §5.6 note)
	} {
		if got, err := ParseDatetime(in); err != nil || got != want {
			t.Errorf("ParseDatetime(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"2020-06-01T10:00:00,5Z", "2020-06-01T10:00:60Z", "../..", ".."} {
		if got, err := ParseDatetime(in); err == nil {
			t.Errorf("ParseDatetime(%q) = %q, want an error", in, got)
		}
	}
}
