package stacclient

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

const datetimeAccepted = `an instant "2023-06-10T12:00:00Z", a partial date "2023", "2023-06" or "2023-06-10" (the whole period), or a range "start/end" of those where one end may be open ("..", empty, null); leave datetime out for no time limit. Time zone offsets are converted to UTC; a time without zone is taken as UTC`

// datetimePattern is the shape pystac-client accepts:
// YYYY[-MM[-DD[Thh:mm:ss[.f][Z|±hh:mm]]]].
var datetimePattern = regexp.MustCompile(`^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})?)?)?)?$`)

// ParseDatetime normalises an instant or interval: partial dates expand to
// their whole period, open ends are "..", everything is UTC "Z".
//
// Offsets such as "+02:00" are converted to UTC rather than passed through
// (pystac-client passes string offsets unchanged): several servers compare
// datetimes as strings or reject offsets, and a single canonical form also
// makes requests comparable for caching and cycle detection.
func ParseDatetime(s string) (string, error) {
	bad := func(reason string) error {
		return &ParamError{Param: "datetime", Got: trimForMessage(s, maxReceivedChars), Reason: reason, Accepted: datetimeAccepted}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if s == "../.." {
		// The STAC API: "only one end may be open" (stac-fastapi answers
		// 400); forwarding it would fail or be read differently per server.
		return "", bad(`both ends are open ("../.."); the STAC API allows only one open end: leave datetime out for no time limit`)
	}
	parts := strings.Split(s, "/")
	switch len(parts) {
	case 1:
		if s == ".." {
			return "", bad(`".." alone is an open range with no start or end; leave datetime out for no time limit`)
		}
		start, end, whole, err := datetimePeriod(s)
		if err != nil {
			return "", bad(err.Error())
		}
		if !whole {
			return formatUTC(start), nil
		}
		return formatUTC(start) + "/" + formatUTC(end), nil
	case 2:
		startText, endText := strings.TrimSpace(parts[0]), strings.TrimSpace(parts[1])
		startOpen := startText == "" || startText == ".."
		endOpen := endText == "" || endText == ".."
		if startOpen && endOpen {
			return "", bad(`both ends are open; the STAC API allows only one open end: leave datetime out for no time limit`)
		}
		startOut, endOut := "..", ".."
		var start, end time.Time
		if !startOpen {
			periodStart, _, _, err := datetimePeriod(startText)
			if err != nil {
				return "", bad("start: " + err.Error())
			}
			start, startOut = periodStart, formatUTC(periodStart)
		}
		if !endOpen {
			// The end of a range takes the END of its period: 2023-06/2023-07
			// covers all of July.
			_, periodEnd, _, err := datetimePeriod(endText)
			if err != nil {
				return "", bad("end: " + err.Error())
			}
			end, endOut = periodEnd, formatUTC(periodEnd)
		}
		if !startOpen && !endOpen && start.After(end) {
			return "", bad(fmt.Sprintf("start %s is after end %s", startOut, endOut))
		}
		return startOut + "/" + endOut, nil
	default:
		return "", bad(fmt.Sprintf("%d parts separated by '/'; at most 2 (start/end)", len(parts)))
	}
}

// periodEnd is how far before the next period a partial date's period
// ends: the last microsecond, so "2020-06-01" covers 23:59:59.750Z (the
// last whole second missed it). Not the last nanosecond: servers that keep
// microseconds (PostgreSQL, Python) round .999999999 up to the next day's
// midnight, which would take in the next day's first items.
const periodEnd = time.Microsecond

// datetimePeriod reads one datetime and returns the period it denotes. A full
// timestamp is an instant (start == end, whole false); a partial date is the
// whole year, month or day, ending at its last microsecond.
func datetimePeriod(s string) (start, end time.Time, whole bool, err error) {
	m := datetimePattern.FindStringSubmatch(s)
	if m == nil {
		return time.Time{}, time.Time{}, false, fmt.Errorf("%q is not a date or RFC 3339 timestamp", s)
	}
	year, _ := strconv.Atoi(m[1])
	month, day := 1, 1
	if m[2] != "" {
		month, _ = strconv.Atoi(m[2])
		if month < 1 || month > 12 {
			return time.Time{}, time.Time{}, false, fmt.Errorf("month %02d in %q does not exist", month, s)
		}
	}
	if m[3] != "" {
		day, _ = strconv.Atoi(m[3])
		if !dayExists(year, month, day) {
			return time.Time{}, time.Time{}, false, fmt.Errorf("day %s in %q does not exist", m[3], s)
		}
	}
	switch {
	case m[2] == "":
		start = time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(1, 0, 0).Add(-periodEnd), true, nil
	case m[3] == "":
		start = time.Date(year, time.Month(month), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0).Add(-periodEnd), true, nil
	case m[4] == "":
		start = time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 0, 1).Add(-periodEnd), true, nil
	}
	instant, err := parseFullTimestamp(m)
	if err != nil {
		return time.Time{}, time.Time{}, false, fmt.Errorf("%q: %w", s, err)
	}
	return instant, instant, false, nil
}

// parseFullTimestamp builds the instant of a full timestamp match; a missing
// zone means UTC.
func parseFullTimestamp(m []string) (time.Time, error) {
	hour, _ := strconv.Atoi(m[4])
	minute, _ := strconv.Atoi(m[5])
	second, _ := strconv.Atoi(m[6])
	if hour > 23 || minute > 59 || second > 60 {
		return time.Time{}, fmt.Errorf("time %s:%s:%s is out of range (00:00:00 to 23:59:59, or 23:59:60 UTC for a leap second)", m[4], m[5], m[6])
	}
	// A leap second (RFC 3339 §5.7) is read as the last nanosecond of the
	// second before it, as stacdoc.ParseTime does: Go's time has no :60,
	// and servers refuse it, so it is sent as 23:59:59.999999999Z.
	leap := second == 60
	if leap {
		second = 59
	}
	nanos := 0
	if m[7] != "" {
		digits := m[7][1:] + strings.Repeat("0", 9-len(m[7][1:]))
		nanos, _ = strconv.Atoi(digits)
	}
	loc := time.UTC
	if zone := m[8]; zone != "" && zone != "Z" && zone != "z" {
		zoneHours, _ := strconv.Atoi(zone[1:3])
		zoneMinutes, _ := strconv.Atoi(zone[4:6])
		if zoneHours > 23 || zoneMinutes > 59 {
			return time.Time{}, fmt.Errorf("time zone offset %s is out of range", zone)
		}
		offset := zoneHours*3600 + zoneMinutes*60
		if zone[0] == '-' {
			offset = -offset
		}
		loc = time.FixedZone(zone, offset)
	}
	year, _ := strconv.Atoi(m[1])
	month, _ := strconv.Atoi(m[2])
	day, _ := strconv.Atoi(m[3])
	instant := time.Date(year, time.Month(month), day, hour, minute, second, nanos, loc).UTC()
	if leap {
		if instant.Hour() != 23 || instant.Minute() != 59 {
			return time.Time{}, fmt.Errorf("a leap second (:60) falls at 23:59 UTC only")
		}
		instant = instant.Add(time.Duration(999999999 - nanos))
	}
	if instant.Year() < 0 || instant.Year() > 9999 {
		// RFC 3339 has four-digit years only.
		return time.Time{}, fmt.Errorf("falls outside the years 0000 to 9999 once converted to UTC")
	}
	return instant, nil
}

// dayExists reports whether the calendar has that day (no 2023-02-30).
func dayExists(year, month, day int) bool {
	if day < 1 {
		return false
	}
	t := time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
	return t.Day() == day && int(t.Month()) == month
}

// formatUTC writes an instant as RFC 3339 in UTC, with fractional seconds
// only when there are any.
func formatUTC(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// parseLooseDatetime accepts the datetime forms of RawSearch: a string, a
// time.Time, or a list of one or two ends (strings, times or null) the way
// pystac-client accepts a tuple.
func parseLooseDatetime(v any) (string, error) {
	bad := paramErrorFor("datetime", v, datetimeAccepted)
	in, err := readLoose(v, jsonListText, bad)
	switch {
	case err != nil || !in.present:
		return "", err
	case in.decoded:
		return parseLooseDatetime(in.value)
	}
	switch x := in.value.(type) {
	case string:
		return ParseDatetime(x)
	case time.Time:
		return formatUTC(x), nil
	case []string:
		return parseLooseDatetime(asAnyList(x))
	case []any:
		if len(x) == 0 {
			return "", nil
		}
		if len(x) > 2 {
			return "", bad(fmt.Sprintf("a list of %d values; at most 2 (start, end)", len(x)))
		}
		texts := make([]string, len(x))
		implicitOpen := 0 // ends given as null or "", which only ".." may pair with
		for i, e := range x {
			switch end := e.(type) {
			case nil:
				texts[i] = ".."
				implicitOpen++
			case string:
				texts[i] = strings.TrimSpace(end)
				if texts[i] == "" {
					texts[i] = ".."
					implicitOpen++
				}
			case time.Time:
				texts[i] = formatUTC(end)
			default:
				return "", bad(fmt.Sprintf("entry %d is a %s, not a date string or null", i, jsonTypeName(e)))
			}
		}
		if len(texts) == 1 {
			if texts[0] == ".." {
				return "", bad(`a single open end; use "../.." for no time limit`)
			}
			return ParseDatetime(texts[0])
		}
		if texts[0] == ".." && texts[1] == ".." && implicitOpen > 0 {
			return "", bad(`both ends are open; write the literal "../.." for no time limit`)
		}
		return ParseDatetime(texts[0] + "/" + texts[1])
	default:
		return "", bad("a " + jsonTypeName(v) + " is not a date string")
	}
}
