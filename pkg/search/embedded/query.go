package embedded

import (
	"bytes"
	"sort"
	"unsafe"
)

// find appends to dst (which must be empty with room for limit) the
// indexes of the best limit records for prefix, best first.
func (s *snapshot) find(prefix string, limit int, dst []uint32) []uint32 {
	if e, ok := s.heavy[prefix]; ok && limit <= s.listCap {
		return s.mergeHeavy(prefix, e, limit, dst)
	}
	p := unsafe.Slice(unsafe.StringData(prefix), len(prefix))
	lo := sort.Search(s.count, func(i int) bool { return bytes.Compare(s.slug(uint32(i)), p) >= 0 })
	for i := uint32(lo); int(i) < s.count && bytes.HasPrefix(s.slug(i), p); i++ {
		dst = s.insert(prefix, dst, limit, i)
	}
	return dst
}

// insert puts record i into dst, kept sorted best first and at most limit long.
func (s *snapshot) insert(prefix string, dst []uint32, limit int, i uint32) []uint32 {
	if len(dst) == limit {
		if s.compare(prefix, i, dst[len(dst)-1]) >= 0 {
			return dst
		}
		dst = dst[:len(dst)-1]
	}
	at := len(dst)
	for at > 0 && s.compare(prefix, i, dst[at-1]) < 0 {
		at--
	}
	dst = append(dst, 0)
	copy(dst[at+1:], dst[at:])
	dst[at] = i
	return dst
}

// mergeHeavy merges a heavy prefix's exact matches, which are stored in rank
// order, with its precomputed list of the best other matches.
func (s *snapshot) mergeHeavy(prefix string, e heavyEntry, limit int, dst []uint32) []uint32 {
	exact, list := e.exactLo, e.list
	for len(dst) < limit && (exact < e.exactHi || len(list) > 0) {
		if len(list) == 0 || (exact < e.exactHi && s.compare(prefix, exact, le32(list, 0)) <= 0) {
			dst = append(dst, exact)
			exact++
		} else {
			dst = append(dst, le32(list, 0))
			list = list[4:]
		}
	}
	return dst
}
