package embedded

import (
	"bytes"
	"math/bits"
	"slices"
	"sort"
	"unsafe"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// filter is what a query keeps of the records in its range: the cities of
// its countries, regions and box (see search.Query.Accepts).
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

// find appends to dst (which must be empty with room for limit) the
// indexes of the best limit records for prefix, best first, keeping only
// cities that countries (a filter, or nil for all) accepts.
func (s *snapshot) find(prefix string, countries *filter, limit int, dst []uint32) []uint32 {
	if limit <= s.listCap && s.mayBeHeavy(prefix) {
		if e, ok := s.heavy[prefix]; ok {
			var buf [search.MaxLimit]uint32
			others := buf[:0]
			for j := 0; j < len(e.list) && len(others) < limit; j += 4 {
				if i := le32(e.list, j); s.accepts(i, countries) {
					others = append(others, i)
				}
			}
			// The list holds the best listCap matches: a filter may need
			// more than it has, and then the whole range is scanned.
			if len(others) == limit || len(e.list)/4 < s.listCap {
				return s.merge(prefix, countries, e.exactLo, e.exactHi, others, limit, dst)
			}
		}
	}
	lo, hi := s.bounds(prefix)
	return s.scan(prefix, countries, lo, hi, limit, dst)
}

// mayBeHeavy reports whether prefix may have more than scanLimit matches,
// and so a precomputed list: the range of records that share its first
// three or four bytes says so in one table lookup, sparing most prefixes
// a hash of the heavy ones.
func (s *snapshot) mayBeHeavy(prefix string) bool {
	k := min(len(prefix), 4)
	if k < 3 {
		return true
	}
	code, ok := gramCode(unsafe.Slice(unsafe.StringData(prefix), len(prefix)), k)
	if !ok {
		return false
	}
	starts := s.starts3
	if k == 4 {
		starts = s.starts4
	}
	return int(starts[code+1]-starts[code]) > s.scanLimit
}

// bounds returns the range of records whose slugs start with prefix.
func (s *snapshot) bounds(prefix string) (lo, hi int) {
	p := unsafe.Slice(unsafe.StringData(prefix), len(prefix))
	from, to := 0, s.count
	if k := min(len(p), 4); k >= 3 {
		code, ok := gramCode(p, k)
		if !ok {
			return 0, 0 // not a folded query: nothing can match
		}
		starts := s.starts3
		if k == 4 {
			starts = s.starts4
		}
		// from is the first slug not less than the k-gram; to bounds the
		// range but may take in shorter slugs ("abd" follows "abcz").
		from, to = int(starts[code]), int(starts[code+1])
	}
	lo = from + sort.Search(to-from, func(i int) bool { return bytes.Compare(s.slug(uint32(from+i)), p) >= 0 })
	// Every slug with the prefix sorts before prefix+"\x7f": slugs are ASCII.
	var end [64]byte
	q := append(append(end[:0], p...), 0x7f)
	hi = lo + sort.Search(to-lo, func(i int) bool { return bytes.Compare(s.slug(uint32(lo+i)), q) > 0 })
	return lo, hi
}

// scan ranks the records of prefix's range [lo, hi) by looking at every one
// of them: it reads their records, not their slugs.
func (s *snapshot) scan(prefix string, countries *filter, lo, hi, limit int, dst []uint32) []uint32 {
	// Whole-name matches come first in the range, already in rank order;
	// the others rank by their base rank alone.
	exactHi := lo
	for exactHi < hi && s.slugLen(uint32(exactHi)) == len(prefix) {
		exactHi++
	}
	// The best limit others by rank, kept sorted by insertion with their
	// ranks beside them: once limit are in, most records are turned away
	// by one comparison with the worst.
	var top, ranks [search.MaxLimit]uint32
	n := 0
	for i := uint32(exactHi); i < uint32(hi); i++ {
		if !s.accepts(i, countries) {
			continue
		}
		r := s.rank(i)
		if n == limit {
			if r > ranks[n-1] {
				continue
			}
			n--
		}
		at := n
		for ; at > 0 && r < ranks[at-1]; at-- {
			top[at], ranks[at] = top[at-1], ranks[at-1]
		}
		top[at], ranks[at] = i, r
		n++
	}
	return s.merge(prefix, countries, uint32(lo), uint32(exactHi), top[:n], limit, dst)
}

// accepts reports whether filter f (nil: keep all) keeps record i.
func (s *snapshot) accepts(i uint32, f *filter) bool {
	if f == nil {
		return true
	}
	r := s.rec(i)
	a := &s.areas[le32(r, rArea)]
	if len(f.countries) > 0 && !slices.Contains(f.countries, a.code) {
		return false
	}
	if len(f.regions) > 0 && !slices.ContainsFunc(f.regions, func(reg string) bool { return reg == a.subSlug || reg == a.regionSlug }) {
		return false
	}
	if f.box != nil {
		lat := int32(le32(r, rLat))
		if lat == noLocation || !f.box.Contains(float64(lat)/degreeScale, float64(int32(le32(r, rLon)))/degreeScale) {
			return false
		}
	}
	return true
}

// merge appends to dst the best limit of the whole-name matches
// [exact, exactHi) that countries accept, which are in rank order, and
// others, the best other matches in rank order, comparing across the two
// with the exact boost.
func (s *snapshot) merge(prefix string, countries *filter, exact, exactHi uint32, others []uint32, limit int, dst []uint32) []uint32 {
	for len(dst) < limit {
		for exact < exactHi && !s.accepts(exact, countries) {
			exact++
		}
		if exact == exactHi && len(others) == 0 {
			break
		}
		if len(others) == 0 || (exact < exactHi && s.compare(prefix, exact, others[0]) <= 0) {
			dst = append(dst, exact)
			exact++
		} else {
			dst = append(dst, others[0])
			others = others[1:]
		}
	}
	return dst
}

// extensions appends to dst each byte that follows prefix in some slug, in
// order: the children of prefix in the trie the sorted slugs form.
func (s *snapshot) extensions(prefix string, dst []byte) []byte {
	if len(prefix) <= shortPrefixLen {
		return s.shortExtensions(prefix, dst)
	}
	lo, hi := s.bounds(prefix)
	n := len(prefix)
	var key [64]byte
	for i := lo; i < hi; {
		slug := s.slug(uint32(i))
		if len(slug) == n {
			i++
			continue
		}
		b := slug[n]
		dst = append(dst, b)
		if hi-i < 64 { // a short range: step through it
			for i < hi && s.slug(uint32(i))[n] == b {
				i++
			}
			continue
		}
		// Skip to the first slug past prefix+b+"\x7f".
		q := append(append(append(key[:0], prefix...), b), 0x7f)
		i += sort.Search(hi-i, func(k int) bool { return bytes.Compare(s.slug(uint32(i+k)), q) > 0 })
	}
	return dst
}

// shortExtensions answers extensions for prefixes of up to shortPrefixLen
// bytes from the bit sets of shortChildren.
func (s *snapshot) shortExtensions(prefix string, dst []byte) []byte {
	idx, ok := shortIndex(unsafe.Slice(unsafe.StringData(prefix), len(prefix)))
	if !ok {
		return dst
	}
	for set := s.kids[idx]; set != 0; set &= set - 1 {
		dst = append(dst, search.SlugBytes[bits.TrailingZeros64(set)]) // trigramSymbol numbers them in this order
	}
	return dst
}

// walkTrie calls visit for every node of the trie of slugs, depth first:
// children of the short prefixes come from their bit sets, those of longer
// ones from the prefix's range of records, split by the next byte.
func (s *snapshot) walkTrie(visit func(path []byte) bool) {
	var short func(path []byte)
	var deep func(lo, hi int, path []byte)
	short = func(path []byte) {
		var buf [trigramSymbols]byte
		for _, b := range s.shortExtensions(aliasString(path), buf[:0]) {
			child := append(path, b)
			if !visit(child) {
				continue
			}
			if len(child) <= shortPrefixLen {
				short(child)
			} else { // four bytes: a short range from the 4-gram table
				lo, hi := s.bounds(aliasString(child))
				deep(lo, hi, child)
			}
		}
	}
	deep = func(lo, hi int, path []byte) {
		n := len(path)
		i := lo
		for i < hi && len(s.slug(uint32(i))) == n {
			i++ // the prefix itself: no child
		}
		for i < hi {
			b := s.slug(uint32(i))[n]
			// Every slug in range is longer than n here, and sorted.
			j := i + 1
			if hi-i <= 16 {
				for j < hi && s.slug(uint32(j))[n] == b {
					j++
				}
			} else {
				j = i + sort.Search(hi-i, func(k int) bool { return s.slug(uint32(i + k))[n] > b })
			}
			child := append(path, b)
			if visit(child) {
				deep(i, j, child)
			}
			i = j
		}
	}
	short(make([]byte, 0, 128))
}
