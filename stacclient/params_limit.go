package stacclient

import (
	"math"
	"strconv"
)

// MaxPageLimit is the largest page size the STAC API spec allows servers to
// accept; pystac-client rejects larger values too.
const MaxPageLimit = 10000

const limitAccepted = "an integer page size from 1 to 10000 (a number or a string of digits); 0 or absent = the server's default. For a total cap on results use max_items"

// ParseLimit accepts the page size as an integer, a float without fraction,
// or a string of digits. 0, "" and nil mean "server default" and give 0.
func ParseLimit(v any) (int, error) {
	bad := paramErrorFor("limit", v, limitAccepted)
	in, err := readLoose(v, jsonNeverText, bad)
	switch {
	case err != nil || !in.present:
		return 0, err
	case in.decoded:
		return ParseLimit(in.value)
	}
	var f float64
	switch x := in.value.(type) {
	case string:
		n, err := strconv.Atoi(x)
		if err != nil {
			return 0, bad("not a whole number")
		}
		f = float64(n)
	default:
		n, ok := numberFromLoose(v)
		if decoded, convertible := asDecodedJSON(v); !ok && convertible {
			n, ok = numberFromLoose(decoded) // uint, int16 and other Go number types
		}
		if !ok {
			return 0, bad("a " + jsonTypeName(v) + " is not a number")
		}
		f = n
	}
	if f != math.Trunc(f) {
		return 0, bad("has a fractional part")
	}
	if f < 0 {
		return 0, bad("is negative")
	}
	if f > MaxPageLimit {
		return 0, bad("is larger than 10000")
	}
	return int(f), nil
}
