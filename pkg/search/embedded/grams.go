package embedded

import "github.com/cityfinder/cityfinder/pkg/search"

// Slugs are made of '-', '0'–'9' and 'a'–'z', which trigramCode numbers in
// byte order, so that the codes of three-byte strings sort as they do.
const trigramSymbols = 37

func trigramSymbol(c byte) (int, bool) {
	sym := symbols[c]
	return int(sym), sym >= 0
}

// symbols numbers the bytes of the slug alphabet in byte order; -1 for
// the others.
var symbols = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range len(search.SlugBytes) {
		t[search.SlugBytes[i]] = int8(i)
	}
	return t
}()

// gramCode numbers the first k bytes of p (which must have as many) in
// byte order.
func gramCode(p []byte, k int) (int, bool) {
	code := 0
	for _, c := range p[:k] {
		sym, ok := trigramSymbol(c)
		if !ok {
			return 0, false
		}
		code = code*trigramSymbols + sym
	}
	return code, true
}

// gramFloor returns the code of the greatest k-byte string of the slug
// alphabet that is not above slug, or -1 when there is none.
func gramFloor(slug []byte, k int) int {
	code := 0
	for pos := range k {
		if pos == len(slug) {
			// A shorter slug lies just below its own padding with '-',
			// the smallest symbol: its floor is the k-gram before that.
			for ; pos < k; pos++ {
				code *= trigramSymbols
			}
			return code - 1
		}
		sym, ok := trigramSymbol(slug[pos])
		if !ok {
			return -1 // not a slug: never happens for stored cities
		}
		code = code*trigramSymbols + sym
	}
	return code
}

// shortPrefixLen is the longest prefix whose children shortChildren keeps.
const shortPrefixLen = 3

// shortIndex numbers the prefixes of up to shortPrefixLen bytes: the empty
// one is 0, then those of one byte, then of two, then of three.
func shortIndex(prefix []byte) (int, bool) {
	// Within a level, prefixes are numbered in code order after all
	// shorter ones.
	idx := 0
	for k := range prefix {
		sym, ok := trigramSymbol(prefix[k])
		if !ok {
			return 0, false
		}
		idx = idx*trigramSymbols + sym
	}
	return levelOffset(len(prefix)) + idx, true
}

func levelOffset(n int) int {
	off, size := 0, 1
	for range n {
		off += size
		size *= trigramSymbols
	}
	return off
}

// shortChildren returns, for every prefix of up to shortPrefixLen bytes
// (see shortIndex), the set of bytes that follow it in some slug of a
// whole name, as a bit set over the slug alphabet. The typo search visits
// these short prefixes for almost every query, and they have the longest
// ranges.
func (s *snapshot) shortChildren() []uint64 {
	kids := make([]uint64, levelOffset(shortPrefixLen+1))
	var prev []byte
	for i := 0; i < s.count; i++ {
		slug := s.slug(uint32(i))
		n := min(len(slug), shortPrefixLen+1)
		if len(prev) >= n && string(prev[:n]) == string(slug[:n]) {
			continue // the same first bytes add nothing
		}
		prev = slug
		for k := 1; k <= n; k++ {
			idx, ok := shortIndex(slug[:k-1])
			sym, ok2 := trigramSymbol(slug[k-1])
			if !ok || !ok2 {
				break
			}
			kids[idx] |= 1 << sym
		}
	}
	return kids
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

// buildGrams computes x's gram tables in one pass over its keys, which
// reads each key's slug once (mostly a cache miss): the starts of the
// 3-byte strings, and the runs of keys that share their 4-byte floor; the
// 4-byte starts of the long ranges follow from the runs. The work follows
// the keys, not the 1.9 million 4-byte strings of the alphabet: a snapshot
// opens in the time it takes to read its keys.
func buildGrams(x *index) grams {
	const n3 = trigramSymbols * trigramSymbols * trigramSymbols
	g := grams{starts3: make([]uint32, n3+1)}
	// runs[k] is the first key of the k-th run of keys with the same
	// 4-byte floor, and floors[k] that floor: floors grow with the keys.
	var runs []uint32
	var floors []int32
	next := 0 // the first 3-byte code whose start is not known yet
	for i := 0; i < x.n; i++ {
		// A slug is not less than a 3-byte string t exactly when its
		// floor, the greatest 3-byte string not above it, is not less
		// than t; and so for 4 bytes.
		slug := x.slug(uint32(i))
		for f3 := gramFloor(slug, 3); next <= f3; next++ {
			g.starts3[next] = uint32(i)
		}
		if f4 := int32(gramFloor(slug, 4)); len(floors) == 0 || floors[len(floors)-1] != f4 {
			runs, floors = append(runs, uint32(i)), append(floors, f4)
		}
	}
	for ; next <= n3; next++ {
		g.starts3[next] = uint32(x.n)
	}
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
	k := 0 // the first run whose floor is not less than the entry's string
	for c3 := range n3 {
		ch := g.chunk[c3]
		if ch == 0 {
			continue
		}
		// Chunk c3 holds the starts of t+b for each byte b, then of the
		// string after t+'z', which is the next 3-byte string plus '-':
		// entry sym is the first key whose 4-byte floor is not less than
		// c3*trigramSymbols+sym.
		starts := g.starts4[int(ch-1)*width : int(ch)*width]
		for sym := range width {
			code := int32(c3*trigramSymbols + sym)
			for k < len(floors) && floors[k] < code {
				k++
			}
			starts[sym] = uint32(x.n)
			if k < len(runs) {
				starts[sym] = runs[k]
			}
		}
	}
	return g
}
