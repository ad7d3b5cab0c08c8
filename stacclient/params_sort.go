package stacclient

import (
	"errors"
	"fmt"
	"strings"
)

const sortByAccepted = `"-properties.datetime,+id,collection" (prefix - descending, + or none ascending), a list of such strings, or a list of {"field": "...", "direction": "asc"|"desc"} objects`

// ParseSortBy accepts "-properties.datetime,+id", a list of such strings, or
// a list of {field, direction} objects (direction asc/desc, also
// ascending/descending; missing means asc).
func ParseSortBy(v any) ([]SortField, error) {
	bad := paramErrorFor("sortby", v, sortByAccepted)
	in, err := readLoose(v, jsonContainerText, bad)
	switch {
	case err != nil || !in.present:
		return nil, err
	case in.decoded:
		return ParseSortBy(in.value)
	}
	var out []SortField
	switch x := in.value.(type) {
	case string:
		for _, term := range strings.Split(x, ",") {
			term = strings.TrimSpace(term)
			if term == "" {
				continue
			}
			field, err := sortFieldFromTerm(term)
			if err != nil {
				return nil, bad(err.Error())
			}
			out = append(out, field)
		}
	case []string:
		for _, term := range x {
			fields, err := ParseSortBy(term)
			if err != nil {
				return nil, err
			}
			out = append(out, fields...)
		}
	case []SortField:
		for i, f := range x {
			field, err := sortFieldFromObject(map[string]any{"field": f.Field, "direction": f.Direction})
			if err != nil {
				return nil, bad(fmt.Sprintf("entry %d: %v", i, err))
			}
			out = append(out, field)
		}
	case []any:
		for i, e := range x {
			switch entry := e.(type) {
			case string:
				fields, err := ParseSortBy(entry)
				if err != nil {
					return nil, err
				}
				out = append(out, fields...)
			case map[string]any:
				field, err := sortFieldFromObject(entry)
				if err != nil {
					return nil, bad(fmt.Sprintf("entry %d: %v", i, err))
				}
				out = append(out, field)
			default:
				return nil, bad(fmt.Sprintf("entry %d is a %s, not a string or {field, direction} object", i, jsonTypeName(e)))
			}
		}
	case map[string]any:
		return ParseSortBy([]any{x})
	default:
		if decoded, ok := asDecodedJSON(v); ok {
			return ParseSortBy(decoded)
		}
		return nil, bad("a " + jsonTypeName(v) + " is not a sort specification")
	}
	if len(out) == 0 {
		return nil, nil
	}
	seen := make(map[string]bool, len(out))
	for _, f := range out {
		if seen[f.Field] {
			return nil, bad(fmt.Sprintf("field %q appears more than once", f.Field))
		}
		seen[f.Field] = true
	}
	return out, nil
}

// sortFieldFromTerm reads one "-field" / "+field" / "field" term.
func sortFieldFromTerm(term string) (SortField, error) {
	direction := "asc"
	switch term[0] {
	case '-':
		direction, term = "desc", term[1:]
	case '+':
		term = term[1:]
	}
	term = strings.TrimSpace(term)
	if err := checkFieldName(term); err != nil {
		return SortField{}, err
	}
	return SortField{Field: term, Direction: direction}, nil
}

// sortFieldFromObject reads one {field, direction} object.
func sortFieldFromObject(obj map[string]any) (SortField, error) {
	for key := range obj {
		if key != "field" && key != "direction" {
			return SortField{}, fmt.Errorf("unknown member %q (only field and direction)", key)
		}
	}
	name, ok := obj["field"].(string)
	if !ok {
		return SortField{}, fmt.Errorf("field must be a string, got %s", jsonTypeName(obj["field"]))
	}
	name = strings.TrimSpace(name)
	if err := checkFieldName(name); err != nil {
		return SortField{}, err
	}
	direction := "asc"
	if raw, present := obj["direction"]; present && raw != nil {
		text, isString := raw.(string)
		if !isString {
			return SortField{}, fmt.Errorf("direction must be a string, got %s", jsonTypeName(raw))
		}
		switch strings.ToLower(strings.TrimSpace(text)) {
		case "asc", "ascending", "":
			direction = "asc"
		case "desc", "descending":
			direction = "desc"
		default:
			return SortField{}, fmt.Errorf("direction %q is not asc, desc, ascending or descending", text)
		}
	}
	return SortField{Field: name, Direction: direction}, nil
}

// checkFieldName rejects property names that cannot be sent: empty ones,
// ones with spaces or commas, and ones with a second +/- sign.
func checkFieldName(name string) error {
	if name == "" {
		return fmt.Errorf("empty field name")
	}
	if strings.ContainsAny(name, " \t\r\n,") {
		return fmt.Errorf("field name %q contains a space or comma", name)
	}
	if name[0] == '+' || name[0] == '-' {
		return fmt.Errorf("field name %q has more than one +/- prefix", name)
	}
	return nil
}

const fieldsAccepted = `"a,-b,+c" (prefix - excludes, + or none includes), a list of such strings, or {"include": [...], "exclude": [...]}`

// ParseFields accepts "a,-b", a list of such strings, or {include, exclude}.
// A field may not be both included and excluded.
func ParseFields(v any) (*Fields, error) {
	bad := paramErrorFor("fields", v, fieldsAccepted)
	in, err := readLoose(v, jsonContainerText, bad)
	switch {
	case err != nil || !in.present:
		return nil, err
	case in.decoded:
		return ParseFields(in.value)
	}
	out := &Fields{}
	switch x := in.value.(type) {
	case string:
		err = out.addTerms(x, bad)
	case []string:
		for _, term := range x {
			if err = out.addTerms(term, bad); err != nil {
				break
			}
		}
	case []any:
		err = out.addTermList(x, bad)
	case *Fields:
		if x == nil {
			return nil, nil
		}
		return ParseFields(map[string]any{"include": x.Include, "exclude": x.Exclude})
	case Fields:
		return ParseFields(&x)
	case map[string]any:
		err = out.setMembers(x, bad)
	default:
		if decoded, ok := asDecodedJSON(v); ok {
			return ParseFields(decoded)
		}
		return nil, bad("a " + jsonTypeName(v) + " is not a fields specification")
	}
	if err != nil {
		return nil, err
	}
	return out.consistent(bad)
}

// addTerms adds the comma-separated terms of s: "a,-b,+c".
func (f *Fields) addTerms(s string, bad func(reason string) error) error {
	for _, term := range strings.Split(s, ",") {
		if err := f.addTerm(term); err != nil {
			return bad(err.Error())
		}
	}
	return nil
}

// addTermList adds the terms of a JSON list, each entry a string of
// comma-separated terms.
func (f *Fields) addTermList(list []any, bad func(reason string) error) error {
	for i, e := range list {
		term, ok := e.(string)
		if !ok {
			return bad(fmt.Sprintf("entry %d is a %s, not a string", i, jsonTypeName(e)))
		}
		if err := f.addTerms(term, bad); err != nil {
			return err
		}
	}
	return nil
}

// addTerm adds one term: a field name, excluded when prefixed with -,
// included when prefixed with + or nothing. A blank term adds nothing.
func (f *Fields) addTerm(term string) error {
	term = strings.TrimSpace(term)
	if term == "" {
		return nil
	}
	exclude := false
	switch term[0] {
	case '-':
		exclude, term = true, strings.TrimSpace(term[1:])
	case '+':
		term = strings.TrimSpace(term[1:])
	}
	if err := checkFieldName(term); err != nil {
		return err
	}
	if exclude {
		f.Exclude = append(f.Exclude, term)
	} else {
		f.Include = append(f.Include, term)
	}
	return nil
}

// setMembers reads {"include": [...], "exclude": [...]}, each member a list
// of field names.
func (f *Fields) setMembers(members map[string]any, bad func(reason string) error) error {
	for key, value := range members {
		if key != "include" && key != "exclude" {
			return bad(fmt.Sprintf("unknown member %q (only include and exclude)", key))
		}
		names, err := ParseStringList("fields."+key, value)
		if err != nil {
			var pe *ParamError
			if !errors.As(err, &pe) {
				return err // not reached: ParseStringList reports a *ParamError
			}
			return bad(fmt.Sprintf("%s: %v", key, pe.Reason))
		}
		for _, name := range names {
			if err := checkFieldName(name); err != nil {
				return bad(fmt.Sprintf("%s: %v", key, err))
			}
		}
		if key == "include" {
			f.Include = names
		} else {
			f.Exclude = names
		}
	}
	return nil
}

// consistent is f, or nil when it names no field; a field both included
// and excluded is an error.
func (f *Fields) consistent(bad func(reason string) error) (*Fields, error) {
	if len(f.Include) == 0 && len(f.Exclude) == 0 {
		return nil, nil
	}
	excluded := make(map[string]bool, len(f.Exclude))
	for _, name := range f.Exclude {
		excluded[name] = true
	}
	for _, name := range f.Include {
		if excluded[name] {
			return nil, bad(fmt.Sprintf("field %q is both included and excluded", name))
		}
	}
	return f, nil
}
