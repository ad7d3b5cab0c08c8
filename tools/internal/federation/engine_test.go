package federation

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.uber.org/goleak"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
	"github.com/stacmcp/stac-mcp/tools/internal/federation/fedtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// catalogs are the members of one test: servers in each catalog's style on
// loopback, and clients through one reliability layer.
type catalogs struct {
	layer   *reliability.Layer
	members []Member
}

type served struct {
	name  string
	style fedtest.Style
	items []fedtest.Item
	// wrap, when set, wraps the catalog's handler (a hang, a fault).
	wrap func(http.Handler) http.Handler
}

func newCatalogs(t *testing.T, policy *reliability.Policy, list ...served) *catalogs {
	t.Helper()
	p := reliability.DefaultPolicy()
	p.BackoffBase = time.Millisecond
	p.RetryAfterCap = 10 * time.Millisecond
	p.CacheTTL = 0
	if policy != nil {
		p = *policy
	}
	logger := zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.WarnLevel)
	c := &catalogs{layer: reliability.New(p, reliability.Options{Logger: &logger})}
	for _, s := range list {
		srv, err := fedtest.Server(s.style, s.items)
		if err != nil {
			t.Fatal(err)
		}
		var h http.Handler = srv
		if s.wrap != nil {
			h = s.wrap(h)
		}
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		client, err := stacclient.New(ts.URL+s.style.BasePath, stacclient.Options{HTTPClient: c.layer.HTTPClient()})
		if err != nil {
			t.Fatal(err)
		}
		c.members = append(c.members, Member{Name: s.name, Preset: s.name, Host: strings.TrimPrefix(ts.URL, "http://"), Client: client})
	}
	return c
}

// prepare maps the asked collections for each member, as the tools do.
func (c *catalogs) prepare(params stacclient.SearchParams, order Order) func(ctx context.Context, i int) (Prepared, error) {
	return func(ctx context.Context, i int) (Prepared, error) {
		m := c.members[i]
		p := params
		mapping, err := MapCollections(ctx, m, params.Collections)
		if err != nil {
			return Prepared{}, err
		}
		if len(params.Collections) > 0 && len(mapping.IDs) == 0 {
			return Prepared{Skip: fmt.Sprintf("%s has no collection %s", m.Name, strings.Join(mapping.Missing, ", "))}, nil
		}
		p.Collections = mapping.IDs
		p.SortBy = order.Fields()
		return Prepared{Params: p, Notes: mapping.Notes, Sorted: true}, nil
	}
}

// page runs one call; starts nil means a new search.
func (c *catalogs) page(t *testing.T, params stacclient.SearchParams, maxItems int, starts []Start, tail []Record) *Result {
	t.Helper()
	order := NewOrder(params.SortBy)
	if params.Limit == 0 {
		params.Limit = maxItems
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, c.members, starts, Options{Order: order, MaxItems: maxItems, Latency: c.layer, ColdWait: time.Second,
		Tail: tail, Prepare: c.prepare(params, order)})
}

// next is the Starts a cursor would carry from res.
func (c *catalogs) next(t *testing.T, res *Result) []Start {
	t.Helper()
	var out []Start
	for i, p := range res.Positions {
		s := Start{State: p.State}
		if p.State == Active && p.Position != nil {
			diff, err := c.members[i].Client.DiffRequest(p.Params, p.Position.Request)
			if err != nil {
				t.Fatal(err)
			}
			s.Resume = &Resume{Diff: diff, Skip: p.Position.Skip, Offset: p.Position.Offset}
		}
		if p.State == Dropped {
			s.Why = "failed on an earlier page"
		}
		out = append(out, s)
	}
	return out
}

func ids(entries []*Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.Item.ID)
	}
	return out
}

// The 31 July 2025 scenes of Earth Search's recorded pages, in
// sentinel-2-l2a, and Planetary Computer's copies of some of them plus its
// own recorded datatake of 1 January 2019.
func julyScenes() (es, pc []fedtest.Item) {
	es = fedtest.InCollection(fedtest.EarthSearchItems(), "sentinel-2-l2a")
	for _, id := range []string{"S2B_24MUV_20250731_0_L2A", "S2B_24MVV_20250731_0_L2A", "S2B_24MXV_20250731_0_L2A"} {
		pc = append(pc, fedtest.CopyInPlanetaryComputer(fedtest.Find(es, id)))
	}
	return es, append(pc, fedtest.PlanetaryComputerItems()...)
}

func TestMergedNewestFirstDeduplicatedWithProvenance(t *testing.T) {
	es, pc := julyScenes()
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: fedtest.EarthSearch(), items: es},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: pc})
	res := c.page(t, stacclient.SearchParams{Collections: []string{"sentinel-2-l2a"}}, 12, nil, nil)
	if len(res.Entries) != 12 {
		t.Fatalf("%d entries, want 12: %v", len(res.Entries), ids(res.Entries))
	}
	for i := 1; i < len(res.Entries); i++ {
		a, _ := res.Entries[i-1].Item.Datetime()
		b, _ := res.Entries[i].Item.Datetime()
		if a.Before(b) {
			t.Errorf("entry %d (%s) is older than entry %d (%s): not newest first", i-1, a, i, b)
		}
	}
	seenTiles := map[string]int{}
	for _, e := range res.Entries {
		seenTiles[e.Identity.platform+e.Identity.tile+e.Identity.time.Format("20060102")]++
		if e.Identity.tile == "24MUV" || e.Identity.tile == "24MVV" || e.Identity.tile == "24MXV" {
			if len(e.AlsoIn) != 1 || e.Member != 0 || e.AlsoIn[0].Member != 1 || !strings.HasPrefix(e.AlsoIn[0].ID, "S2B_MSIL2A_20250731") {
				t.Errorf("%s: kept member %d, also in %+v; want Earth Search's copy kept (listed first, equally readable) and Planetary Computer's named", e.Item.ID, e.Member, e.AlsoIn)
			}
			if !strings.Contains(e.Kept, "listed first") || e.Evidence == "" {
				t.Errorf("%s: kept %q, evidence %q", e.Item.ID, e.Kept, e.Evidence)
			}
		} else if len(e.AlsoIn) != 0 {
			t.Errorf("%s has copies %+v: only 24MUV, 24MVV and 24MXV are in both catalogs", e.Item.ID, e.AlsoIn)
		}
	}
	for k, n := range seenTiles {
		if n > 1 {
			t.Errorf("scene %s returned %d times", k, n)
		}
	}
	// 24MWV and 24MUA (same datatake, no copy) stay; the 2019 items of the
	// Planetary Computer follow the 2025 ones.
	got := ids(res.Entries)
	for _, want := range []string{"S2B_24MWV_20250731_0_L2A", "S2B_24MUA_20250731_0_L2A"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s missing from %v", want, got)
		}
	}
	if res.Outcomes[0].Status != Answered || res.Outcomes[1].Status != Answered {
		t.Errorf("outcomes %+v", res.Outcomes)
	}
	if res.Outcomes[1].Folded != 3 || res.Outcomes[0].Returned+res.Outcomes[1].Returned != 12 {
		t.Errorf("planetary-computer folded %d (want 3), returned %d+%d", res.Outcomes[1].Folded, res.Outcomes[0].Returned, res.Outcomes[1].Returned)
	}
}

func TestReadableCopyKeptOverRequesterPays(t *testing.T) {
	all := fedtest.EarthSearchItems()
	ls := fedtest.Find(all, "LC08_L2SP_033032_20231008_02_T1")
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: fedtest.EarthSearch(), items: []fedtest.Item{ls}},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: []fedtest.Item{fedtest.CopyInPlanetaryComputer(ls)}})
	res := c.page(t, stacclient.SearchParams{Collections: []string{"landsat-c2-l2"}}, 10, nil, nil)
	if len(res.Entries) != 1 {
		t.Fatalf("entries %v", ids(res.Entries))
	}
	e := res.Entries[0]
	if e.Member != 1 || len(e.AlsoIn) != 1 || e.AlsoIn[0].Member != 0 {
		t.Errorf("kept member %d, also in %+v; want Planetary Computer's readable copy, Earth Search's named", e.Member, e.AlsoIn)
	}
	if !strings.Contains(e.Kept, "requester-pays") || !strings.Contains(e.Kept, "planetary-computer") {
		t.Errorf("kept %q", e.Kept)
	}
}

// Pages of 5 over members paging differently (Earth Search: POST
// merge:false tokens, clamped to 3 items a page; Planetary Computer: POST
// body tokens): every scene once, in order, across pages.
func TestPagingAcrossMembersLosesAndRepeatsNothing(t *testing.T) {
	es, pc := julyScenes()
	esStyle := fedtest.EarthSearch()
	esStyle.Options.MaxLimit = 3
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: esStyle, items: es},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: pc})
	params := stacclient.SearchParams{Collections: []string{"sentinel-2-l2a"}}
	all := c.page(t, params, 100, nil, nil)
	want := ids(all.Entries)
	if all.HasMore || len(want) != len(es)+len(pc)-3 {
		t.Fatalf("one page of 100: %d entries (has more %v), want %d", len(want), all.HasMore, len(es)+len(pc)-3)
	}
	var got []string
	var starts []Start
	var tail []Record
	for page := 0; page < 20; page++ {
		res := c.page(t, params, 5, starts, tail)
		got = append(got, ids(res.Entries)...)
		if !res.HasMore {
			break
		}
		starts, tail = c.next(t, res), res.Tail
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged by 5:\n got %v\nwant %v", got, want)
	}
}

// A copy that sorts after the end of a page, behind another item of its
// catalog, is dropped on a later page by the tail records, not returned
// again.
func TestCopyAcrossThePageBoundaryIsNotRepeated(t *testing.T) {
	es := fedtest.InCollection(fedtest.EarthSearchItems(), "sentinel-2-l2a")
	uv := fedtest.Find(es, "S2B_24MUV_20250731_0_L2A")
	// Earth Search's copy is dated at the tile (13:03:27), Planetary
	// Computer's at the datatake's start (13:02:49); another Planetary
	// Computer scene dated between them comes first in its pages.
	between := fedtest.WithID(fedtest.CopyInPlanetaryComputer(fedtest.Find(es, "S2B_24MXV_20250731_0_L2A")),
		"S2B_MSIL2A_20250731T130249_R095_T24MXV_20250731T999999", time.Date(2025, 7, 31, 13, 3, 10, 0, time.UTC))
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: fedtest.EarthSearch(), items: []fedtest.Item{uv}},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: []fedtest.Item{between, fedtest.CopyInPlanetaryComputer(uv)}})
	params := stacclient.SearchParams{Collections: []string{"sentinel-2-l2a"}}
	var got []string
	var starts []Start
	var tail []Record
	earlier := 0
	for page := 0; page < 5; page++ {
		res := c.page(t, params, 1, starts, tail)
		got = append(got, ids(res.Entries)...)
		earlier += res.EarlierCopies
		if !res.HasMore {
			break
		}
		starts, tail = c.next(t, res), res.Tail
	}
	if !slices.Equal(got, []string{"S2B_24MUV_20250731_0_L2A", "S2B_MSIL2A_20250731T130249_R095_T24MXV_20250731T999999"}) {
		t.Errorf("pages of one: %v", got)
	}
	if earlier != 1 {
		t.Errorf("%d copies of earlier pages dropped, want 1", earlier)
	}
}

func TestMemberWithoutTheCollectionIsSkipped(t *testing.T) {
	all := fedtest.EarthSearchItems()
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: fedtest.EarthSearch(), items: all},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: fedtest.PlanetaryComputerItems()})
	res := c.page(t, stacclient.SearchParams{Collections: []string{"sentinel-2-l1c"}}, 10, nil, nil)
	if res.Outcomes[1].Status != Skipped || !strings.Contains(res.Outcomes[1].Why, "no collection sentinel-2-l1c") {
		t.Errorf("planetary-computer: %+v", res.Outcomes[1])
	}
	if res.Outcomes[0].Status != Answered || len(res.Entries) == 0 {
		t.Errorf("earth-search: %+v, %d entries", res.Outcomes[0], len(res.Entries))
	}
	for _, e := range res.Entries {
		if e.Item.Collection != "sentinel-2-l1c" {
			t.Errorf("%s of %s", e.Item.ID, e.Item.Collection)
		}
	}
	// Mapped across ids: sentinel-2-c1-l2a is searched as sentinel-2-l2a at
	// the Planetary Computer, and said so.
	res = c.page(t, stacclient.SearchParams{Collections: []string{"sentinel-2-c1-l2a"}}, 50, nil, nil)
	if res.Outcomes[1].Returned == 0 || !slices.ContainsFunc(res.Outcomes[1].Notes, func(n string) bool {
		return strings.Contains(n, "searched collection sentinel-2-l2a for sentinel-2-c1-l2a")
	}) {
		t.Errorf("planetary-computer: %+v", res.Outcomes[1])
	}
}

// A member that never answers is cut once the others have answered and
// nothing of its own justifies waiting: reported, the others' page kept.
func TestHungMemberIsReportedNotWaitedFor(t *testing.T) {
	es, pc := julyScenes()
	release := make(chan struct{})
	var hung atomic.Int32
	hang := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hung.Add(1)
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
	}
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: fedtest.EarthSearch(), items: es},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: pc, wrap: hang})
	defer close(release)
	res := c.page(t, stacclient.SearchParams{Collections: []string{"sentinel-2-l2a"}}, 10, nil, nil)
	if hung.Load() == 0 {
		t.Fatal("the hung catalog was never asked")
	}
	out := res.Outcomes[1]
	if out.Status != Timeout || out.Err == nil || !strings.Contains(out.Err.Error(), "did not answer within") {
		t.Errorf("planetary-computer: %+v (err %v)", out, out.Err)
	}
	if res.Outcomes[0].Status != Answered || len(res.Entries) != len(es) {
		t.Errorf("earth-search %+v, %d entries", res.Outcomes[0], len(res.Entries))
	}
	if res.Positions[1].State != Dropped {
		t.Errorf("the hung member's state %v, want dropped from the search", res.Positions[1].State)
	}
}

// A member that answered its first page but whose second fails ends the
// page where its items would resume; its place is kept.
func TestLaterPageFailureEndsThePageAndKeepsThePlace(t *testing.T) {
	es, pc := julyScenes()
	var searches atomic.Int32
	failSecond := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/search") && searches.Add(1) == 2 {
				http.Error(w, `{"code":"BadRequest","description":"synthetic"}`, http.StatusBadRequest)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	esStyle := fedtest.EarthSearch()
	esStyle.Options.MaxLimit = 2
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: esStyle, items: es, wrap: failSecond},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: pc})
	params := stacclient.SearchParams{Collections: []string{"sentinel-2-l2a"}}
	res := c.page(t, params, 10, nil, nil)
	if res.EndedEarly == "" || !res.Outcomes[0].Later || res.Positions[0].State != Active {
		t.Fatalf("ended early %q, outcome %+v, state %v", res.EndedEarly, res.Outcomes[0], res.Positions[0].State)
	}
	first := ids(res.Entries)
	// The next call retries the failed page and goes on; together the
	// pages hold every scene once.
	rest := c.page(t, params, 100, c.next(t, res), res.Tail)
	got := append(first, ids(rest.Entries)...)
	whole := newCatalogs(t, nil,
		served{name: "earth-search", style: fedtest.EarthSearch(), items: es},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: pc}).page(t, params, 100, nil, nil)
	if !slices.Equal(got, ids(whole.Entries)) {
		t.Errorf("after a failed page:\n got %v\nwant %v", got, ids(whole.Entries))
	}
}

// Two items of one catalog that look like one scene (Earth Search's L2A
// and C1-L2A of one tile, both asked for) stay two, on one page as across
// pages; the other catalog's copy is folded into the first.
func TestItemsOfOneCatalogStayDistinctAcrossPages(t *testing.T) {
	all := fedtest.EarthSearchItems()
	l2a := fedtest.Find(all, "S2B_24MUV_20250731_0_L2A")
	c1 := fedtest.Find(all, "S2B_T24MUV_20250731T130245_L2A")
	c := newCatalogs(t, nil,
		served{name: "earth-search", style: fedtest.EarthSearch(), items: []fedtest.Item{l2a, c1}},
		served{name: "planetary-computer", style: fedtest.PlanetaryComputer(), items: []fedtest.Item{fedtest.CopyInPlanetaryComputer(l2a)}})
	params := stacclient.SearchParams{Collections: []string{"sentinel-2-l2a", "sentinel-2-c1-l2a"}}
	for _, size := range []int{10, 1} {
		var got []string
		var starts []Start
		var tail []Record
		for page := 0; page < 6; page++ {
			res := c.page(t, params, size, starts, tail)
			got = append(got, ids(res.Entries)...)
			if !res.HasMore {
				break
			}
			starts, tail = c.next(t, res), res.Tail
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"S2B_24MUV_20250731_0_L2A", "S2B_T24MUV_20250731T130245_L2A"}) {
			t.Errorf("pages of %d: %v; want Earth Search's two items, Planetary Computer's copy folded", size, got)
		}
	}
}
