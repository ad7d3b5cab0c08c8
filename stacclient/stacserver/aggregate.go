package stacserver

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// aggregationDef is one aggregation this server computes.
type aggregationDef struct {
	name     string
	dataType string
	extra    map[string]any // extra members of the definition
	compute  func([]*storedItem) map[string]any
}

// cloudCoverBucketWidth is the width of cloud_cover_frequency buckets.
const cloudCoverBucketWidth = 10

var aggregationDefs = []aggregationDef{
	{name: "total_count", dataType: "integer", compute: func(items []*storedItem) map[string]any {
		return map[string]any{"value": len(items)}
	}},
	{name: "collection_frequency", dataType: "frequency_distribution",
		extra:   map[string]any{"frequency_distribution_data_type": "string"},
		compute: collectionFrequency},
	{name: "datetime_frequency", dataType: "frequency_distribution",
		extra:   map[string]any{"frequency_distribution_data_type": "datetime", "interval": "month"},
		compute: datetimeFrequency},
	{name: "cloud_cover_frequency", dataType: "frequency_distribution",
		extra:   map[string]any{"frequency_distribution_data_type": "numeric", "interval": cloudCoverBucketWidth},
		compute: cloudCoverFrequency},
}

func aggregationNames() []string {
	names := make([]string, len(aggregationDefs))
	for i, d := range aggregationDefs {
		names[i] = d.name
	}
	return names
}

func (s *Server) handleAggregations(w http.ResponseWriter, r *http.Request) {
	defs := make([]any, 0, len(aggregationDefs))
	for _, d := range aggregationDefs {
		m := map[string]any{"name": d.name, "data_type": d.dataType}
		for k, v := range d.extra {
			m[k] = v
		}
		defs = append(defs, m)
	}
	if cid := r.PathValue("collectionId"); cid != "" {
		if _, ok := s.knownCollection(w, cid); !ok {
			return
		}
	}
	base := baseURL(r)
	writeJSON(w, http.StatusOK, mediaJSON, map[string]any{
		"aggregations": defs,
		"links":        []any{link("root", base+"/", mediaJSON), link("self", base+r.URL.Path, mediaJSON)},
	})
}

// handleAggregate runs the requested aggregations (all of them when none
// are named) over the items a search with the same parameters would match;
// under /collections/{id}/aggregate the search is limited to that collection.
func (s *Server) handleAggregate(w http.ResponseWriter, r *http.Request) {
	allowed := append(append([]string{}, searchParamNames...), "aggregations")
	cid := r.PathValue("collectionId")
	if cid != "" {
		if _, ok := s.knownCollection(w, cid); !ok {
			return
		}
	}
	q, err := s.decodeSearch(r, allowed, cid)
	if err != nil {
		writeError(w, err)
		return
	}
	names := q.Aggregations
	if len(names) == 0 {
		names = aggregationNames()
	}
	var defs []aggregationDef
	for _, n := range names {
		i := indexOfAggregation(n)
		if i < 0 {
			writeError(w, badParam("aggregations", strings.Join(names, ","), strings.Join(aggregationNames(), ", "),
				fmt.Sprintf("unknown aggregation %q", n)))
			return
		}
		defs = append(defs, aggregationDefs[i])
	}
	var matched []*storedItem
	for _, it := range s.store().allItems(q.Collections) {
		if q.matches(it) {
			matched = append(matched, it)
		}
	}
	out := make([]any, 0, len(defs))
	for _, d := range defs {
		m := d.compute(matched)
		m["name"], m["data_type"] = d.name, d.dataType
		out = append(out, m)
	}
	base := baseURL(r)
	writeJSON(w, http.StatusOK, mediaJSON, map[string]any{
		"type":          "AggregationCollection",
		"aggregations":  out,
		"numberMatched": len(matched),
		"links":         []any{link("root", base+"/", mediaJSON), link("self", base+r.URL.RequestURI(), mediaJSON)},
	})
}

func indexOfAggregation(name string) int {
	for i, d := range aggregationDefs {
		if d.name == name {
			return i
		}
	}
	return -1
}

// frequencyResult turns counts into sorted buckets; missing counts items
// that had no value (reported, never dropped silently).
func frequencyResult(counts map[string]int, bucketType string, extra func(key string, b map[string]any), missing int) map[string]any {
	buckets := make([]any, 0, len(counts))
	for _, k := range slices.Sorted(maps.Keys(counts)) {
		b := map[string]any{"key": k, "data_type": bucketType, "frequency": counts[k]}
		if extra != nil {
			extra(k, b)
		}
		buckets = append(buckets, b)
	}
	return map[string]any{"buckets": buckets, "missing": missing}
}

func collectionFrequency(items []*storedItem) map[string]any {
	counts := map[string]int{}
	for _, it := range items {
		counts[it.collection]++
	}
	return frequencyResult(counts, "frequency_distribution", nil, 0)
}

// datetimeFrequency buckets items by the month of their (start) datetime.
func datetimeFrequency(items []*storedItem) map[string]any {
	counts := map[string]int{}
	missing := 0
	for _, it := range items {
		if !it.hasTime {
			missing++
			continue
		}
		t := it.start.UTC()
		counts[time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")]++
	}
	return frequencyResult(counts, "frequency_distribution", func(key string, b map[string]any) {
		start, _ := time.Parse("2006-01-02T15:04:05.000Z", key)
		b["from"] = key
		b["to"] = start.AddDate(0, 1, 0).Format("2006-01-02T15:04:05.000Z")
	}, missing)
}

// cloudCoverFrequency is a histogram of properties.eo:cloud_cover in
// buckets of cloudCoverBucketWidth keyed "from-to" ("0-10", "10-20", …) in
// numeric order; 100 falls in the last bucket [90,100]. Only non-empty
// buckets are listed.
func cloudCoverFrequency(items []*storedItem) map[string]any {
	counts := map[int]int{} // bucket lower bound → frequency
	missing := 0
	for _, it := range items {
		v, ok := itemValue(it, "eo:cloud_cover")
		f, isNum := normalizeValue(v).(float64)
		if !ok || !isNum || f < 0 || f > 100 {
			missing++
			continue
		}
		counts[int(math.Min(math.Floor(f/cloudCoverBucketWidth), 100/cloudCoverBucketWidth-1))*cloudCoverBucketWidth]++
	}
	buckets := make([]any, 0, len(counts))
	for _, lower := range slices.Sorted(maps.Keys(counts)) {
		buckets = append(buckets, map[string]any{
			"key":       fmt.Sprintf("%d-%d", lower, lower+cloudCoverBucketWidth),
			"data_type": "numeric", "frequency": counts[lower],
			"from": lower, "to": lower + cloudCoverBucketWidth,
		})
	}
	return map[string]any{"buckets": buckets, "missing": missing}
}
