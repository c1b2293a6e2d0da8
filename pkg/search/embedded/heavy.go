package embedded

import (
	"cmp"
	"slices"
	"sync"
)

// index computes what queries need besides the sorted names, on every
// core: the names' ranks, then their heavy prefixes; the typo trie; the
// words' order, then their ranks, keys and heavy prefixes.
func (out *built) index(scanLimit, listCap int) {
	s := out.snapshot
	var wg sync.WaitGroup
	wg.Go(func() {
		s.assignRanks()
		out.heavy = precompute(&s.names, scanLimit, listCap, 2)
	})
	wg.Go(func() { out.trie = buildTrie(s.count, s.keySlug, trieDepth) })
	wg.Go(func() {
		w := out.words
		w.sort()
		w.assignRanks()
		out.wordSec = w.encode()
		out.wordHeavy = precompute(w, scanLimit, listCap, 1)
	})
	wg.Wait()
	s.words = index{s: s, n: len(out.words.keys), words: true, keys: out.wordSec, shape: out.words.shape}
}

// keySource is what the build reads of the keys of an index, in index
// order: an index itself, or a wordTable while the words are built.
type keySource interface {
	size() int
	slugLen(k uint32) int
	byteAt(k uint32, d int) byte // d < slugLen(k)
	order(k uint32) uint64       // the base order (see index.order)
	city(k uint32) uint32
	multi(k uint32) bool
	slugOff(k uint32) uint32 // where the slug is in the blob
}

func (x *index) size() int                   { return x.n }
func (x *index) byteAt(k uint32, d int) byte { return x.slug(k)[d] }

// assignRanks numbers the records of a sorted snapshot in the base order
// of the names index: weight (population, doubled for a main name; higher
// first), main name before alternate, slug length, then position. Position
// stands for the rest of search.CompareKeys's order: records are sorted by
// slug, and records with the same slug by the rest. Most records have no
// population, so they are numbered by a counting sort on length; only the
// others need a comparison sort.
func (s *snapshot) assignRanks() {
	base := func(i uint32) int64 { return weight(s.pop(i), s.isAlt(i), false) }
	rankKeys(s.count, base, s.isAlt, s.slugLen, func(i, rank uint32) {
		s.rec(i).addRank(rank)
	})
}

// rankKeys numbers keys 0..n-1 by weight (higher first), then those that
// are not alt before those that are, then slug length, then position,
// and calls set with each key's number.
func rankKeys(n int, weight func(uint32) int64, alt func(uint32) bool, slugLen func(uint32) int, set func(i, rank uint32)) {
	var known []uint32
	var perLen [2][]uint32 // keys of no weight, counted by alt and slug length
	for i := range uint32(n) {
		if weight(i) > 0 {
			known = append(known, i)
			continue
		}
		a, l := 0, slugLen(i)
		if alt(i) {
			a = 1
		}
		if l >= len(perLen[a]) {
			perLen[a] = append(perLen[a], make([]uint32, l+1-len(perLen[a]))...)
		}
		perLen[a][l]++
	}
	slices.SortFunc(known, func(a, b uint32) int {
		if wa, wb := weight(a), weight(b); wa != wb {
			if wa > wb {
				return -1
			}
			return 1
		}
		if aa, ab := alt(a), alt(b); aa != ab {
			if ab {
				return -1
			}
			return 1
		}
		if la, lb := slugLen(a), slugLen(b); la != lb {
			return la - lb
		}
		return int(a) - int(b)
	})
	for rank, i := range known {
		set(i, uint32(rank))
	}
	// Turn the counts into each group's first rank, then number the keys
	// in position order within their group.
	next := uint32(len(known))
	for a := range perLen {
		for l, c := range perLen[a] {
			perLen[a][l] = next
			next += c
		}
	}
	for i := range uint32(n) {
		if weight(i) == 0 {
			a, l := 0, slugLen(i)
			if alt(i) {
				a = 1
			}
			set(i, perLen[a][l])
			perLen[a][l]++
		}
	}
}

// heavyBuild is a heavy prefix found while building.
type heavyBuild struct {
	prefix           blobRef // a prefix of the slug of key exactLo
	exactLo, exactHi uint32
	list             []uint32
}

// precompute finds every prefix whose range in x holds more than scanLimit
// keys and ranks it ahead of time: for each it keeps the best listCap
// cities of its range, one key each, that are not exact matches. Those
// are ranked by their base rank alone, the same for every query prefix, so
// each prefix's list is a merge of its children's lists, built bottom-up.
// A query then merges the list with the prefix's exact matches (which rank
// with their boost) instead of ranking the whole range.
func precompute(x keySource, scanLimit, listCap, workers int) []heavyBuild {
	// The first letters split the work into independent subtrees, shared
	// out to the workers by size.
	type group struct{ lo, hi int }
	groups := make([][]group, workers)
	load := make([]int, workers)
	for lo := 0; lo < x.size(); {
		first := x.byteAt(uint32(lo), 0)
		hi := lo + 1
		for hi < x.size() && x.byteAt(uint32(hi), 0) == first {
			hi++
		}
		w := 0
		for i := range load {
			if load[i] < load[w] {
				w = i
			}
		}
		groups[w] = append(groups[w], group{lo, hi})
		load[w] += hi - lo
		lo = hi
	}
	found := make([][]heavyBuild, workers)
	var wg sync.WaitGroup
	for w := range groups {
		wg.Go(func() {
			p := prefixWalker{x: x, scanLimit: scanLimit, listCap: listCap}
			for _, g := range groups[w] {
				p.walk(g.lo, g.hi, 1)
			}
			found[w] = p.heavy
		})
	}
	wg.Wait()
	return slices.Concat(found...)
}

// prefixWalker ranks the heavy prefixes of one part of an index.
type prefixWalker struct {
	x                  keySource
	scanLimit, listCap int
	heavy              []heavyBuild
	free               [][]topKey // lists merged already, to merge into again
}

// topKey is a key of a list of the best keys of a range, with what the
// merges of lists read of it, so that they read no record: lists hold keys
// from all over the index, whose records are cache misses.
type topKey struct {
	order uint64 // see keySource.order
	key   uint32
	multi bool // see keySource.multi
}

// top returns key k as a topKey.
func (p *prefixWalker) top(k int) topKey {
	return topKey{order: p.x.order(uint32(k)), key: uint32(k), multi: p.x.multi(uint32(k))}
}

// list returns an empty list that can hold listCap keys, or scanLimit.
func (p *prefixWalker) list() []topKey {
	if n := len(p.free); n > 0 {
		l := p.free[n-1]
		p.free = p.free[:n-1]
		return l[:0]
	}
	return make([]topKey, 0, max(p.listCap, p.scanLimit))
}

// recycle lets list go to the next merge.
func (p *prefixWalker) recycle(list []topKey) {
	if cap(list) > 0 {
		p.free = append(p.free, list)
	}
}

// keysOf returns the keys of list.
func keysOf(list []topKey) []uint32 {
	keys := make([]uint32, len(list))
	for i, t := range list {
		keys[i] = t.key
	}
	return keys
}

// walk ranks keys [lo, hi), which share their first depth bytes, and
// returns their best listCap by the base order (as if none were a
// whole-name match: by rank), one per city.
func (p *prefixWalker) walk(lo, hi, depth int) []topKey {
	x := p.x
	if hi-lo <= p.scanLimit {
		idx := p.list()
		for i := lo; i < hi; i++ {
			idx = append(idx, p.top(i))
		}
		slices.SortFunc(idx, func(a, b topKey) int { return cmp.Compare(a.order, b.order) })
		best := p.mergeTop(idx, nil)
		p.recycle(idx)
		return best
	}
	exactHi := lo
	for exactHi < hi && x.slugLen(uint32(exactHi)) == depth {
		exactHi++
	}
	var best []topKey
	for c := exactHi; c < hi; {
		b := x.byteAt(uint32(c), depth)
		e := c + 1
		for e < hi && x.byteAt(uint32(e), depth) == b {
			e++
		}
		child := p.walk(c, e, depth+1)
		merged := p.mergeTop(best, child)
		p.recycle(best)
		p.recycle(child)
		best = merged
		c = e
	}
	if x.byteAt(uint32(lo), depth-1) != '-' {
		p.heavy = append(p.heavy, heavyBuild{
			prefix:  blobRef{off: x.slugOff(uint32(lo)), len: uint32(depth)},
			exactLo: uint32(lo), exactHi: uint32(exactHi), list: keysOf(best),
		})
	}
	exact := p.list()
	for i := lo; i < exactHi && len(exact) < p.listCap; i++ {
		exact = append(exact, p.top(i)) // in rank order already: see build
	}
	top := p.mergeTop(exact, best)
	p.recycle(exact)
	p.recycle(best)
	return top
}

// mergeTop merges two lists sorted by the base order into a new one of at
// most listCap keys, the first of each city.
func (p *prefixWalker) mergeTop(a, b []topKey) []topKey {
	out := p.list()
	var multi []uint32 // the cities of out's keys that are not their only one
	for len(out) < p.listCap && (len(a) > 0 || len(b) > 0) {
		var k topKey
		if len(b) == 0 || (len(a) > 0 && a[0].order <= b[0].order) {
			k, a = a[0], a[1:]
		} else {
			k, b = b[0], b[1:]
		}
		if k.multi {
			c := p.x.city(k.key)
			if slices.Contains(multi, c) {
				continue
			}
			multi = append(multi, c)
		}
		out = append(out, k)
	}
	return out
}

// slugOff returns where key k's slug starts in the blob.
func (x *index) slugOff(k uint32) uint32 {
	if x.words {
		rec, off := x.wordRec(k)
		return x.s.rec(rec).slugOff() + off
	}
	return x.s.rec(k).slugOff()
}
