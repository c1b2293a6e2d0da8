package embedded

import (
	"bytes"
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
	heavy map[string]heavyEntry // keys alias the blob
}

// wordKey returns word key k as an integer: comparing two compares their
// ranks.
func (x *index) wordKey(k uint32) uint64 { return le64(x.keys, int(k)*wordKeySize) }

// wordRec returns the record of word key k's city and the offset of its
// word in the city's slug.
func (x *index) wordRec(k uint32) (rec, off uint32) {
	w := x.wordKey(k)
	return uint32(w >> x.shape.recShift() & (1<<x.shape.recBits - 1)), uint32(w >> x.shape.offShift() & (1<<x.shape.offBits - 1))
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
	return le32(x.s.rec(k), rRank)&flagMulti != 0
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
		li, lj := int(le16(ri, rSlugLen)), int(le16(rj, rSlugLen))
		ai, aj := le32(ri, rRank)&flagAlt != 0, le32(rj, rRank)&flagAlt != 0
		wi := weight(int64(le32(ri, rPop)), ai, li == len(prefix))
		wj := weight(int64(le32(rj, rPop)), aj, lj == len(prefix))
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
// countries, regions and box (see search.Query.Accepts).
type filter struct {
	countries, regions []string
	box                *search.Box
}

// newFilter returns q's filter, nil when it keeps every city.
func newFilter(q *search.Query) *filter {
	if len(q.Countries) == 0 && len(q.Regions) == 0 && q.Box == nil {
		return nil
	}
	return &filter{countries: q.Countries, regions: q.Regions, box: q.Box}
}

// accepts reports whether filter f (nil: keep all) keeps key k's city.
func (x *index) accepts(k uint32, f *filter) bool {
	if f == nil {
		return true
	}
	if x.words {
		k, _ = x.wordRec(k)
	}
	r := x.s.rec(k) // an alternate name's record has its city's area
	a := &x.s.areas[le32(r, rArea)]
	if len(f.countries) > 0 && !containsString(f.countries, a.code) {
		return false
	}
	if len(f.regions) > 0 && !containsString(f.regions, a.subSlug) && !containsString(f.regions, a.regionSlug) {
		return false
	}
	if f.box != nil {
		if le32(r, rRank)&flagAlt != 0 {
			r = x.s.rec(le32(r, rID))
		}
		lat := int32(le32(r, rLat))
		if lat == noLocation || !f.box.Contains(float64(lat)/degreeScale, float64(int32(le32(r, rLon)))/degreeScale) {
			return false
		}
	}
	return true
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
	if limit <= x.s.listCap && to-from > x.s.scanLimit {
		if e, ok := x.heavy[prefix]; ok {
			var buf [search.MaxLimit]uint32
			others := buf[:0]
			for j := 0; j < len(e.list) && len(others) < limit; j += 4 {
				if i := le32(e.list, j); x.accepts(i, f) {
					others = append(others, i)
				}
			}
			// The list holds the best listCap cities: a filter may need
			// more than it has, and then the whole range is scanned.
			if len(others) == limit || len(e.list)/4 < x.s.listCap {
				return x.merge(prefix, f, e.exactLo, e.exactHi, others, limit, dst)
			}
		}
	}
	lo, hi := x.within(p, from, to, k)
	return x.scan(prefix, f, lo, hi, limit, dst)
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
	hi = lo
	for n := to - lo; n > 0; {
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
	var top [search.MaxLimit]uint32
	var ranks [search.MaxLimit]uint64
	n := 0
	for i := uint32(exactHi); i < uint32(hi); i++ {
		r := x.order(i)
		if n == limit && r > ranks[n-1] {
			continue
		}
		if !x.accepts(i, f) {
			continue
		}
		if x.multi(i) { // its city may be in already, through a better key or a worse one
			if j := x.cityIndex(top[:n], x.city(i)); j >= 0 {
				if ranks[j] < r {
					continue
				}
				copy(top[j:n], top[j+1:n])
				copy(ranks[j:n], ranks[j+1:n])
				n--
			}
		}
		if n == limit {
			n--
		}
		at := n
		for ; at > 0 && r < ranks[at-1]; at-- {
			top[at], ranks[at] = top[at-1], ranks[at-1]
		}
		top[at], ranks[at] = i, r
		n++
	}
	return x.merge(prefix, f, uint32(lo), uint32(exactHi), top[:n], limit, dst)
}

// cityIndex returns the position in keys of a key of city c, or -1.
func (x *index) cityIndex(keys []uint32, c uint32) int {
	for j, k := range keys {
		if x.multi(k) && x.city(k) == c {
			return j
		}
	}
	return -1
}

// merge appends to dst the best limit of the whole-name matches
// [exact, exactHi) that f accepts, which are in rank order, one per city,
// and others, the best other matches in rank order, one per city,
// comparing across the two with the exact boost. A city found both ways
// comes once, through the key that ranks first: usually its exact key, but
// not when that is an alternate name's and the other is its main name's
// (search.AltDivisor outweighs search.ExactBoost).
func (x *index) merge(prefix string, f *filter, exact, exactHi uint32, others []uint32, limit int, dst []uint32) []uint32 {
	start := len(dst)
	for len(dst) < limit {
		for exact < exactHi && !x.accepts(exact, f) {
			exact++
		}
		if exact == exactHi && len(others) == 0 {
			break
		}
		var k uint32
		if len(others) == 0 || (exact < exactHi && x.compare(prefix, exact, others[0]) <= 0) {
			k = exact
			exact++
		} else {
			k = others[0]
			others = others[1:]
		}
		if x.multi(k) && x.cityIndex(dst[start:], x.city(k)) >= 0 {
			continue
		}
		dst = append(dst, k)
	}
	return dst
}

// grams locates the keys of an index that start with a 3- or 4-byte
// string: a binary search then looks at a short range only.
type grams struct {
	// starts3[code(t)] is the first key whose slug is not less than the
	// 3-byte string t, in code order (see gramCode), then the key count:
	// the keys that start with t are starts3[code(t)]:starts3[code(t)+1].
	starts3 []uint32
	// chunk[code(t)] is 1 + the chunk of starts4 that splits t's range
	// by the fourth byte, for the 3-byte strings with more than denseGram
	// keys; 0 for the others, whose ranges are short already.
	chunk   []uint32
	starts4 []uint32 // trigramSymbols+1 starts per chunk
}

// denseGram is the longest range of a 3-byte string that a query
// binary-searches without splitting it by the next byte. The full table of
// 4-byte strings would take 7.5 MB per index, nearly all of it for empty
// ranges; the 3-byte strings with more keys than this are about 6,000 in
// the large dataset, so their chunks take less than 1 MB per index.
const denseGram = 4

// span returns the range of keys that share p's first k bytes: three, or
// four when that range is long; k is 0 when p is not folded. The range
// may end with keys shorter than k that follow them ("abd" after "abcz").
func (g *grams) span(p []byte) (from, to, k int) {
	code, ok := gramCode(p, 3)
	if !ok {
		return 0, 0, 0
	}
	if len(p) > 3 {
		if ch := g.chunk[code]; ch != 0 {
			sym, ok := trigramSymbol(p[3])
			if !ok {
				return 0, 0, 0
			}
			c := g.starts4[int(ch-1)*(trigramSymbols+1)+sym:]
			return int(c[0]), int(c[1]), 4
		}
	}
	return int(g.starts3[code]), int(g.starts3[code+1]), 3
}

// buildGrams computes x's gram tables: one pass over its keys for 3-byte
// strings, and one more for the 4-byte strings of the long ranges.
func buildGrams(x *index) grams {
	const n3 = trigramSymbols * trigramSymbols * trigramSymbols
	g := grams{starts3: gramStarts(x, 3, n3, func(code int, v uint32, starts []uint32) { starts[code] = v })}
	g.chunk = make([]uint32, n3)
	chunks := 0
	for c := range n3 {
		if g.starts3[c+1]-g.starts3[c] > denseGram {
			chunks++
			g.chunk[c] = uint32(chunks)
		}
	}
	if chunks == 0 {
		return g
	}
	const width = trigramSymbols + 1
	g.starts4 = make([]uint32, chunks*width)
	// Chunk c holds the starts of t+b for each byte b, then of the
	// string after t+'z', which is the next 3-byte string plus '-'.
	gramStarts(x, 4, n3*trigramSymbols, func(code int, v uint32, _ []uint32) {
		c3, sym := code/trigramSymbols, code%trigramSymbols
		if c3 < n3 && g.chunk[c3] != 0 {
			g.starts4[int(g.chunk[c3]-1)*width+sym] = v
		}
		if sym == 0 && c3 > 0 && g.chunk[c3-1] != 0 {
			g.starts4[int(g.chunk[c3-1]-1)*width+trigramSymbols] = v
		}
	})
	return g
}

// gramStarts calls set, for every k-byte string t of the slug alphabet in
// code order (n of them) and then for n itself, with the first key of x
// whose slug is not less than t, or the key count. With k = 3 it also
// returns the table set filled, of n+1 entries.
func gramStarts(x *index, k, n int, set func(code int, v uint32, starts []uint32)) []uint32 {
	var starts []uint32
	if k == 3 {
		starts = make([]uint32, n+1)
	}
	next := 0 // the first code whose start is not known yet
	for i := 0; i < x.n; i++ {
		// A slug is not less than a k-gram t exactly when its floor, the
		// greatest k-gram not above it, is not less than t. Floors grow
		// with the slugs.
		floor := gramFloor(x.slug(uint32(i)), k)
		for ; next <= floor; next++ {
			set(next, uint32(i), starts)
		}
	}
	for ; next <= n; next++ {
		set(next, uint32(x.n), starts)
	}
	return starts
}
