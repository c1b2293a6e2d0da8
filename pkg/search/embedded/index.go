package embedded

import (
	"bytes"
	"math"
	"slices"
	"unsafe"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// index is one of the two sorted lists of keys a query searches: names,
// the keys of whole names (main and alternate), which are the records;
// or words, the keys of later words of main names, which point into the
// records. Each has its own base ranks, gram tables and heavy prefixes,
// so that a query ranks within one index as it always has, and a city
// comes at most once from each (see find).
type index struct {
	s     *snapshot
	words bool
	n     int
	keys  []byte // words: wordKeySize bytes per key (see wordShape)
	shape wordShape
	grams grams
	heavy heavyPrefixes
}

// wordKey returns word key k as an integer: comparing two compares their
// ranks.
func (x *index) wordKey(k uint32) uint64 { return le64(x.keys, int(k)*wordKeySize) }

// wordRec returns the record of word key k's city and the offset of its
// word in the city's slug.
func (x *index) wordRec(k uint32) (rec, off uint32) {
	w := x.wordKey(k)
	return x.shape.rec(w), x.shape.off(w)
}

// slug returns the slug of key k; the bytes alias the snapshot.
func (x *index) slug(k uint32) []byte {
	if x.words {
		return x.wordSlug(k)
	}
	return x.s.slug(k)
}

// wordSlug returns the slug of word key k.
func (x *index) wordSlug(k uint32) []byte {
	rec, off := x.wordRec(k)
	return x.s.slug(rec)[off:]
}

func (x *index) slugLen(k uint32) int {
	if x.words {
		rec, off := x.wordRec(k)
		return x.s.slugLen(rec) - int(off)
	}
	return x.s.slugLen(k)
}

// order returns a number that orders key k among the others of x by its
// base rank: the rank for names, the whole key for words.
func (x *index) order(k uint32) uint64 {
	if x.words {
		return x.wordKey(k)
	}
	return uint64(x.s.rank(k))
}

// rank returns key k's rank in x's base order.
func (x *index) rank(k uint32) uint64 {
	if x.words {
		return x.wordKey(k) >> x.shape.rankShift()
	}
	return uint64(x.s.rank(k))
}

// city returns the record of key k's city.
func (x *index) city(k uint32) uint32 {
	if x.words {
		rec, _ := x.wordRec(k)
		return rec
	}
	return x.s.city(k)
}

// multi reports whether key k's city has other keys in x, so that a range
// may hold it twice.
func (x *index) multi(k uint32) bool {
	if x.words {
		return x.wordKey(k)&1 != 0
	}
	return x.s.rec(k).multi()
}

// pop returns the population of key k's city.
func (x *index) pop(k uint32) int64 {
	if x.words {
		rec, _ := x.wordRec(k)
		return x.s.pop(rec)
	}
	return x.s.pop(k) // an alternate name's record has its city's
}

// nameKey returns the parts of key k that search.CompareKeys looks at;
// Alt and Offset say only whether they are zero.
func (x *index) nameKey(k uint32) search.NameKey {
	key := search.NameKey{Slug: aliasString(x.slug(k))}
	switch {
	case x.words:
		key.Offset = 1
	case x.s.isAlt(k):
		key.Alt = 1
	}
	return key
}

// compare orders keys i and j of x, which both start with prefix, exactly
// as search.CompareFound orders the cities they find.
func (x *index) compare(prefix string, i, j uint32) int {
	if !x.words {
		// search.Weight and the rest of search.CompareKeys, written out
		// for the records: a key that starts with prefix is the whole
		// prefix when it is as long.
		s := x.s
		ri, rj := s.rec(i), s.rec(j)
		li, lj := int(ri.slugLen()), int(rj.slugLen())
		ai, aj := ri.isAlt(), rj.isAlt()
		wi := weight(int64(ri.pop()), ai, li == len(prefix))
		wj := weight(int64(rj.pop()), aj, lj == len(prefix))
		switch {
		case wi > wj:
			return -1
		case wi < wj:
			return 1
		case (li == len(prefix)) != (lj == len(prefix)):
			if li == len(prefix) {
				return -1
			}
			return 1
		case ai != aj:
			if aj {
				return -1
			}
			return 1
		case li != lj:
			return li - lj
		}
		if c := bytes.Compare(s.slug(i), s.slug(j)); c != 0 {
			return c
		}
		return s.compareCities(s.city(i), s.city(j))
	}
	if c := search.CompareKeys(prefix, x.nameKey(i), x.pop(i), prefix, x.nameKey(j), x.pop(j)); c != 0 {
		return c
	}
	return x.s.compareCities(x.city(i), x.city(j))
}

// weight is search.Weight for a key of a city of population pop: times
// search.ExactBoost when the key is the whole prefix, times
// search.AltDivisor when it is not an alternate name's.
func weight(pop int64, alt, whole bool) int64 {
	if whole {
		pop *= search.ExactBoost
	}
	if !alt {
		pop *= search.AltDivisor
	}
	return pop
}

// filter is what a query keeps of the cities in its range: those of its
// countries, regions and box, and of known population when populated (see
// search.Query.Accepts).
type filter struct {
	countries, regions []string
	box                *fixedBox
	populated          bool
}

// newFilter returns q's filter, nil when it keeps every city.
func newFilter(q *search.Query) *filter {
	if len(q.Countries) == 0 && len(q.Regions) == 0 && q.Box == nil && !q.Populated {
		return nil
	}
	f := &filter{countries: q.Countries, regions: q.Regions, populated: q.Populated}
	if q.Box != nil {
		f.box = newFixedBox(q.Box)
	}
	return f
}

// fixedBox is a search.Box in the records' fixed-point degrees (see
// fixedDegrees), edges included: a record's coordinates are compared as
// they are stored, without turning them into degrees. A biased Find
// filters every key of a heavy prefix's range by its box (see
// index.scan), and the two divisions of recordView.location were most of
// that.
type fixedBox struct {
	// The least latitude and longitude in the box, and how far the box
	// goes beyond them (see contains).
	minLat, minLon   int64
	latSpan, lonSpan int64
}

// newFixedBox returns the fixedBox that holds exactly the stored
// coordinates that b contains (see recordView.location and
// search.Box.Contains).
func newFixedBox(b *search.Box) *fixedBox {
	var fb fixedBox
	fb.minLat, fb.latSpan = fixedRange(b.MinLat, b.MaxLat)
	fb.minLon, fb.lonSpan = fixedRange(b.MinLon, b.MaxLon)
	return &fb
}

// fixedRange returns the least stored coordinate within [lo, hi] degrees
// and how far the others go beyond it; a range that holds none (lo and hi
// between two steps of the fixed point) starts beyond every int32.
func fixedRange(lo, hi float64) (min, span int64) {
	from, to := fixedAtLeast(lo), fixedAtMost(hi)
	if to < from {
		return math.MaxInt32 + 1, 0
	}
	return from, to - from
}

// fixedAtLeast returns the least stored coordinate l whose degrees,
// float64(l)/degreeScale as recordView.location reads them, are at
// least v (a finite number of degrees).
func fixedAtLeast(v float64) int64 {
	l := int64(math.Ceil(v * degreeScale))
	for float64(l-1)/degreeScale >= v {
		l--
	}
	for float64(l)/degreeScale < v {
		l++
	}
	return l
}

// fixedAtMost returns the greatest stored coordinate l whose degrees are
// at most v.
func fixedAtMost(v float64) int64 {
	l := int64(math.Floor(v * degreeScale))
	for float64(l+1)/degreeScale <= v {
		l++
	}
	for float64(l)/degreeScale > v {
		l--
	}
	return l
}

// contains reports whether record r (a city's) lies in b: a record
// without a location does not (noLocation is below every latitude). The
// four edges are tested at once, without a branch for each: a coordinate
// is out when how far it is past the low edge, or short of the high one,
// is negative, and the sign bit of any of the four is that of their OR.
// The cities of a prefix's range lie anywhere, in no order a branch
// could guess.
func (b *fixedBox) contains(r recordView) bool {
	lat := int64(int32(le32(r, rLat))) - b.minLat
	lon := int64(int32(le32(r, rLon))) - b.minLon
	return lat|(b.latSpan-lat)|lon|(b.lonSpan-lon) >= 0
}

// inBox reports whether key k's city lies in b.
func (x *index) inBox(k uint32, b *fixedBox) bool {
	if x.words {
		k, _ = x.wordRec(k)
	}
	r := x.s.rec(k)
	if r.isAlt() {
		r = x.s.rec(r.cityRec())
	}
	return b.contains(r)
}

// withoutBox returns f without its box, for a scan that tests the box on
// its own, and whether anything is left to test.
func (f *filter) withoutBox() (filter, bool) {
	rest := *f
	rest.box = nil
	return rest, len(rest.countries) > 0 || len(rest.regions) > 0 || rest.populated
}

// accepts reports whether filter f (nil: keep all) keeps key k's city.
func (x *index) accepts(k uint32, f *filter) bool {
	if f == nil {
		return true
	}
	if x.words {
		k, _ = x.wordRec(k)
	}
	r := x.s.rec(k) // an alternate name's record has its city's area and population
	if f.populated && r.pop() == 0 {
		return false
	}
	if len(f.countries) > 0 || len(f.regions) > 0 {
		a := &x.s.areas[r.area()]
		if len(f.countries) > 0 && !containsString(f.countries, a.code) {
			return false
		}
		if len(f.regions) > 0 && !containsString(f.regions, a.subSlug) && !containsString(f.regions, a.regionSlug) {
			return false
		}
	}
	if f.box == nil {
		return true
	}
	if r.isAlt() {
		r = x.s.rec(r.cityRec())
	}
	return f.box.contains(r)
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// find appends to dst (which must be empty with room for limit) the best
// limit keys of x for prefix, best first, one per city, keeping only the
// cities that f (nil for all) accepts.
func (x *index) find(prefix string, f *filter, limit int, dst []uint32) []uint32 {
	p := unsafe.Slice(unsafe.StringData(prefix), len(prefix))
	from, to, k := 0, x.n, 0
	if len(p) >= 3 {
		if from, to, k = x.grams.span(p); k == 0 {
			return dst // not a folded query: nothing can match
		}
	}
	// Only a prefix with more than scanLimit keys can have a list: the
	// range that shares its first three or four bytes says so, sparing
	// most prefixes a hash of the heavy ones.
	if to-from > x.s.scanLimit {
		if out, ok := x.listed(prefix, f, limit, dst); ok {
			return out
		}
	}
	var lo, hi int
	if k < len(p) && !x.words && x.s.trie != nil {
		lo, hi = x.descend(p)
	} else {
		lo, hi = x.within(p, from, to, k)
	}
	return x.scan(prefix, f, lo, hi, limit, dst)
}

// descend is within for the names, from the typo trie, whose keys they
// are: past the bytes the gram tables cover, a binary search reads a
// record and a slug per step, mostly cache misses, where the trie reads a
// word per byte of p, down to its deepest level, and the records at the
// end of the node's range (2–3× faster on the query sets of make bench).
// Below the trie the node's range is searched as within does.
func (x *index) descend(p []byte) (lo, hi int) {
	t := x.s.trie
	node, d := uint32(0), 0
	for ; d < len(p) && d < t.depth(); d++ {
		w := t.node(d, node)
		sym, ok := trigramSymbol(p[d])
		if !ok || w&(1<<sym) == 0 {
			return 0, 0 // no key has p[:d+1]
		}
		node = child(w, sym)
	}
	l, h := t.keysAt(d, node)
	for h > l && x.s.slugLen(h-1) < d { // shorter keys that follow the node's (see keysAt)
		h--
	}
	if d == len(p) {
		return int(l), int(h)
	}
	return x.within(p, int(l), int(h), d)
}

// findRange is find for a prefix whose range of keys, [lo, hi), the
// caller knows (the typo walk takes it from the trie): the same answer
// without the binary searches.
func (x *index) findRange(prefix string, f *filter, lo, hi uint32, limit int, dst []uint32) []uint32 {
	if int(hi-lo) > x.s.scanLimit { // a heavy prefix has more keys than that
		if out, ok := x.listed(prefix, f, limit, dst); ok {
			return out
		}
	}
	return x.scan(prefix, f, int(lo), int(hi), limit, dst)
}

// listed is find from prefix's precomputed list, when it is heavy and its
// list holds enough of the cities f accepts.
func (x *index) listed(prefix string, f *filter, limit int, dst []uint32) ([]uint32, bool) {
	if limit > x.s.listCap {
		return nil, false
	}
	e, ok := x.heavy.get(prefix)
	if !ok {
		return nil, false
	}
	var buf [search.MaxLimit]uint32
	others := buf[:0]
	whole := len(e.list)/4 < x.s.listCap // the list holds every city of the range
	for j := 0; j < len(e.list) && len(others) < limit; j += 4 {
		i := le32(e.list, j)
		if f != nil && f.populated && x.pop(i) == 0 {
			// The cities of known population rank before all others
			// (see rankKeys): the list holds every one of the range.
			whole = true
			break
		}
		if x.accepts(i, f) {
			others = append(others, i)
		}
	}
	// The list holds the best listCap cities: a filter may need more
	// than it has, and then the whole range is scanned.
	if len(others) == limit || whole {
		var multi [search.MaxLimit]bool
		x.multiOf(others, multi[:])
		return x.merge(prefix, f, e.exactLo, e.exactHi, others, multi[:len(others)], limit, dst), true
	}
	return nil, false
}

// bounds returns the range of keys whose slugs start with prefix.
func (x *index) bounds(prefix string) (lo, hi int) {
	p := unsafe.Slice(unsafe.StringData(prefix), len(prefix))
	from, to, k := 0, x.n, 0
	if len(p) >= 3 {
		if from, to, k = x.grams.span(p); k == 0 {
			return 0, 0 // not a folded query: nothing can match
		}
	}
	return x.within(p, from, to, k)
}

// within returns the range of keys whose slugs start with p, given the
// range [from, to) of those that share its first k bytes (see span).
func (x *index) within(p []byte, from, to, k int) (lo, hi int) {
	if k == len(p) && k > 0 && p[k-1] != 'z' {
		// The range of the prefix itself: only after a 'z' does the next
		// string start with a shorter one ("abd" after "abcz").
		return from, to
	}
	// Binary searches: the keys with the prefix are the first of [lo, to).
	lo = from
	for n := to - from; n > 0; {
		half := n / 2
		if bytes.Compare(x.slug(uint32(lo+half)), p) < 0 {
			lo, n = lo+half+1, n-half-1
		} else {
			n = half
		}
	}
	if lo == to || !bytes.HasPrefix(x.slug(uint32(lo)), p) {
		return lo, lo // the first key not before p does not start with it: none does
	}
	hi = lo + 1
	for n := to - hi; n > 0; {
		half := n / 2
		if bytes.HasPrefix(x.slug(uint32(hi+half)), p) {
			hi, n = hi+half+1, n-half-1
		} else {
			n = half
		}
	}
	return lo, hi
}

// scan ranks the keys of prefix's range [lo, hi) by looking at every one
// of them: it reads their base ranks, not their slugs.
func (x *index) scan(prefix string, f *filter, lo, hi, limit int, dst []uint32) []uint32 {
	// Whole-name matches come first in the range, already in rank order;
	// the others rank by their base rank alone.
	exactHi := lo
	for exactHi < hi && x.slugLen(uint32(exactHi)) == len(prefix) {
		exactHi++
	}
	// The best limit others by rank, one per city, kept sorted by
	// insertion with their ranks beside them: once limit are in, most
	// keys are turned away by one comparison with the worst.
	// Their multi flags are kept beside them too, for the merge.
	var top [search.MaxLimit]uint32
	var ranks [search.MaxLimit]uint64
	var multi [search.MaxLimit]bool
	n := 0
	// The box first, on its own: a biased Find's local search turns away
	// most keys of a heavy prefix's range by their location, and accepts
	// costs more than that test; accepts then tests the rest of f.
	var box *fixedBox
	rest, unboxed := f, filter{}
	if f != nil && f.box != nil {
		box, rest = f.box, nil
		var left bool
		if unboxed, left = f.withoutBox(); left {
			rest = &unboxed
		}
	}
	for i := uint32(exactHi); i < uint32(hi); i++ {
		r := x.order(i)
		if n == limit && r > ranks[n-1] {
			continue
		}
		if box != nil {
			// A main name's key is its city's record: its location is
			// tested in place, where a call per key (inBox's) costs as
			// much as the test.
			if x.words || x.s.isAlt(i) {
				if !x.inBox(i, box) {
					continue
				}
			} else if !box.contains(x.s.rec(i)) {
				continue
			}
		}
		if !x.accepts(i, rest) {
			continue
		}
		m := x.multi(i)
		if m { // its city may be in already, through a better key or a worse one
			if j := x.cityIndex(top[:n], multi[:n], x.city(i)); j >= 0 {
				if ranks[j] < r {
					continue
				}
				copy(top[j:n], top[j+1:n])
				copy(ranks[j:n], ranks[j+1:n])
				copy(multi[j:n], multi[j+1:n])
				n--
			}
		}
		if n == limit {
			n--
		}
		at := n
		for ; at > 0 && r < ranks[at-1]; at-- {
			top[at], ranks[at], multi[at] = top[at-1], ranks[at-1], multi[at-1]
		}
		top[at], ranks[at], multi[at] = i, r, m
		n++
	}
	return x.merge(prefix, f, uint32(lo), uint32(exactHi), top[:n], multi[:n], limit, dst)
}

// multiOf sets multi[i] to whether keys[i] is multi (see multi), in a loop
// of its own: the records of a heavy prefix's list are all over the
// snapshot, mostly in no cache yet, and reads issued together overlap,
// where those of merge's steps, each after a comparison, wait on the last.
func (x *index) multiOf(keys []uint32, multi []bool) {
	for i, k := range keys {
		multi[i] = x.multi(k)
	}
}

// cityIndex returns the position in keys of a key of city c, or -1;
// multi[j] says whether keys[j] is multi: only such a key's city may have
// another key.
func (x *index) cityIndex(keys []uint32, multi []bool, c uint32) int {
	for j, k := range keys {
		if multi[j] && x.city(k) == c {
			return j
		}
	}
	return -1
}

// merge appends to dst the best limit of the whole-name matches
// [exact, exactHi) that f accepts, which are in rank order, one per city,
// and others, the best other matches in rank order, one per city,
// comparing across the two with the exact boost; multi[i] says whether
// others[i] is multi (see multiOf). A city found both ways comes once,
// through the key that ranks first: usually its exact key, but not when
// that is an alternate name's and the other is its main name's
// (search.AltDivisor outweighs search.ExactBoost).
func (x *index) merge(prefix string, f *filter, exact, exactHi uint32, others []uint32, multi []bool, limit int, dst []uint32) []uint32 {
	// The cities of the multi keys taken: only those may come again.
	var cities [search.MaxLimit]uint32
	taken := cities[:0]
	for len(dst) < limit {
		for exact < exactHi && !x.accepts(exact, f) {
			exact++
		}
		if exact == exactHi && len(others) == 0 {
			break
		}
		var k uint32
		var m bool
		if len(others) == 0 || (exact < exactHi && x.compare(prefix, exact, others[0]) <= 0) {
			k, m = exact, x.multi(exact)
			exact++
		} else {
			k, m = others[0], multi[0]
			others, multi = others[1:], multi[1:]
		}
		if m {
			c := x.city(k)
			if slices.Contains(taken, c) {
				continue
			}
			taken = append(taken, c)
		}
		dst = append(dst, k)
	}
	return dst
}
