//go:build ignore

// convert writes the three tables of the CQL2 test dataset (OGC 21-065
// Annex A, cql2/standard/data/ne110m4cql2.gpkg in opengeospatial/ogcapi-features)
// as GeoJSON features, one per line, keeping every column as written in the
// GeoPackage: DATE and DATETIME columns as their text, BOOLEAN as true/false,
// a NULL column as JSON null.
//
//	go run ./stacclient/cql2/testdata/ogc/data/convert.go ne110m4cql2.gpkg stacclient/cql2/testdata/ogc/data
package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peterstace/simplefeatures/geom"
	_ "modernc.org/sqlite"
)

func main() {
	db, err := sql.Open("sqlite", os.Args[1])
	check(err)
	for _, table := range []string{"ne_110m_admin_0_countries", "ne_110m_populated_places_simple", "ne_110m_rivers_lake_centerlines"} {
		types := map[string]string{}
		cols, err := db.Query(fmt.Sprintf("PRAGMA table_info(%q)", table))
		check(err)
		for cols.Next() {
			var cid, notnull, pk int
			var name, typ string
			var dflt any
			check(cols.Scan(&cid, &name, &typ, &notnull, &dflt, &pk))
			types[name] = strings.ToUpper(typ)
		}
		rows, err := db.Query(fmt.Sprintf("SELECT * FROM %q ORDER BY fid", table))
		check(err)
		names, err := rows.Columns()
		check(err)
		out, err := os.Create(filepath.Join(os.Args[2], table+".ndjson"))
		check(err)
		for rows.Next() {
			vals := make([]any, len(names))
			ptrs := make([]any, len(names))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			check(rows.Scan(ptrs...))
			props := map[string]any{}
			var fid int64
			var g json.RawMessage
			for i, n := range names {
				v := vals[i]
				switch {
				case n == "fid":
					fid = v.(int64)
				case n == "geom":
					g = gpkgGeometry(v.([]byte))
				case v == nil:
					props[n] = nil
				case types[n] == "DATE":
					// The driver reads a DATE as a time; the column holds a day.
					props[n] = v.(time.Time).Format(time.DateOnly)
				case types[n] == "DATETIME":
					props[n] = v.(time.Time).UTC().Format(time.RFC3339Nano)
				case types[n] == "BOOLEAN":
					props[n] = v.(int64) != 0
				default:
					if b, ok := v.([]byte); ok {
						v = string(b)
					}
					props[n] = v
				}
			}
			line, err := json.Marshal(map[string]any{"type": "Feature", "id": fid, "geometry": g, "properties": props})
			check(err)
			fmt.Fprintln(out, string(line))
		}
		check(out.Close())
	}
}

// gpkgGeometry decodes a GeoPackage geometry blob: "GP", version, flags,
// srs id, an envelope whose size the flags give, then WKB.
func gpkgGeometry(b []byte) json.RawMessage {
	if len(b) < 8 || string(b[:2]) != "GP" {
		panic("not a GeoPackage geometry")
	}
	envelope := map[byte]int{0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(b[3]>>1)&7]
	g, err := geom.UnmarshalWKB(b[8+envelope:], geom.NoValidate{})
	check(err)
	raw, err := g.MarshalJSON()
	check(err)
	return raw
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}
