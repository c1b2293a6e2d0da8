package embedded

import (
	"math/bits"
	"sort"
	"unsafe"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// wordAnswer marks, in an answer, a key of the words index.
const wordAnswer = 1 << 31

// answer appends to dst the found cities that answer q, best first, one
// per city: the names index's, then, when q lets later words match and
// names leave room, the words index's for cities not found already. A key
// of a later word always ranks after every key of a whole name, so the
// two never interleave; and once the names hold q.Lines groups of cities
// that read differently, the caller has no room for a later word (see
// search.Query.Lines), which is then not looked for.
func (s *snapshot) answer(q *search.Query, dst []search.Found) []search.Found {
	var buf [search.MaxLimit]uint32
	f := newFilter(q)
	keys := s.names.find(q.Prefix, f, q.Limit, buf[:0])
	start := len(dst)
	dst = s.appendFound(dst, keys)
	if !q.Words || len(keys) == q.Limit || s.words.n == 0 ||
		q.Lines > 0 && search.LinesApart(dst[start:], q.Lines) {
		return dst
	}
	var words [search.MaxLimit]uint32
	names := len(keys)
	for _, k := range s.words.find(q.Prefix, f, q.Limit, words[:0]) {
		if len(keys) == q.Limit {
			break
		}
		if c := s.words.city(k); !s.names.hasCity(keys[:names], c) {
			keys = append(keys, k|wordAnswer)
		}
	}
	return s.appendFound(dst, keys[names:])
}

// hasCity reports whether one of keys is a key of city c.
func (x *index) hasCity(keys []uint32, c uint32) bool {
	for _, k := range keys {
		if x.city(k) == c {
			return true
		}
	}
	return false
}

// shortExtensions appends to dst each byte that follows prefix, of up to
// shortPrefixLen bytes, in some slug of a whole name, in order: the
// children of prefix in the trie, from the bit sets of shortChildren.
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

// walkTrie calls visit for every node of the trie of the records' slugs
// (the keys of whole names), depth first:
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
				lo, hi := s.names.bounds(aliasString(child))
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
