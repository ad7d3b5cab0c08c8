package stacclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxReceivedChars bounds how much of a bad value is echoed back in a
// ParamError, so that a huge geometry does not flood the model's context.
const maxReceivedChars = 200

// describeReceived renders a received value for an error message: strings as
// they are, everything else as compact JSON, trimmed to maxReceivedChars with
// a note saying how much was cut.
func describeReceived(v any) string {
	var text string
	switch x := v.(type) {
	case nil:
		text = "null"
	case string:
		text = x
	case json.RawMessage:
		text = string(x)
	case []byte:
		text = string(x)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			text = fmt.Sprintf("%v", x)
		} else {
			text = string(b)
		}
	}
	return trimForMessage(text, maxReceivedChars)
}

// trimForMessage cuts s to at most limit runes and says how many were cut.
func trimForMessage(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	runes := []rune(s)
	return string(runes[:limit]) + fmt.Sprintf("…(%d more characters)", len(runes)-limit)
}

// jsonTypeName names the JSON type of a decoded value for error messages.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, float32, int, int64, int32, json.Number:
		return "number"
	case []any, []string, []float64:
		return "list"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// decodeLooseJSON decodes one JSON value, keeping numbers as json.Number so
// that they are written back exactly, and rejects trailing data.
func decodeLooseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// looseInput is a loose parameter value after the steps every loose parser
// takes first, so that each parser switches only on its own forms.
type looseInput struct {
	value   any  // a string trimmed, JSON decoded, anything else as given
	present bool // false for nil, a blank string and an empty json.RawMessage
	decoded bool // value was decoded from JSON text or a json.RawMessage
}

// jsonTextRule says which strings a parser reads as JSON text (LLM clients
// often send lists and objects that way) and how it words a string that
// looks like JSON but does not decode.
type jsonTextRule struct {
	looksLikeJSON func(trimmed string) bool
	undecodable   string // the reason, before the decoder's own error
}

var (
	// jsonContainerText reads strings starting with { or [ as JSON.
	jsonContainerText = jsonTextRule{looksLikeJSONContainer, "looks like JSON but does not decode: "}
	// jsonListText reads strings starting with [ as JSON.
	jsonListText = jsonTextRule{
		func(s string) bool { return strings.HasPrefix(s, "[") },
		"looks like a JSON list but does not decode: ",
	}
	// jsonAlwaysText reads every non-blank string as JSON.
	jsonAlwaysText = jsonTextRule{func(string) bool { return true }, "not valid JSON: "}
	// jsonNeverText reads no string as JSON.
	jsonNeverText = jsonTextRule{looksLikeJSON: func(string) bool { return false }}
)

// paramErrorFor gives a loose parser its "bad" function: a ParamError naming
// param, showing what was received and quoting the accepted forms.
func paramErrorFor(param string, v any, accepted string) func(reason string) error {
	return func(reason string) error {
		return &ParamError{Param: param, Got: describeReceived(v), Reason: reason, Accepted: accepted}
	}
}

// readLoose does what every loose parser does first: nil, a blank string
// and an empty json.RawMessage are absent; a json.RawMessage, and a string
// the rule reads as JSON, are decoded (numbers as json.Number); any other
// string comes back trimmed and anything else as given. A decode failure is
// reported through the caller's bad.
func readLoose(v any, rule jsonTextRule, bad func(reason string) error) (looseInput, error) {
	switch x := v.(type) {
	case nil:
		return looseInput{}, nil
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			return looseInput{}, nil
		}
		if !rule.looksLikeJSON(s) {
			return looseInput{value: s, present: true}, nil
		}
		decoded, err := decodeLooseJSON([]byte(s))
		if err != nil {
			return looseInput{}, bad(rule.undecodable + err.Error())
		}
		return looseInput{value: decoded, present: true, decoded: true}, nil
	case json.RawMessage:
		if len(bytes.TrimSpace(x)) == 0 {
			return looseInput{}, nil
		}
		decoded, err := decodeLooseJSON(x)
		if err != nil {
			return looseInput{}, bad("not valid JSON: " + err.Error())
		}
		return looseInput{value: decoded, present: true, decoded: true}, nil
	}
	return looseInput{value: v, present: true}, nil
}

// numberFromLoose converts a decoded JSON number or Go number to float64.
// ok is false for anything that is not a finite number.
func numberFromLoose(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	case json.Number:
		parsed, err := x.Float64()
		if err != nil {
			return 0, false
		}
		f = parsed
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// looksLikeJSONContainer reports whether a string is probably a JSON object
// or list sent as text (the way some LLM clients send structured values).
func looksLikeJSONContainer(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

// formatCoordinate writes a float the shortest way that reads back exactly.
func formatCoordinate(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// formatCoordinates is formatCoordinate of each number, for a bbox parameter.
func formatCoordinates(numbers []float64) []string {
	out := make([]string, len(numbers))
	for i, f := range numbers {
		out[i] = formatCoordinate(f)
	}
	return out
}

// isFinite reports whether f is neither NaN nor infinite.
func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// asDecodedJSON converts a Go value of a type the parsers do not list
// ([]map[string]string, [4]float64, []int64, a struct, ...) into its decoded
// JSON form, so that every Go spelling of an accepted form is accepted. ok
// is false for values that already are decoded JSON (which the parsers have
// rejected on their own terms) and for values that cannot be marshalled.
func asDecodedJSON(v any) (decoded any, ok bool) {
	switch v.(type) {
	case nil, bool, string, float64, json.Number, []any, map[string]any:
		return nil, false
	}
	encoded, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	decoded, err = decodeLooseJSON(encoded)
	if err != nil {
		return nil, false
	}
	return decoded, true
}

// asAnyList turns a Go []string into the []any form of a decoded JSON
// list, so that a parser reads both in one place.
func asAnyList(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}
