package embedded

import (
	"cmp"
	"encoding/binary"
	"slices"
	"sync"
)

// sortKey is an index with the first 8 bytes of its slug, big-endian, so
// that most of a sort is done on integers, with no trip to the record or
// the blob. Slugs hold no zero bytes, so zero padding sorts a shorter slug
// before its extensions, as bytes.Compare does.
type sortKey struct {
	head uint64
	idx  uint32
}

// sortByHead returns 0..n-1 ordered by slug, ties by tie, and where its
// upper part starts (see sortByHeads).
func sortByHead(n int, slug func(i uint32) []byte, tie tieBreak) (perm []uint32, upper int) {
	return sortByHeads(n, func(i uint32) uint64 { return head(slug(i)) }, slug, tie)
}

// tieBreak orders keys of one slug: by key, then by compare. Keys are a
// cheap first cut of the order: key(a) < key(b) must mean compare(a, b) < 0.
type tieBreak struct {
	key     func(i uint32) uint64
	compare func(a, b uint32) int
}

// head returns the first 8 bytes of slug, big-endian, zero-padded.
func head(slug []byte) uint64 {
	var k [8]byte
	copy(k[:], slug)
	return binary.BigEndian.Uint64(k[:])
}

// headAt is the head of slug[depth:], 0 past its end.
func headAt(slug []byte, depth int) uint64 {
	if depth >= len(slug) {
		return 0
	}
	return head(slug[depth:])
}

// sortByHeads returns 0..n-1 ordered by slug, ties by tie, then by
// position (so that of keys equal in every way the first stays first),
// given the head of each slug (see sortKey). The keys are split by the
// first 16 bits of their heads into two parts of about n/2, the lower
// and the upper, each sorted on a core of its own: a radix sort of the
// heads, then each run of equal heads (slugs that share their first 8
// bytes) by its next 8 bytes, and so on (see sortRun). The sorted parts
// follow each other: no merge. upper is where the upper part starts in
// perm: no slug has keys in both parts.
func sortByHeads(n int, heads func(i uint32) uint64, slug func(i uint32) []byte, tie tieBreak) (perm []uint32, upper int) {
	const topShift = 48
	in := make([]sortKey, n)
	var count [1 << (64 - topShift)]int
	for i := range in {
		h := heads(uint32(i))
		in[i] = sortKey{head: h, idx: uint32(i)}
		count[h>>topShift]++
	}
	// The lower part: the keys below the top digit split, chosen so that
	// it holds as near n/2 keys as the digits allow.
	split, below := 0, 0
	for split < len(count) && 2*(below+count[split]) <= n {
		below += count[split]
		split++
	}
	if split < len(count) && 2*(below+count[split])-n < n-2*below {
		below += count[split]
		split++
	}
	keys := make([]sortKey, n)
	lo, hi := 0, below
	for _, k := range in {
		if int(k.head>>topShift) < split {
			keys[lo], lo = k, lo+1
		} else {
			keys[hi], hi = k, hi+1
		}
	}
	tmp := in
	sortPart := func(lo, hi int) {
		part := radixSort(keys[lo:hi], tmp[lo:hi])
		sortRuns(part, 0, slug, tie)
		if len(part) > 0 && &part[0] != &keys[lo] {
			copy(keys[lo:hi], part)
		}
	}
	var wg sync.WaitGroup
	wg.Go(func() { sortPart(0, below) })
	sortPart(below, n)
	wg.Wait()
	perm = make([]uint32, n)
	for i, k := range keys {
		perm[i] = k.idx
	}
	return perm, below
}

// sortRuns sorts each run of keys that share their slugs' bytes up to
// depth+8, keys sorted by the head of those bytes: keys whose slugs end
// there by tie, then by position; the others by the next 8 bytes, in
// place of the heads, and so on. A slug is read once for each 8 bytes it
// shares with another, rather than at each comparison, where it is most
// often a cache miss.
func sortRuns(keys []sortKey, depth int, slug func(i uint32) []byte, tie tieBreak) {
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].head == keys[i].head {
			j++
		}
		if j-i > 1 {
			sortRun(keys[i:j], depth, slug, tie)
		}
		i = j
	}
}

// sortRun sorts keys whose slugs share their first depth+8 bytes, the
// last 8 of them their head (see sortRuns).
func sortRun(run []sortKey, depth int, slug func(i uint32) []byte, tie tieBreak) {
	if run[0].head&0xff == 0 { // the slugs end within the head: all the same
		for k := range run {
			run[k].head = tie.key(run[k].idx)
		}
		slices.SortFunc(run, func(a, b sortKey) int {
			if c := cmp.Compare(a.head, b.head); c != 0 {
				return c
			}
			if c := tie.compare(a.idx, b.idx); c != 0 {
				return c
			}
			return int(a.idx) - int(b.idx)
		})
		return
	}
	depth += 8
	for k := range run {
		run[k].head = headAt(slug(run[k].idx), depth)
	}
	slices.SortFunc(run, func(a, b sortKey) int {
		if c := cmp.Compare(a.head, b.head); c != 0 {
			return c
		}
		return int(a.idx) - int(b.idx)
	})
	sortRuns(run, depth, slug, tie)
}

// radixSort sorts keys by head, keeping the order of equal heads, using
// tmp (as long) as the other buffer; it returns whichever of the two
// holds the result. A pass over a digit that every key shares is skipped.
func radixSort(keys, tmp []sortKey) []sortKey {
	const digitBits = 16
	var count [1 << digitBits]int
	for shift := uint(0); shift < 64; shift += digitBits {
		clear(count[:])
		for _, k := range keys {
			count[k.head>>shift&(1<<digitBits-1)]++
		}
		if len(keys) == 0 || count[keys[0].head>>shift&(1<<digitBits-1)] == len(keys) {
			continue
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, k := range keys {
			d := k.head >> shift & (1<<digitBits - 1)
			tmp[count[d]] = k
			count[d]++
		}
		keys, tmp = tmp, keys
	}
	return keys
}
