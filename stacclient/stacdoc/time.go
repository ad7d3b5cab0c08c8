package stacdoc

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ParseTime reads an RFC 3339 date-time (§5.6): "2024-06-01T10:00:00Z",
// with optional fractional seconds and a "Z" or ±hh:mm offset. As RFC
// 3339 allows, "T" and "Z" may be lowercase (§5.6 note), and the seconds
// may be 60 for a leap second (§5.7), only at 23:59 UTC; Go's time cannot
// hold one, so 23:59:60.x reads as the last nanosecond of 23:59:59, which
// keeps it inside its UTC day and after every earlier instant of the day.
// A comma before the fraction (ISO 8601, not RFC 3339) is refused.
func ParseTime(s string) (time.Time, error) {
	if len(s) < 20 {
		return time.Time{}, errors.New("too short for YYYY-MM-DDThh:mm:ssZ")
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			n = n*10 + int(s[i]-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || s[4] != '-' || s[7] != '-' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, errors.New("want YYYY-MM-DDThh:mm:ss")
	}
	if s[10] != 'T' && s[10] != 't' {
		return time.Time{}, errors.New(`want "T" between date and time`)
	}
	if month < 1 || month > 12 {
		return time.Time{}, fmt.Errorf("month %02d out of range", month)
	}
	if day < 1 || day > daysIn(year, month) {
		return time.Time{}, fmt.Errorf("day %02d out of range", day)
	}
	if hour > 23 || minute > 59 || sec > 60 {
		return time.Time{}, errors.New("time of day out of range")
	}
	rest := s[19:]
	nsec := 0
	if rest != "" && rest[0] == ',' {
		return time.Time{}, errors.New(`the fraction of a second takes ".", not ","`)
	}
	if rest != "" && rest[0] == '.' {
		i := 1
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 1 {
			return time.Time{}, errors.New(`"." without digits`)
		}
		frac := rest[1:i]
		if len(frac) > 9 {
			frac = frac[:9] // beyond nanoseconds: truncated
		}
		for len(frac) < 9 {
			frac += "0"
		}
		nsec, _ = strconv.Atoi(frac)
		rest = rest[i:]
	}
	offset := 0
	switch {
	case rest == "Z" || rest == "z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okh := strconv.Atoi(rest[1:3])
		om, okm := strconv.Atoi(rest[4:6])
		if okh != nil || okm != nil || oh > 23 || om > 59 {
			return time.Time{}, fmt.Errorf("bad offset %q", rest)
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	case rest == "":
		return time.Time{}, errors.New(`no time zone (end with "Z" for UTC)`)
	default:
		return time.Time{}, fmt.Errorf("bad time zone %q", rest)
	}
	leap := sec == 60
	if leap {
		sec = 59
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.FixedZone("", offset))
	if leap {
		u := t.UTC()
		if u.Hour() != 23 || u.Minute() != 59 {
			return time.Time{}, errors.New("a leap second (:60) falls at 23:59 UTC only")
		}
		t = t.Add(time.Duration(999999999 - nsec))
	}
	if offset == 0 {
		t = t.UTC()
	}
	return t, nil
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}
