package places

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// ref names one place of the data: its kind and its index in that kind's
// table.
type ref struct {
	kind  Kind
	index int32
}

// index is the gazetteer loaded for lookups: every name of every place in
// fold form, sorted (exact and prefix lookups by binary search), and a
// trigram index over the distinct names (misspellings).
type index struct {
	data *Data
	keys []string // folded names, sorted; a name of several places repeats
	refs []ref    // refs[i] is the place keys[i] names
	// countryKeys finds a country by a qualifier: folded names, ISO codes.
	countryKeys map[string][]int
	// distinct names for misspellings (distinctFrom[i] is the first
	// position in keys of the i-th distinct name): the trigram index maps
	// a hashed trigram to the distinct-name ids holding it (CSR layout).
	distinctFrom []int32
	triStart     []uint32
	triIDs       []uint32
}

var (
	loadOnce sync.Once
	loaded   *index
	loadErr  error
)

// load decodes the embedded data and builds the index, once, on first use.
func load() (*index, error) {
	loadOnce.Do(func() {
		raw, err := placesData()
		if err != nil {
			loadErr = err
			return
		}
		d, err := Decode(raw)
		if err != nil {
			loadErr = err
			return
		}
		loaded = newIndex(d)
	})
	return loaded, loadErr
}

func newIndex(d *Data) *index {
	ix := &index{data: d, countryKeys: map[string][]int{}}
	type entry struct {
		key string
		ref ref
	}
	var entries []entry
	add := func(r ref, names ...string) {
		for _, n := range names {
			if k := Fold(n); k != "" {
				entries = append(entries, entry{k, r})
			}
		}
	}
	for i, c := range d.Countries {
		r := ref{KindCountry, int32(i)}
		add(r, c.Name)
		add(r, c.Alt...)
		for _, k := range append([]string{c.Name, c.ISO2, c.ISO3}, c.Alt...) {
			if f := Fold(k); f != "" && !containsInt(ix.countryKeys[f], i) {
				ix.countryKeys[f] = append(ix.countryKeys[f], i)
			}
		}
	}
	for i, g := range d.Regions {
		r := ref{KindRegion, int32(i)}
		add(r, g.Name)
		add(r, g.Alt...)
	}
	for i, c := range d.Cities {
		r := ref{KindCity, int32(i)}
		add(r, c.Name)
		add(r, c.Alt...)
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].key != entries[j].key {
			return entries[i].key < entries[j].key
		}
		if entries[i].ref.kind != entries[j].ref.kind {
			return entries[i].ref.kind < entries[j].ref.kind
		}
		return entries[i].ref.index < entries[j].ref.index
	})
	ix.keys = make([]string, len(entries))
	ix.refs = make([]ref, len(entries))
	for i, e := range entries {
		ix.keys[i], ix.refs[i] = e.key, e.ref
		if i == 0 || e.key != entries[i-1].key {
			ix.distinctFrom = append(ix.distinctFrom, int32(i))
		}
	}
	ix.buildTrigrams()
	return ix
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// exact returns the places whose folded name is key.
func (ix *index) exact(key string) []ref {
	i := sort.SearchStrings(ix.keys, key)
	var out []ref
	for ; i < len(ix.keys) && ix.keys[i] == key; i++ {
		out = appendRef(out, ix.refs[i])
	}
	return out
}

func appendRef(list []ref, r ref) []ref {
	for _, x := range list {
		if x == r {
			return list
		}
	}
	return append(list, r)
}

// distinct is the i-th distinct folded name.
func (ix *index) distinct(i int) string { return ix.keys[ix.distinctFrom[i]] }

// refsOfDistinct returns the places named by distinct name d.
func (ix *index) refsOfDistinct(d int) []ref {
	return ix.exact(ix.distinct(d))
}

// trigramBuckets is the number of hash buckets of the trigram index: a
// collision only adds candidates, which the edit distance then sorts out.
const trigramBuckets = 1 << 17

func trigramHash(a, b, c rune) uint32 {
	h := uint32(2166136261)
	for _, r := range [3]rune{a, b, c} {
		h ^= uint32(r)
		h *= 16777619
	}
	return h % trigramBuckets
}

// trigrams calls f with the hashed trigrams of " key " (padded, so that a
// name's first and last letters count).
func trigrams(key string, f func(uint32)) {
	var rs [3]rune
	n := 0
	push := func(r rune) {
		rs[0], rs[1], rs[2] = rs[1], rs[2], r
		n++
		if n >= 3 {
			f(trigramHash(rs[0], rs[1], rs[2]))
		}
	}
	push(' ')
	for _, r := range key {
		push(r)
	}
	push(' ')
}

func (ix *index) buildTrigrams() {
	counts := make([]uint32, trigramBuckets+1)
	for i := range ix.distinctFrom {
		trigrams(ix.distinct(i), func(h uint32) { counts[h+1]++ })
	}
	for i := 1; i <= trigramBuckets; i++ {
		counts[i] += counts[i-1]
	}
	ix.triStart = counts
	ix.triIDs = make([]uint32, counts[trigramBuckets])
	fill := make([]uint32, trigramBuckets)
	copy(fill, counts[:trigramBuckets])
	for id := range ix.distinctFrom {
		trigrams(ix.distinct(id), func(h uint32) {
			ix.triIDs[fill[h]] = uint32(id)
			fill[h]++
		})
	}
}

// near returns the distinct names within maxDist edits of key, closest
// first, and when there are none, up to `suggest` of the closest names
// beyond (for "did you mean").
func (ix *index) near(key string, maxDist, suggest int) (within []scored, closest []scored) {
	var hashes []uint32
	trigrams(key, func(h uint32) { hashes = append(hashes, h) })
	t, _ := tallyPool.Get().(*tally)
	if t == nil || len(t.counts) != len(ix.distinctFrom) {
		t = &tally{counts: make([]uint16, len(ix.distinctFrom))}
	}
	defer func() {
		for _, id := range t.touched {
			t.counts[id] = 0
		}
		t.touched = t.touched[:0]
		tallyPool.Put(t)
	}()
	counts := t.counts
	for _, h := range hashes {
		for _, id := range ix.triIDs[ix.triStart[h]:ix.triStart[h+1]] {
			if counts[id] == 0 {
				t.touched = append(t.touched, id)
			}
			counts[id]++
		}
	}
	// A name within d edits of key shares at least len(hashes) - 3d of
	// its trigrams (each edit breaks at most three).
	need := len(hashes) - 3*maxDist
	qlen := utf8.RuneCountInString(key)
	var cands []scored
	for _, id := range t.touched {
		// Only names sharing enough trigrams to matter are ranked.
		if n := int(counts[id]); n >= need || n >= len(hashes)/2 {
			cands = append(cands, scored{id: int(id), shared: n})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].shared != cands[j].shared {
			return cands[i].shared > cands[j].shared
		}
		return cands[i].id < cands[j].id
	})
	for i := range cands {
		c := &cands[i]
		name := ix.distinct(c.id)
		if c.shared >= need && abs(utf8.RuneCountInString(name)-qlen) <= maxDist {
			c.dist = editDistance(key, name, maxDist)
			if c.dist <= maxDist {
				within = append(within, *c)
			}
		}
	}
	sort.SliceStable(within, func(i, j int) bool { return within[i].dist < within[j].dist })
	if len(within) > 0 || suggest == 0 {
		return within, nil
	}
	// No name is close enough: the names sharing the most trigrams,
	// ranked by their edit distance.
	top := cands[:min(len(cands), 40)]
	for i := range top {
		top[i].dist = editDistance(key, ix.distinct(top[i].id), 1<<30)
	}
	sort.SliceStable(top, func(i, j int) bool { return top[i].dist < top[j].dist })
	return nil, top[:min(len(top), suggest)]
}

// tally counts, for one lookup, the trigrams each distinct name shares
// with the query; reused across lookups (clearing only what was touched).
type tally struct {
	counts  []uint16
	touched []uint32
}

var tallyPool sync.Pool

type scored struct {
	id, shared, dist int
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and swaps of neighbours each count
// one), in runes; it stops early past limit and returns limit+1.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if abs(len(ra)-len(rb)) > limit {
		return limit + 1
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// prefix returns up to n names starting with the folded prefix, as
// written, the most important places first.
func (ix *index) prefix(p string, n int, rank func(ref, string) float64) []string {
	lo := sort.SearchStrings(ix.keys, p)
	type hit struct {
		name string
		rank float64
	}
	var hits []hit
	seen := map[ref]bool{}
	for i := lo; i < len(ix.keys) && strings.HasPrefix(ix.keys[i], p); i++ {
		r := ix.refs[i]
		if seen[r] {
			continue
		}
		seen[r] = true
		name := ix.matchedName(r, ix.keys[i])
		hits = append(hits, hit{name, rank(r, name)})
		if len(hits) > 5000 {
			break // a one-letter prefix: enough to rank from
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].rank > hits[j].rank })
	var out []string
	names := map[string]bool{}
	for _, h := range hits {
		if len(out) == n {
			break
		}
		if !names[h.name] {
			names[h.name] = true
			out = append(out, h.name)
		}
	}
	return out
}
