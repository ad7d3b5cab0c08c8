// Package cql2test reads the CQL2 reference material kept in
// stacclient/cql2/testdata (see its README.md) for the tests of the
// packages that evaluate CQL2: the Annex A cases of OGC 21-065 with their
// expected counts, and the test dataset they run on.
package cql2test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
)

// Dir is stacclient/cql2/testdata, wherever the test runs from.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// Case is one predicate of the Annex A tables with the number of items of
// Source it selects.
type Case struct {
	File, Source, Filter string
	Want                 int
}

// AnnexA reads the "Predicates and expected results" tables of the Annex A
// files, and the basic-cql2 combinations table expanded with the
// expression of its test (/conf/basic-cql2/logical), undoing the AsciiDoc
// escapes (\<= and \(( ).
func AnnexA() ([]Case, error) {
	files, err := filepath.Glob(filepath.Join(Dir(), "ogc", "ats", "annex_ats_*.adoc"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no Annex A files in %s", Dir())
	}
	unescape := strings.NewReplacer(`\<`, "<", `\(`, "(").Replace
	row := regexp.MustCompile("^\\|(ne_110m_[a-z0-9_]+) \\|`(.*)` \\|(\\d+)\\s*$")
	combo := regexp.MustCompile("^\\|`(.*)` \\|`(.*)` \\|`(.*)` \\|`(.*)` \\|(\\d+)\\s*$")
	var out []Case
	for _, path := range files {
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if m := row.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[3])
				out = append(out, Case{filepath.Base(path), m[1], unescape(m[2]), n})
			}
			if m := combo.FindStringSubmatch(line); m != nil {
				p := make([]string, 5)
				for i := 1; i <= 4; i++ {
					p[i] = unescape(m[i])
				}
				n, _ := strconv.Atoi(m[5])
				filter := fmt.Sprintf("(NOT (%s) AND %s) OR (%s and %s) or not (%s OR %s)", p[2], p[1], p[3], p[4], p[1], p[4])
				out = append(out, Case{filepath.Base(path) + " (logical)", "ne_110m_populated_places_simple", filter, n})
			}
		}
	}
	return out, nil
}

// Features reads a file of GeoJSON features (or flat JSON objects), one
// per line, numbers kept as json.Number.
func Features(path string) ([]map[string]any, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out []map[string]any
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, m)
	}
	return out, sc.Err()
}

// Dataset reads one table of the Annex A test dataset.
func Dataset(source string) ([]map[string]any, error) {
	return Features(filepath.Join(Dir(), "ogc", "data", source+".ndjson"))
}
