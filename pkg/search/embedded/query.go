package embedded

import (
	"bytes"
	"sort"
	"unsafe"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// find appends to dst (which must be empty with room for limit) the
// indexes of the best limit records for prefix, best first.
func (s *snapshot) find(prefix string, limit int, dst []uint32) []uint32 {
	if e, ok := s.heavy[prefix]; ok && limit <= s.listCap {
		return s.mergeHeavy(prefix, e, limit, dst)
	}
	p := unsafe.Slice(unsafe.StringData(prefix), len(prefix))
	from, to := 0, s.count
	if len(p) >= 3 {
		code, ok := trigramCode(p)
		if !ok {
			return dst // not a folded query: nothing can match
		}
		from, to = int(s.starts[code]), int(s.starts[code+1])
	}
	lo := from + sort.Search(to-from, func(i int) bool { return bytes.Compare(s.slug(uint32(from+i)), p) >= 0 })
	// Whole-name matches come first in the range, already in rank order;
	// the others rank by their base rank alone.
	exactHi := lo
	for exactHi < s.count && len(s.slug(uint32(exactHi))) == len(p) && bytes.Equal(s.slug(uint32(exactHi)), p) {
		exactHi++
	}
	var buf [search.MaxLimit]uint32
	others := buf[:0]
	for i := uint32(exactHi); int(i) < s.count && bytes.HasPrefix(s.slug(i), p); i++ {
		others = insertByRank(s, others, limit, i)
	}
	return s.merge(prefix, uint32(lo), uint32(exactHi), others, limit, dst)
}

// insertByRank puts record i into top, kept in rank order and at most limit long.
func insertByRank(s *snapshot, top []uint32, limit int, i uint32) []uint32 {
	r := s.rank(i)
	if len(top) == limit {
		if r > s.rank(top[len(top)-1]) {
			return top
		}
		top = top[:len(top)-1]
	}
	at := len(top)
	for at > 0 && r < s.rank(top[at-1]) {
		at--
	}
	top = append(top, 0)
	copy(top[at+1:], top[at:])
	top[at] = i
	return top
}

// merge appends to dst the best limit of the whole-name matches
// [exact, exactHi), which are in rank order, and others, the best other
// matches in rank order, comparing across the two with the exact boost.
func (s *snapshot) merge(prefix string, exact, exactHi uint32, others []uint32, limit int, dst []uint32) []uint32 {
	for len(dst) < limit && (exact < exactHi || len(others) > 0) {
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

// mergeHeavy merges a heavy prefix's exact matches with its precomputed
// list of the best other matches.
func (s *snapshot) mergeHeavy(prefix string, e heavyEntry, limit int, dst []uint32) []uint32 {
	var buf [search.MaxLimit]uint32
	others := buf[:0]
	for j := 0; j < len(e.list) && len(others) < limit; j += 4 {
		others = append(others, le32(e.list, j))
	}
	return s.merge(prefix, e.exactLo, e.exactHi, others, limit, dst)
}
