package stacdoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// Result is what validating one document found: errors (the document is
// not valid STAC and is not written) and warnings (it is written; the
// caller passes them on).
type Result struct {
	Kind     string // "Item", "Collection" or "Catalog"
	ID       string
	Errors   []Problem
	Warnings []Problem
}

// Err is the errors as an *Error, or nil when there are none.
func (r *Result) Err() error {
	if len(r.Errors) == 0 {
		return nil
	}
	return &Error{Kind: r.Kind, ID: r.ID, Problems: r.Errors}
}

// WarningTexts are the warnings as sentences ("bbox: …").
func (r *Result) WarningTexts() []string {
	out := make([]string, 0, len(r.Warnings))
	for _, w := range r.Warnings {
		if w.Path == "" {
			out = append(out, w.Message)
			continue
		}
		out = append(out, w.Path+": "+w.Message)
	}
	return out
}

var kinds = map[string]string{"Feature": "Item", "Collection": "Collection", "Catalog": "Catalog"}

// validate runs the rules of this package and then the schemas. want is
// the type the caller expects ("" takes the document's own).
func validate(doc map[string]any, want string) *Result {
	c := &checker{}
	typ, _ := doc["type"].(string)
	if want == "" {
		want = typ
		if _, ok := kinds[typ]; !ok {
			want = "Feature" // named in the message below
			c.add("type", "is %s, want \"Feature\" (an Item), \"Collection\" or \"Catalog\"", describeMember(doc, "type"))
		}
	} else if typ != want {
		c.add("type", "is %s, want %q", describeMember(doc, "type"), want)
	}
	kind := kinds[want]
	c.common(doc)
	switch want {
	case "Feature":
		c.item(doc)
	case "Collection":
		c.collection(doc)
	case "Catalog":
		for _, k := range []string{"description"} {
			if s, _ := doc[k].(string); strings.TrimSpace(s) == "" {
				c.add(k, "is %s, want a non-empty string", describeMember(doc, k))
			}
		}
	}
	if len(c.problems) == 0 || onlyBelow(c.problems) {
		c.schemas(doc, strings.ToLower(kind))
	}
	id, _ := doc["id"].(string)
	return &Result{Kind: kind, ID: id, Errors: c.problems, Warnings: c.warnings}
}

// onlyBelow: the schema pass is skipped when the document is not even the
// right kind of object (its type, version or id are wrong), where schema
// messages would only repeat that.
func onlyBelow(ps []Problem) bool {
	for _, p := range ps {
		if p.Path == "type" || p.Path == "stac_version" {
			return false
		}
	}
	return true
}

// schemas validates doc against the core schema of its stac_version and
// each extension schema it declares. A schema that is not embedded is a
// warning "not validated: <url>", never a silent pass. Schema failures at
// a member the rules above already reported are left out: those rules
// say the same with a better hint.
func (c *checker) schemas(doc map[string]any, kind string) {
	value, err := jsonValue(doc)
	if err != nil {
		c.add("", "cannot be encoded as JSON: %v", err)
		return
	}
	version, _ := doc["stac_version"].(string)
	var urls []string
	core := coreSchemaURL(kind, version)
	if Embedded(core) {
		urls = append(urls, core)
	} else {
		c.warn("stac_version", "not validated: %s (this build embeds the STAC %s schemas; the other rules were applied)", core, strings.Join(ValidatedVersions, ", "))
	}
	exts, _ := doc["stac_extensions"].([]any)
	for i, e := range exts {
		u, _ := e.(string)
		if u == "" {
			continue // reported by common
		}
		if !Embedded(u) {
			c.warn(fmt.Sprintf("stac_extensions[%d]", i), "not validated: %s (no schema for this extension is embedded)", u)
			continue
		}
		urls = append(urls, u)
	}
	reported := c.problems
	for _, u := range urls {
		ps, err := schemaProblems(u, value)
		if err != nil {
			c.add("", "could not validate by %s: %v", u, err)
			continue
		}
		for _, p := range ps {
			if covered(reported, p.Path) {
				continue
			}
			if u != core {
				p.Message += " (" + extensionName(u) + ")"
			}
			c.problems = append(c.problems, p)
		}
	}
}

// covered: a problem was already reported at path or at a member holding it.
func covered(ps []Problem, path string) bool {
	for _, p := range ps {
		if p.Path == path || (p.Path != "" && (strings.HasPrefix(path, p.Path+".") || strings.HasPrefix(path, p.Path+"["))) {
			return true
		}
	}
	return false
}

// extensionName shortens an extension schema URL for messages:
// "https://stac-extensions.github.io/eo/v1.0.0/schema.json" is "eo v1.0.0".
func extensionName(u string) string {
	rest, ok := strings.CutPrefix(u, "https://stac-extensions.github.io/")
	if !ok {
		return "schema " + u
	}
	parts := strings.Split(rest, "/")
	if len(parts) >= 2 {
		return "extension " + parts[0] + " " + parts[1]
	}
	return "schema " + u
}

// jsonValue is doc as the schema validator reads JSON (numbers as
// json.Number): documents built in Go may hold other types.
func jsonValue(doc map[string]any) (any, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}
