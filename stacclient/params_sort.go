package stacclient

import (
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
	out := &Fields{}
	addTerm := func(term string) error {
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
			out.Exclude = append(out.Exclude, term)
		} else {
			out.Include = append(out.Include, term)
		}
		return nil
	}
	in, err := readLoose(v, jsonContainerText, bad)
	switch {
	case err != nil || !in.present:
		return nil, err
	case in.decoded:
		return ParseFields(in.value)
	}
	switch x := in.value.(type) {
	case string:
		for _, term := range strings.Split(x, ",") {
			if err := addTerm(term); err != nil {
				return nil, bad(err.Error())
			}
		}
	case []string:
		for _, term := range x {
			for _, part := range strings.Split(term, ",") {
				if err := addTerm(part); err != nil {
					return nil, bad(err.Error())
				}
			}
		}
	case []any:
		for i, e := range x {
			term, ok := e.(string)
			if !ok {
				return nil, bad(fmt.Sprintf("entry %d is a %s, not a string", i, jsonTypeName(e)))
			}
			for _, part := range strings.Split(term, ",") {
				if err := addTerm(part); err != nil {
					return nil, bad(err.Error())
				}
			}
		}
	case *Fields:
		if x == nil {
			return nil, nil
		}
		return ParseFields(map[string]any{"include": x.Include, "exclude": x.Exclude})
	case Fields:
		return ParseFields(&x)
	case map[string]any:
		for key, members := range x {
			if key != "include" && key != "exclude" {
				return nil, bad(fmt.Sprintf("unknown member %q (only include and exclude)", key))
			}
			names, err := ParseStringList("fields."+key, members)
			if err != nil {
				return nil, bad(fmt.Sprintf("%s: %v", key, err.(*ParamError).Reason))
			}
			for _, name := range names {
				if err := checkFieldName(name); err != nil {
					return nil, bad(fmt.Sprintf("%s: %v", key, err))
				}
			}
			if key == "include" {
				out.Include = names
			} else {
				out.Exclude = names
			}
		}
	default:
		if decoded, ok := asDecodedJSON(v); ok {
			return ParseFields(decoded)
		}
		return nil, bad("a " + jsonTypeName(v) + " is not a fields specification")
	}
	if len(out.Include) == 0 && len(out.Exclude) == 0 {
		return nil, nil
	}
	excluded := make(map[string]bool, len(out.Exclude))
	for _, name := range out.Exclude {
		excluded[name] = true
	}
	for _, name := range out.Include {
		if excluded[name] {
			return nil, bad(fmt.Sprintf("field %q is both included and excluded", name))
		}
	}
	return out, nil
}
