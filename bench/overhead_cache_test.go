package bench

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver"
	"github.com/stacmcp/stac-mcp/stacclient/stacserver/demo"
	"github.com/stacmcp/stac-mcp/tools"
)

// BenchmarkGetItemOverheadDefaultPolicy is get_item's overhead with the
// default reliability policy, cache included, as the server runs in
// production. Each iteration asks for a different demo item, so the item
// request itself always reaches the stacserver (like the direct request it
// is compared with) while the landing page and conformance that get_item
// consults are served from the cache after the first call. Only the first
// pass over the demo's items (128) is sampled.
//
//	go test -run '^$' -bench GetItemOverheadDefaultPolicy -benchtime 50x ./bench/
func BenchmarkGetItemOverheadDefaultPolicy(b *testing.B) {
	store, err := stacserver.LoadFS(demo.FS, demo.RootFile)
	if err != nil {
		b.Fatal(err)
	}
	items := demoItemRefs(b)
	srv := newBenchServerWithPolicy(b, store, tools.Limits{MaxItemsDefault: 10, MaxItemsCeiling: 100}, reliability.DefaultPolicy())
	srv.call(b, "get_root", map[string]any{}) // warm connections

	var viaMCP, direct []time.Duration
	upstream := 0
	i := 0
	for b.Loop() {
		// Once every item was asked for, answers come from the cache:
		// later iterations still run (b.Loop decides how many) but are
		// not sampled.
		ref := items[i%len(items)]
		sample := i < len(items)
		i++
		start := time.Now()
		res := srv.call(b, "get_item", map[string]any{"collection_id": ref.collection, "item_id": ref.id})
		elapsedMCP := time.Since(start)
		if !sample {
			continue
		}
		viaMCP = append(viaMCP, elapsedMCP)
		upstream += upstreamRequests(b, res)

		start = time.Now()
		resp, err := srv.direct.Get(srv.url + "/collections/" + ref.collection + "/items/" + ref.id)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("direct GET %s/%s: status %d, %v", ref.collection, ref.id, resp.StatusCode, err)
		}
		direct = append(direct, time.Since(start))
	}
	b.ReportMetric(ms(median(viaMCP)), "mcp_median_ms")
	b.ReportMetric(ms(median(direct)), "direct_median_ms")
	b.ReportMetric(ms(median(viaMCP))-ms(median(direct)), "added_ms")
	b.ReportMetric(float64(upstream)/float64(len(viaMCP)), "upstream_requests/call")
	b.ReportMetric(float64(len(viaMCP)), "samples")
}

type itemRef struct{ collection, id string }

// demoItemRefs lists the demo catalog's items as (collection, id), read
// from the item documents themselves.
func demoItemRefs(b *testing.B) []itemRef {
	b.Helper()
	var refs []itemRef
	err := fs.WalkDir(demo.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Base(path.Dir(p)) != "items" || !strings.HasSuffix(p, ".json") {
			return err
		}
		raw, err := fs.ReadFile(demo.FS, p)
		if err != nil {
			return err
		}
		var it struct{ ID, Collection string }
		if err := json.Unmarshal(raw, &it); err != nil {
			return err
		}
		if it.Collection != "" && it.ID != "" {
			refs = append(refs, itemRef{it.Collection, it.ID})
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return refs
}
