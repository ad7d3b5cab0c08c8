package stacserver

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func aggregationByName(t *testing.T, r response, name string) map[string]any {
	t.Helper()
	for _, a := range r.body["aggregations"].([]any) {
		if m := a.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("no aggregation %q in %s", name, r.raw)
	return nil
}

// bucketSum adds up bucket frequencies and returns them keyed too.
func bucketSum(t *testing.T, agg map[string]any) (int, map[string]int) {
	t.Helper()
	byKey := map[string]int{}
	sum := 0
	buckets, _ := agg["buckets"].([]any)
	for _, b := range buckets {
		m := b.(map[string]any)
		n := numberField(t, m, "frequency")
		byKey[m["key"].(string)] = n
		sum += n
	}
	return sum, byKey
}

func TestAggregate(t *testing.T) {
	ts := startServer(t, Options{})
	get := ts.get(t, "/aggregate?"+url.Values{"aggregations": {"total_count,datetime_frequency,cloud_cover_frequency,collection_frequency"},
		"datetime": {"../2021-03-31T23:59:59Z"}}.Encode())
	post := ts.post(t, "/aggregate", map[string]any{"datetime": "../2021-03-31T23:59:59Z"}) // all aggregations by default
	for _, r := range []response{get, post} {
		wantStatus(t, r, http.StatusOK)
		// s-00..s-08 (Jan 1 .. Mar 22), 5 landsat, 2 dem.
		const matched = 9 + landsatCount + demCount
		if n := numberField(t, r.body, "numberMatched"); n != matched {
			t.Fatalf("numberMatched %d, want %d", n, matched)
		}
		if v := aggregationByName(t, r, "total_count")["value"].(json.Number).String(); v != "16" {
			t.Errorf("total_count %s", v)
		}

		dt := aggregationByName(t, r, "datetime_frequency")
		sum, byKey := bucketSum(t, dt)
		if sum+numberField(t, dt, "missing") != matched {
			t.Errorf("datetime buckets %d + missing %v != %d", sum, dt["missing"], matched)
		}
		if byKey["2021-01-01T00:00:00.000Z"] != 4 || byKey["2021-02-01T00:00:00.000Z"] != 2 || byKey["2021-03-01T00:00:00.000Z"] != 3 {
			t.Errorf("monthly buckets %v", byKey)
		}

		cc := aggregationByName(t, r, "cloud_cover_frequency")
		sum, byKey = bucketSum(t, cc)
		// Missing: l-4 and the two dem items.
		if missing := numberField(t, cc, "missing"); missing != 3 || sum+missing != matched {
			t.Errorf("cloud cover buckets sum %d, missing %d, matched %d", sum, missing, matched)
		}
		// s-00..s-08 have 0,4,...,32; landsat 15,35,55,75.
		if byKey["0-10"] != 3 || byKey["10-20"] != 3 || byKey["30-40"] != 2 || byKey["70-80"] != 1 {
			t.Errorf("cloud cover buckets %v", byKey)
		}

		cf := aggregationByName(t, r, "collection_frequency")
		sum, byKey = bucketSum(t, cf)
		if sum != matched || byKey["sentinel"] != 9 || byKey["landsat"] != 5 || byKey["dem"] != 2 {
			t.Errorf("collection buckets %v", byKey)
		}
	}

	bad := ts.get(t, "/aggregate?aggregations=platform_frequency")
	wantStatus(t, bad, http.StatusBadRequest)
	if d := bad.body["description"].(string); !strings.Contains(d, "platform_frequency") || !strings.Contains(d, "total_count") {
		t.Errorf("description %q should name the bad aggregation and the accepted ones", d)
	}
	wantStatus(t, ts.post(t, "/aggregate", map[string]any{"bbox": []int{1}}), http.StatusBadRequest)
}

func TestAggregationsList(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/aggregations")
	wantStatus(t, r, http.StatusOK)
	names := map[string]string{}
	for _, a := range r.body["aggregations"].([]any) {
		m := a.(map[string]any)
		names[m["name"].(string)] = m["data_type"].(string)
	}
	want := map[string]string{"total_count": "integer", "datetime_frequency": "frequency_distribution",
		"cloud_cover_frequency": "frequency_distribution", "collection_frequency": "frequency_distribution"}
	for n, dt := range want {
		if names[n] != dt {
			t.Errorf("aggregation %s has data_type %q, want %q", n, names[n], dt)
		}
	}
}

func TestCollectionAggregate(t *testing.T) {
	ts := startServer(t, Options{})
	r := ts.get(t, "/collections/landsat/aggregate?aggregations=collection_frequency,total_count")
	wantStatus(t, r, http.StatusOK)
	if n := numberField(t, r.body, "numberMatched"); n != landsatCount {
		t.Errorf("matched %d, want %d", n, landsatCount)
	}
	if _, byKey := bucketSum(t, aggregationByName(t, r, "collection_frequency")); len(byKey) != 1 || byKey["landsat"] != landsatCount {
		t.Errorf("collection buckets %v", byKey)
	}
	wantStatus(t, ts.get(t, "/collections/landsat/aggregations"), http.StatusOK)
	wantStatus(t, ts.get(t, "/collections/nope/aggregate"), http.StatusNotFound)
	wantStatus(t, ts.get(t, "/collections/landsat/aggregate?collections=dem"), http.StatusBadRequest)
	if l := linkByRel(ts.get(t, "/collections/landsat").body, "aggregate"); l == nil || l["href"] != ts.URL+"/collections/landsat/aggregate" {
		t.Errorf("collection aggregate link %v", l)
	}
}

func TestCloudCoverBuckets(t *testing.T) {
	var items []*storedItem
	for _, v := range []any{json.Number("100"), json.Number("9.99"), json.Number("10"), json.Number("0"), json.Number("-1"), "cloudy", nil} {
		props := map[string]any{}
		if v != nil {
			props["eo:cloud_cover"] = v
		}
		items = append(items, &storedItem{doc: map[string]any{"properties": props}})
	}
	got := cloudCoverFrequency(items)
	if got["missing"] != 3 {
		t.Errorf("missing %v, want 3 (negative, text, absent)", got["missing"])
	}
	var keys []string
	for _, b := range got["buckets"].([]any) {
		m := b.(map[string]any)
		keys = append(keys, m["key"].(string)+"="+strconv.Itoa(m["frequency"].(int)))
	}
	if want := []string{"0-10=2", "10-20=1", "90-100=1"}; !equalStrings(keys, want) {
		t.Errorf("buckets %v, want %v", keys, want)
	}
}
