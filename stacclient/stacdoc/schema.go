package stacdoc

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The official JSON Schemas, embedded so that validation needs no network:
// schemas/<host>/<path> holds the schema published at https://<host>/<path>
// (schemas/README.md names the source and licence of each).
//
//go:embed schemas
var schemaFiles embed.FS

// ValidatedVersions are the stac_version values whose core schemas are
// embedded: documents of these versions are validated by schema.
var ValidatedVersions = []string{"1.0.0", "1.1.0"}

// knownVersions are released STAC versions accepted for writing. Each is
// also in ValidatedVersions today; a version added here without its
// schemas is checked by the rules here only, with a warning naming the
// core schema that was not applied.
var knownVersions = map[string]bool{"1.0.0": true, "1.1.0": true}

// schemaPath maps a schema URL to its embedded file, or "" when it is not
// embedded.
func schemaPath(u string) string {
	u = strings.TrimSuffix(u, "#")
	p, err := url.Parse(u)
	if err != nil || p.Scheme != "https" || p.Host == "" || p.RawQuery != "" || p.Fragment != "" {
		return ""
	}
	name := p.Host + p.Path
	if _, err := fs.Stat(schemaFiles, "schemas/"+name); err != nil {
		return ""
	}
	return "schemas/" + name
}

// Embedded reports whether the schema at u is embedded.
func Embedded(u string) bool { return schemaPath(u) != "" }

// embeddedLoader serves schema URLs from the embedded files and refuses
// every other URL, so validation never reaches the network.
type embeddedLoader struct{}

func (embeddedLoader) Load(u string) (any, error) {
	path := schemaPath(u)
	if path == "" {
		return nil, fmt.Errorf("schema %s is not embedded", u)
	}
	b, err := schemaFiles.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

var (
	compiler     *jsonschema.Compiler
	compilerOnce sync.Once
	compiledMu   sync.Mutex
	compiled     = map[string]*jsonschema.Schema{}
)

// schemaFor compiles (once) the embedded schema at u.
func schemaFor(u string) (*jsonschema.Schema, error) {
	compilerOnce.Do(func() {
		compiler = jsonschema.NewCompiler()
		compiler.DefaultDraft(jsonschema.Draft7)
		compiler.AssertFormat() // as stac-node-validator (ajv-formats) does
		compiler.UseLoader(jsonschema.SchemeURLLoader{"https": embeddedLoader{}, "http": embeddedLoader{}})
		compiler.UseRegexpEngine(regexpEngine)
	})
	key := strings.TrimSuffix(u, "#")
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if s, ok := compiled[key]; ok {
		return s, nil
	}
	s, err := compiler.Compile(key)
	if err != nil {
		return nil, err
	}
	compiled[key] = s
	return s, nil
}

// coreSchemaURL is where the STAC specification publishes the schema of a
// document type ("item", "collection", "catalog") at version v.
func coreSchemaURL(kind, v string) string {
	return fmt.Sprintf("https://schemas.stacspec.org/v%s/%s-spec/json-schema/%s.json", v, kind, kind)
}

// schemaProblems validates doc against the schema at u and turns the
// failures into problems naming the member at fault.
func schemaProblems(u string, doc any) ([]Problem, error) {
	s, err := schemaFor(u)
	if err != nil {
		return nil, err
	}
	err = s.Validate(doc)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var out []Problem
	leaves(ve, &out)
	seen := map[Problem]bool{}
	uniq := out[:0]
	for _, p := range out {
		if !seen[p] {
			seen[p] = true
			uniq = append(uniq, p)
		}
	}
	sort.SliceStable(uniq, func(i, j int) bool { return uniq[i].Path < uniq[j].Path })
	return uniq, nil
}

// leaves collects the innermost failures of a validation error. Where a
// value had to match one of several forms (anyOf, oneOf: a geometry type,
// a datetime or null), the form it came closest to — the one whose
// failures lie deepest in the value — is the one reported, with a note
// that other forms exist.
func leaves(e *jsonschema.ValidationError, out *[]Problem) {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		if best := closestForm(e); best != nil {
			leaves(best, out)
			return
		}
	}
	if r, ok := e.ErrorKind.(*kind.Required); ok {
		// One problem per missing member, at the member ("properties.datetime").
		for _, m := range r.Missing {
			*out = append(*out, Problem{Path: instancePath(append(append([]string{}, e.InstanceLocation...), m)), Message: "missing (the schema requires it)"})
		}
		return
	}
	if len(e.Causes) == 0 || isLeafKind(e.ErrorKind) {
		*out = append(*out, Problem{Path: instancePath(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(printer)})
		return
	}
	for _, c := range e.Causes {
		leaves(c, out)
	}
}

// closestForm picks, among the forms a value failed, the one it meant:
// forms refused for their "type" member or for the value's JSON type
// (a Polygon is not a MultiPolygon; a string is not null) are set aside,
// and of the rest the one whose failures lie deepest wins. nil when no
// form stands out.
func closestForm(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	var best *jsonschema.ValidationError
	for _, c := range e.Causes {
		if wrongForm(c, len(e.InstanceLocation)) {
			continue
		}
		if best == nil || depth(c) > depth(best) {
			best = c
		}
	}
	return best
}

// wrongForm: the failure says the value is another kind of thing: its
// own JSON type differs, or its "type" member has another value.
func wrongForm(e *jsonschema.ValidationError, at int) bool {
	switch e.ErrorKind.(type) {
	case *kind.Type:
		if len(e.InstanceLocation) == at {
			return true
		}
	case *kind.Const, *kind.Enum:
		if len(e.InstanceLocation) == at+1 && e.InstanceLocation[at] == "type" {
			return true
		}
	}
	for _, c := range e.Causes {
		if wrongForm(c, at) {
			return true
		}
	}
	return false
}

// isLeafKind: errors whose causes explain nothing more (a "not" or an
// if/then that failed reads best as the rule itself).
func isLeafKind(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Not, *kind.AnyOf, *kind.OneOf:
		return true
	}
	return false
}

// depth is the deepest instance location among an error's leaves.
func depth(e *jsonschema.ValidationError) int {
	d := len(e.InstanceLocation)
	for _, c := range e.Causes {
		if cd := depth(c); cd > d {
			d = cd
		}
	}
	return d
}

// instancePath writes a JSON pointer's tokens as the dotted path the
// other problems use ("properties.gsd", "links[2].href").
func instancePath(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		if isIndex(t) {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// regexpEngine compiles the schemas' patterns (ECMA 262 regular
// expressions) with Go's regexp, except the one construct of the embedded
// schemas that Go lacks: the extensions' "^(?!eo:)" (a name that does not
// start with the prefix), read as exactly that. Any other lookaround fails
// to compile, which the tests over every embedded schema would show.
func regexpEngine(s string) (jsonschema.Regexp, error) {
	if prefix, ok := strings.CutPrefix(s, "^(?!"); ok {
		if prefix, ok = strings.CutSuffix(prefix, ")"); ok && regexp.QuoteMeta(prefix) == prefix {
			return notPrefix{s, prefix}, nil
		}
	}
	return regexp.Compile(s)
}

type notPrefix struct{ pattern, prefix string }

func (n notPrefix) MatchString(s string) bool { return !strings.HasPrefix(s, n.prefix) }
func (n notPrefix) String() string            { return n.pattern }
