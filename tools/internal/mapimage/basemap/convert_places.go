//go:build ignore

// convert_places writes places-110m.tsv from Natural Earth's
// ne_110m_populated_places_simple.geojson (README.md says where that file
// comes from). Run from the repository root:
//
//	go run ./tools/internal/mapimage/basemap/convert_places.go \
//	    /tmp/package/example/datasets/ne_110m_populated_places_simple.geojson \
//	    tools/internal/mapimage/basemap/places-110m.tsv
//
// Output: UTF-8, tab-separated, one comment line, a header row, then one
// place per row: name, country (Natural Earth adm0name), lon, lat (degrees,
// 4 decimals, about 11 m), scalerank (0 the most important, Natural Earth's
// label priority), pop_max. Rows are sorted by scalerank, then pop_max
// descending, then name, so a reader wanting the N most important places
// takes the first N it finds in its frame. Tabs and newlines never occur in
// the names (checked).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

type feature struct {
	Properties struct {
		Name      string  `json:"name"`
		Adm0Name  string  `json:"adm0name"`
		ScaleRank int     `json:"scalerank"`
		PopMax    float64 `json:"pop_max"`
	} `json:"properties"`
	Geometry struct {
		Type        string     `json:"type"`
		Coordinates [2]float64 `json:"coordinates"`
	} `json:"geometry"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: convert_places IN.geojson OUT.tsv")
		os.Exit(2)
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		fail(err)
	}
	var fc struct {
		Features []feature `json:"features"`
	}
	if err := json.Unmarshal(raw, &fc); err != nil {
		fail(err)
	}
	fs := fc.Features
	for _, f := range fs {
		if f.Geometry.Type != "Point" {
			fail(fmt.Errorf("%s: geometry %s, want Point", f.Properties.Name, f.Geometry.Type))
		}
		if strings.ContainsAny(f.Properties.Name+f.Properties.Adm0Name, "\t\n\r") || f.Properties.Name == "" {
			fail(fmt.Errorf("name %q / %q cannot be written as TSV", f.Properties.Name, f.Properties.Adm0Name))
		}
	}
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i].Properties, fs[j].Properties
		if a.ScaleRank != b.ScaleRank {
			return a.ScaleRank < b.ScaleRank
		}
		if a.PopMax != b.PopMax {
			return a.PopMax > b.PopMax
		}
		return a.Name < b.Name
	})
	var b bytes.Buffer
	b.WriteString("# Natural Earth 1:110m populated places (public domain), from npm globe.gl 2.46.2; see README.md\n")
	b.WriteString("name\tcountry\tlon\tlat\tscalerank\tpop_max\n")
	for _, f := range fs {
		p := f.Properties
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%d\t%d\n", p.Name, p.Adm0Name, coord(f.Geometry.Coordinates[0]), coord(f.Geometry.Coordinates[1]),
			p.ScaleRank, int64(p.PopMax))
	}
	if err := os.WriteFile(os.Args[2], b.Bytes(), 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "%d places, %d bytes\n", len(fs), b.Len()) // the report goes to stderr, like every log in this repository
}

func coord(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func fail(err error) {
	fmt.Fprintln(os.Stderr, "convert_places:", err)
	os.Exit(1)
}
