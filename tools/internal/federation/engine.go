package federation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stacmcp/stac-mcp/reliability"
	"github.com/stacmcp/stac-mcp/stacclient"
)

// Member is one catalog of a call.
type Member struct {
	Name   string // how results name it: a preset or configured name, "demo", or its URL
	Preset string // the preset it is (by name or by URL), "" for any other: the collection table's key
	Host   string
	Client *stacclient.Client
}

// Status is how a member's part of the call ended.
type Status string

const (
	Answered Status = "answered"
	Timeout  Status = "timeout"
	Failed   Status = "error"
	Skipped  Status = "skipped"
)

// State is where a member stands in a search that continues over calls.
type State byte

const (
	Active    State = iota // more items: Position says where
	Exhausted              // its results ended
	Dropped                // it failed or was skipped: left out from then on
)

// Prepared is what a member is sent, decided in its own branch of the
// fan-out (collection ids mapped, capabilities checked: requests that
// cost its time, not the others').
type Prepared struct {
	Params stacclient.SearchParams // as sent, with the page size
	// Skip, when set, is why the member is not searched (a collection it
	// lacks, nothing to continue).
	Skip  string
	Notes []string
	// Sorted says the member sorts by the merged order itself; without it
	// its items come in its own order (the merge takes each catalog's items
	// in the order it gives them, so that its place can be kept item by
	// item), and the result says so.
	Sorted bool
}

// Start is where a member begins in this call: from its first page, or
// at the place a cursor carried.
type Start struct {
	State  State
	Resume *Resume // Active: nil means its first page
	Why    string  // Dropped: what happened earlier
}

// Resume is a member's place as a cursor carries it: its request written
// against what it is sent (rebuilt once Prepare has said what that is),
// and how far into that request's page and the results it was.
type Resume struct {
	Diff   stacclient.RequestDiff
	Skip   int
	Offset int
}

// Options shape one call's merge.
type Options struct {
	Order    Order
	MaxItems int
	// MaxRounds bounds the page fetches a call makes per member; past it
	// the page ends early and the cursor continues.
	MaxRounds int
	Latency   Latency
	// ColdWait is how long a member whose catalog answered something but
	// no search yet may take (the layer's attempt timeout).
	ColdWait time.Duration
	// Keep, when set, is the client-side fallback: an item it refuses
	// contradicts the search (the member ignored a condition) and is
	// dropped and counted.
	Keep func(member int, it *stacclient.Item) bool
	// Tail are the earlier pages' last items (Records from a cursor):
	// copies of them are dropped.
	Tail []Record
	// Prepare decides a member's request, in its branch of the first round.
	Prepare func(ctx context.Context, member int) (Prepared, error)
}

// Copy is another catalog's copy of a returned item.
type Copy struct {
	Member     int
	ID         string
	Collection string
}

// Entry is one item of the merged result: the copy kept, and the others.
type Entry struct {
	Item     *stacclient.Item
	Member   int
	Identity Identity
	AlsoIn   []Copy
	// Kept says why this copy was kept over the others, when there are.
	Kept string
	// Evidence is why the copies are one acquisition (Match's words).
	Evidence string
	// taken are the members (bits) whose copy was taken from its stream;
	// a copy seen in a buffer is taken on a later page (by the tail).
	taken uint32
}

// Outcome is a member's part of the call.
type Outcome struct {
	Status   Status
	Elapsed  time.Duration
	Err      error  // Failed, Timeout
	Why      string // Skipped, or what cut it short
	Matched  *int
	Returned int // its copies kept in the result
	Fetched  int // items its pages held
	Folded   int // its items folded into another catalog's copy
	Dropped  int // its items the fallback removed (Keep)
	Notes    []string
	Method   string
	Sorted   bool
	// Later is set when it failed on a later page of this call: the page
	// ended where its items would resume, and its position is kept.
	Later bool
}

// Position is a member's place after the call, for a cursor.
type Position struct {
	State    State
	Position *stacclient.Position
	Params   stacclient.SearchParams // what its position is relative to
}

// Result is one merged page.
type Result struct {
	Entries   []*Entry
	Outcomes  []Outcome
	Positions []Position
	// Tail are the records the next page needs.
	Tail    []Record
	HasMore bool
	// EndedEarly says why fewer than MaxItems were returned though more
	// may match ("" when the page is whole or the results ended).
	EndedEarly string
	// EarlierCopies counts items dropped as copies of items an earlier
	// page returned.
	EarlierCopies int
}

// stream is a member's search in this call.
type stream struct {
	i        int
	m        Member
	prep     Prepared
	state    State
	pos      *stacclient.Position // where the next fetch starts (nil before the first)
	page     *stacclient.Page     // the page being merged
	head     int                  // its next item
	fetched  bool                 // a page came in this call
	blocked  bool                 // a later page failed: the merge stops here
	prepared bool                 // Prepare ran
	resume   *Resume              // the cursor's place, rebuilt once prepared
	out      Outcome
}

func (s *stream) buffered() bool { return s.page != nil && s.head < len(s.page.Items) }

// needsPage reports whether the stream must fetch before the merge can
// go on: nothing buffered and more to come.
func (s *stream) needsPage() bool {
	return s.state == Active && !s.blocked && !s.buffered()
}

// Run searches members and merges one page. starts says where each member
// begins (all at their first page for a new search).
func Run(ctx context.Context, members []Member, starts []Start, opts Options) *Result {
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = 10
	}
	streams := make([]*stream, len(members))
	for i, m := range members {
		s := &stream{i: i, m: m, state: Active}
		if i < len(starts) {
			s.state, s.resume = starts[i].State, starts[i].Resume
			switch s.state {
			case Exhausted:
				s.out = Outcome{Status: Skipped, Why: "its results ended on an earlier page"}
			case Dropped:
				s.out = Outcome{Status: Skipped, Why: starts[i].Why}
			}
		}
		streams[i] = s
	}
	f := &merger{opts: opts, streams: streams, res: &Result{}}
	f.run(ctx)
	return f.res
}

type merger struct {
	opts    Options
	streams []*stream
	res     *Result
	rounds  int
}

func (f *merger) run(ctx context.Context) {
	full := func() bool { return f.opts.MaxItems > 0 && len(f.res.Entries) >= f.opts.MaxItems }
	for !full() {
		var need []*stream
		for _, s := range f.streams {
			if s.state == Active && s.page != nil && !s.buffered() {
				// Its page is used up: the next starts after it.
				s.pos, s.page = s.page.PositionBefore(len(s.page.Items)), nil
				if s.pos == nil {
					s.state = Exhausted
				}
			}
			if s.needsPage() {
				need = append(need, s)
			}
		}
		if len(need) > 0 {
			if f.rounds >= f.opts.MaxRounds {
				f.res.EndedEarly = fmt.Sprintf("the merge stopped after %d rounds of page fetches in this call", f.rounds)
				break
			}
			f.round(ctx, need)
			if ctx.Err() != nil {
				break
			}
		}
		if b := f.blockedStream(); b != nil {
			f.res.EndedEarly = fmt.Sprintf("%s's next page failed, so this page ends where its items would resume", b.m.Name)
			break
		}
		s := f.best()
		if s == nil {
			break // every member's results ended (or failed)
		}
		f.take(s)
	}
	if full() {
		f.foldFollowingCopies()
	}
	f.scanBufferedCopies()
	f.finish()
}

// blockedStream is a member whose later page failed.
func (f *merger) blockedStream() *stream {
	for _, s := range f.streams {
		if s.blocked {
			return s
		}
	}
	return nil
}

// best is the stream whose next item comes first in the merged order;
// ties go to the catalog listed first.
func (f *merger) best() *stream {
	var best *stream
	for _, s := range f.streams {
		if !s.buffered() {
			continue
		}
		if best == nil || f.opts.Order.Compare(&s.page.Items[s.head], &best.page.Items[best.head]) < 0 {
			best = s
		}
	}
	return best
}

// take moves s's next item into the result: dropped by the fallback,
// dropped as a copy of an earlier page's item, folded into a copy
// already returned, or appended.
func (f *merger) take(s *stream) {
	it := &s.page.Items[s.head]
	s.head++
	if f.opts.Keep != nil && !f.opts.Keep(s.i, it) {
		s.out.Dropped++
		return
	}
	id := Identify(FamilyID(s.m.Preset, it.Collection), it)
	// A record matches a copy in another catalog than those whose copy
	// was taken before: two items of one catalog stay two, across pages
	// as within one.
	if slices.ContainsFunc(f.opts.Tail, func(r Record) bool { return r.Members&(1<<s.i) == 0 && id.MatchesRecord(r) }) {
		f.res.EarlierCopies++
		s.out.Folded++
		return
	}
	if e := f.copyOf(s.i, id); e != nil {
		f.fold(e, s, it, id, true)
		return
	}
	f.res.Entries = append(f.res.Entries, &Entry{Item: it, Member: s.i, Identity: id, taken: 1 << s.i})
}

// copyOf is the returned entry id is another catalog's copy of, if any: an
// entry with no copy from member yet (two items of one catalog are two
// items, whatever they look like).
func (f *merger) copyOf(member int, id Identity) *Entry {
	for _, e := range f.res.Entries {
		if e.Member == member || slices.ContainsFunc(e.AlsoIn, func(c Copy) bool { return c.Member == member }) {
			continue
		}
		if ok, why := Match(e.Identity, id); ok {
			if e.Evidence == "" {
				e.Evidence = why
			}
			return e
		}
	}
	return nil
}

// fold makes it (from s) a copy of e, keeping the more useful of the two.
func (f *merger) fold(e *Entry, s *stream, it *stacclient.Item, id Identity, taken bool) {
	s.out.Folded++
	if taken {
		e.taken |= 1 << s.i
	}
	kept, other := AccessOf(e.Item), AccessOf(it)
	swap := false
	switch c := Prefer(other, kept); {
	case c > 0:
		swap = true
	case c == 0:
		swap = s.i < e.Member // equally useful: the catalog listed first
	}
	if swap {
		f.streams[e.Member].out.Folded++
		s.out.Folded--
		e.AlsoIn = append(e.AlsoIn, Copy{Member: e.Member, ID: e.Item.ID, Collection: e.Item.Collection})
		e.Item, e.Member, e.Identity = it, s.i, id
		kept, other = other, kept
	} else {
		e.AlsoIn = append(e.AlsoIn, Copy{Member: s.i, ID: it.ID, Collection: it.Collection})
	}
	e.Kept = keptWhy(f.streams, e, kept, other)
}

// keptWhy words why e's copy was kept.
func keptWhy(streams []*stream, e *Entry, kept, other Access) string {
	name := streams[e.Member].m.Name
	switch {
	case Prefer(kept, other) > 0:
		return fmt.Sprintf("kept %s's copy: its data assets can be read here, the other copy's cannot (%s)", name, other.Why)
	case kept.Readable > 0:
		return fmt.Sprintf("kept %s's copy (catalog listed first); the copies' data can be read here alike", name)
	}
	return fmt.Sprintf("kept %s's copy (catalog listed first); no copy's data assets can be read here (%s)", name, kept.Why)
}

// foldFollowingCopies takes, once the page is full, the next items that
// are copies of returned ones, so that a copy sorting just after the
// page's end is not left for the next page.
func (f *merger) foldFollowingCopies() {
	for {
		s := f.best()
		if s == nil {
			return
		}
		it := &s.page.Items[s.head]
		id := Identify(FamilyID(s.m.Preset, it.Collection), it)
		e := f.copyOf(s.i, id)
		if e == nil {
			return
		}
		s.head++
		if f.opts.Keep != nil && !f.opts.Keep(s.i, it) {
			s.out.Dropped++
			continue
		}
		f.fold(e, s, it, id, true)
	}
}

// scanBufferedCopies looks through the items fetched but not taken for
// copies of returned items: they join also_in now (and may be the copy
// kept), and the next page drops them by the tail records.
func (f *merger) scanBufferedCopies() {
	for _, s := range f.streams {
		if !s.buffered() {
			continue
		}
		for j := s.head; j < len(s.page.Items); j++ {
			it := &s.page.Items[j]
			if f.opts.Keep != nil && !f.opts.Keep(s.i, it) {
				continue
			}
			id := Identify(FamilyID(s.m.Preset, it.Collection), it)
			if e := f.copyOf(s.i, id); e != nil {
				f.fold(e, s, it, id, false)
				s.out.Folded-- // counted when the next page drops it
				if f.streams[e.Member] == s {
					s.out.Folded++
				}
			}
		}
	}
}

// finish fills outcomes, positions and the tail records.
func (f *merger) finish() {
	for _, e := range f.res.Entries {
		f.streams[e.Member].out.Returned++
	}
	for _, s := range f.streams {
		pos := Position{State: s.state, Params: s.prep.Params}
		switch {
		case s.state != Active:
		case s.blocked:
			pos.Position = s.pos
		case s.page != nil:
			pos.Position = s.page.PositionBefore(s.head)
			if pos.Position == nil {
				pos.State = Exhausted
			}
		default:
			pos.Position = s.pos
		}
		if pos.State == Active && pos.Position != nil {
			f.res.HasMore = true
		}
		f.res.Positions = append(f.res.Positions, pos)
		if s.out.Status == "" {
			s.out.Status = Answered
		}
		s.out.Sorted = s.prep.Sorted
		f.res.Outcomes = append(f.res.Outcomes, s.out)
	}
	f.res.Tail = f.tail()
}

// MaxTail bounds the records a cursor carries.
const MaxTail = 12

// tail are the records the next page needs to drop copies of items
// returned so far: the earlier pages' records and this page's, the newest
// MaxTail of them; under a datetime order only those dated within
// S2Tolerance of the page's last item (a copy of an older one would have
// sorted before it and been met already), plus those with a copy seen in a
// member's buffer (it comes next in that member's order).
func (f *merger) tail() []Record {
	if !f.res.HasMore {
		return nil
	}
	type cand struct {
		r      Record
		copied bool
	}
	var cands []cand
	for _, r := range f.opts.Tail {
		cands = append(cands, cand{r: r})
	}
	for _, e := range f.res.Entries {
		r := e.Identity.Record()
		r.Members = e.taken
		cands = append(cands, cand{r: r, copied: len(e.AlsoIn) > 0})
	}
	var lastUnix int64
	lastOK := false
	if n := len(f.res.Entries); n > 0 {
		if t, ok := f.res.Entries[n-1].Item.Datetime(); ok {
			lastUnix, lastOK = t.Unix(), true
		}
	} else if n := len(f.opts.Tail); n > 0 {
		lastUnix, lastOK = f.opts.Tail[n-1].Unix, f.opts.Tail[n-1].Unix != 0
	}
	var out []Record
	seen := map[Record]bool{}
	for i := len(cands) - 1; i >= 0 && len(out) < MaxTail; i-- {
		c := cands[i]
		if seen[c.r] {
			continue
		}
		if f.opts.Order.ByDatetime() && lastOK && !c.copied && absDur(time.Duration(c.r.Unix-lastUnix)*time.Second) > S2Tolerance {
			continue
		}
		seen[c.r] = true
		out = append(out, c.r)
	}
	slices.Reverse(out)
	return out
}

var errSkipped = errors.New("skipped")

// fetched is one member's page in a round.
type fetched struct {
	s     *stream
	page  *stacclient.Page
	stop  stacclient.StopReason
	err   error
	start time.Time
	end   time.Time
	took  time.Duration // the page's own fetch, preparation aside
}

// round fetches the next page of each stream in need, side by side
// (FanOut: a straggler is waited for only while its own latency justifies
// it).
func (f *merger) round(ctx context.Context, need []*stream) {
	f.rounds++
	results := make([]fetched, len(need))
	hosts := make([]string, len(need))
	for i, s := range need {
		hosts[i] = s.m.Host
	}
	branches := FanOut(ctx, hosts, f.opts.Latency, f.opts.ColdWait, func(ctx context.Context, i int) error {
		results[i] = f.fetch(ctx, need[i], time.Now())
		if results[i].err == nil && need[i].prep.Skip != "" {
			return errSkipped // not an answer: it does not make the others stragglers
		}
		return results[i].err
	})
	for i, r := range results {
		r.start, r.end = branches[i].Start, branches[i].End
		if o, ok := f.opts.Latency.(observer); ok && r.err == nil && r.page != nil && !branches[i].Cut {
			o.Observe(need[i].m.Host, r.took)
		}
		f.settle(r, branches[i].Cut)
	}
}

// fetch prepares the member on its first round (and rebuilds the request
// a cursor carried against what it is sent), then fetches one page.
func (f *merger) fetch(ctx context.Context, s *stream, start time.Time) fetched {
	r := fetched{s: s, start: start}
	if !s.prepared {
		s.prepared = true
		if f.opts.Prepare != nil {
			prep, err := f.opts.Prepare(ctx, s.i)
			s.prep = prep
			if err != nil || prep.Skip != "" {
				r.err, r.end = err, time.Now()
				return r
			}
		}
		if s.resume != nil {
			req, err := s.m.Client.ApplyDiff(ctx, s.prep.Params, s.resume.Diff)
			if err != nil {
				r.err, r.end = fmt.Errorf("its place in the cursor cannot be continued: %w", err), time.Now()
				return r
			}
			s.pos = &stacclient.Position{Request: req, Skip: s.resume.Skip, Offset: s.resume.Offset}
		}
	}
	lim := stacclient.SearchLimits{MaxPages: 1}
	fetchStart := time.Now()
	var search *stacclient.Search
	if s.pos == nil {
		search = s.m.Client.Search(s.prep.Params, lim)
	} else {
		search = s.m.Client.ContinueSearch(*s.pos, lim)
	}
	for page, err := range search.Pages(ctx) {
		r.page, r.err = page, err
		break
	}
	if m := search.Method(); m != "" && s.out.Method == "" {
		s.out.Method = m
	}
	r.stop = search.StopReason()
	r.end = time.Now()
	r.took = r.end.Sub(fetchStart)
	return r
}

// settle applies a fetched page (or its failure) to its stream; it
// reports whether the member answered.
func (f *merger) settle(r fetched, cut bool) bool {
	s := r.s
	s.out.Elapsed += r.end.Sub(r.start)
	s.out.Notes = append(s.out.Notes, s.prep.Notes...)
	s.prep.Notes = nil
	if s.prep.Skip != "" && r.page == nil && r.err == nil {
		s.state = Dropped
		s.out.Status, s.out.Why = Skipped, s.prep.Skip
		return false
	}
	if r.err != nil || cut {
		err := r.err
		status := Failed
		if cut || errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			status = Timeout
		}
		if cut {
			err = fmt.Errorf("did not answer within %s, when the other catalogs had answered and its own answer times no longer justified waiting", roundMS(r.end.Sub(r.start)))
		}
		s.out.Err = err
		if s.fetched {
			// It contributed pages in this call: stop the merge where its
			// items would resume and keep its place for the next page.
			s.blocked, s.out.Later = true, true
			if s.out.Status == "" || s.out.Status == Answered {
				s.out.Status = status
			}
			return false
		}
		s.state = Dropped
		s.out.Status = status
		return false
	}
	if r.page == nil {
		// No page: the results ended (an empty page, or a replay that
		// found nothing past the position).
		s.state, s.page = Exhausted, nil
		s.out.Status = Answered
		return true
	}
	s.fetched = true
	s.out.Status = Answered
	page := r.page
	if page.Matched != nil {
		s.out.Matched = page.Matched
	}
	s.out.Fetched += len(page.Items)
	if page.NextRefused != "" {
		s.out.Notes = append(s.out.Notes, page.NextRefused)
	}
	s.page, s.head = page, 0
	s.pos = page.PositionBefore(0)
	if s.pos == nil || r.stop == stacclient.StopEmptyPage {
		s.state, s.page = Exhausted, nil // an empty last page
	}
	return true
}

func isTimeout(err error) bool {
	var d *reliability.Denial
	return errors.As(err, &d) && (d.Code == reliability.CodeTimeout || d.Code == reliability.CodeDeadline)
}

func roundMS(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}
