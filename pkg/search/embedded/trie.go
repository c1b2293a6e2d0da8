package embedded

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// trie is the top of the trie that the sorted key slugs form, kept in the
// snapshot so that the typo search (see typos.go) walks it without a binary
// search per node: every node down to depth trieDepth, level by level.
// Below that depth the sorted keys themselves are the trie: a node is the
// range of keys that share its path.
//
// Level d holds the nodes of depth d in path order (level 0 is the root),
// so that the children of one node are contiguous in the next level. A
// node is one 64-bit word: the set of bytes its children add, as bits over
// the slug alphabet (see trigramSymbol), and the index of its first child
// in the next level, so that the child for byte b is found by counting the
// set's bits below b, without reading the other children. At the deepest
// level the index is the node's first key instead, and a sentinel word
// closes the level: node k's keys are those from its index to the next
// node's that are at least trieDepth bytes long.
//
// The levels above the deepest also keep their nodes' first keys, apart
// from the words (which the walk reads, and keeps dense): so that a
// correction the walk finds there names its range of keys in two reads,
// as a deepest node does, instead of a binary search of the keys.
type trie struct {
	levels [][]byte // levels[d]: the words of level d
	firsts [][]byte // firsts[d], 0 < d < depth: uint32 per node of level d, the index of its first key, then the key count
}

// Layout of a trie node's word.
const (
	wordSize   = 8
	childBits  = trigramSymbols // the low bits: one per byte of the alphabet
	childMask  = 1<<childBits - 1
	indexShift = childBits // the high bits: the first child's (or key's) index
	maxIndex   = 1<<(64-indexShift) - 1
)

// trieDepth is how deep the trie is kept. Depths 1–8 hold about 3.3
// million nodes in the large dataset (27 MB); below them, ranges of keys
// are short.
const trieDepth = 8

func (t *trie) depth() int { return len(t.levels) - 1 }

// node returns the word of node k of level d.
func (t *trie) node(d int, k uint32) uint64 { return le64(t.levels[d], int(k)*wordSize) }

// child returns the index in level d+1 of the child for symbol sym of the
// node whose word is w: it must be in w's set.
func child(w uint64, sym int) uint32 {
	return uint32(w>>indexShift) + uint32(bits.OnesCount64(w&childMask&(1<<sym-1)))
}

// keys returns the range of keys of node k of the deepest level, which may
// end with keys shorter than the trie's depth (see trie).
func (t *trie) keys(k uint32) (lo, hi uint32) {
	l := t.levels[len(t.levels)-1]
	return uint32(le64(l, int(k)*wordSize) >> indexShift), uint32(le64(l, int(k+1)*wordSize) >> indexShift)
}

// keysAt returns the range of keys of node k of level d, which may end
// with keys shorter than d.
func (t *trie) keysAt(d int, k uint32) (lo, hi uint32) {
	if d == t.depth() {
		return t.keys(k)
	}
	return le32(t.firsts[d], int(k)*4), le32(t.firsts[d], int(k+1)*4)
}

// buildTrie returns the trie section for count keys sorted by slug, or nil
// when some slug holds a byte outside the slug alphabet (then FindTypos
// walks as the Service would). The section is the depth, then for each
// level from the root down its node count and words, then for each level
// from 1 to the one above the deepest its nodes' first keys and the key
// count.
func buildTrie(count int, slug func(i uint32) []byte, depth int) []byte {
	if count > maxIndex {
		return nil
	}
	levels := make([][]uint64, depth+1)
	levels[0] = []uint64{0}
	firsts := make([][]uint32, depth)
	var prev []byte
	for i := range uint32(count) {
		s := slug(i)
		common := 0
		for common < len(s) && common < len(prev) && s[common] == prev[common] {
			common++
		}
		if !isSlug(aliasString(s[common:])) { // the rest was checked with prev
			return nil
		}
		common = min(common, depth)
		for d := common + 1; d <= min(len(s), depth); d++ {
			sym, ok := trigramSymbol(s[d-1])
			if !ok {
				return nil
			}
			parent := &levels[d-1][len(levels[d-1])-1]
			if *parent&childMask == 0 {
				*parent |= uint64(len(levels[d])) << indexShift
			}
			*parent |= 1 << sym
			var index uint64
			if d == depth {
				index = uint64(i)
			} else {
				firsts[d] = append(firsts[d], i)
			}
			levels[d] = append(levels[d], index<<indexShift)
		}
		if len(s) > depth {
			// A deepest node's set names the bytes after it in its keys.
			sym, ok := trigramSymbol(s[depth])
			if !ok {
				return nil
			}
			levels[depth][len(levels[depth])-1] |= 1 << sym
		}
		prev = s
	}
	// A node without children points where its children would start, so
	// that every level's indexes grow.
	for d := range depth {
		next := uint64(0)
		for k, w := range levels[d] {
			if w&childMask == 0 {
				levels[d][k] = w | next<<indexShift
			}
			next = levels[d][k]>>indexShift + uint64(bits.OnesCount64(levels[d][k]&childMask))
		}
	}
	levels[depth] = append(levels[depth], uint64(count)<<indexShift)
	out := binary.LittleEndian.AppendUint32(nil, uint32(depth))
	for d, l := range levels {
		n := len(l)
		if d == depth {
			n-- // the sentinel
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(n))
		for _, w := range l {
			out = binary.LittleEndian.AppendUint64(out, w)
		}
	}
	for _, f := range firsts[1:] {
		for _, k := range f {
			out = binary.LittleEndian.AppendUint32(out, k)
		}
		out = binary.LittleEndian.AppendUint32(out, uint32(count))
	}
	return out
}

// parseTrie reads a trie section of a snapshot with count keys (none when
// the section is empty), checking that every node's children lie in the
// next level right after its previous sibling's, and that every level's
// key indexes never decrease and end at count, so that a walk cannot step
// outside the data.
func parseTrie(b []byte, count int) (*trie, error) {
	if len(b) == 0 {
		return nil, nil
	}
	bad := func(what string) error { return fmt.Errorf("%w: trie %s", errCorrupt, what) }
	if len(b) < 4 {
		return nil, bad("header")
	}
	depth := int(le32(b, 0))
	if depth < 1 || depth > 64 {
		return nil, bad("depth")
	}
	t := &trie{levels: make([][]byte, depth+1), firsts: make([][]byte, depth)}
	off := 4
	for d := range depth + 1 {
		if len(b)-off < 4 {
			return nil, bad("level outside the section")
		}
		n := uint64(le32(b, off))
		off += 4
		if d == depth {
			n++ // the sentinel
		}
		if n*wordSize > uint64(len(b)-off) {
			return nil, bad("level outside the section")
		}
		size := int(n * wordSize)
		t.levels[d] = b[off : off+size : off+size]
		off += size
	}
	if len(t.levels[0]) != wordSize {
		return nil, bad("root")
	}
	for d := range depth {
		next := uint64(0)
		for k := range len(t.levels[d]) / wordSize {
			w := t.node(d, uint32(k))
			if w>>indexShift != next {
				return nil, bad("children out of order")
			}
			next += uint64(bits.OnesCount64(w & childMask))
		}
		if want := len(t.levels[d+1]) / wordSize; d+1 == depth && next != uint64(want-1) || d+1 < depth && next != uint64(want) {
			return nil, bad("level does not cover the next")
		}
	}
	last := uint64(0)
	for k := range len(t.levels[depth]) / wordSize {
		v := t.node(depth, uint32(k)) >> indexShift
		if v < last || v > uint64(count) {
			return nil, bad("keys out of order")
		}
		last = v
	}
	if last != uint64(count) {
		return nil, bad("keys do not end at the last")
	}
	for d := 1; d < depth; d++ {
		size := (len(t.levels[d])/wordSize + 1) * 4
		if len(b)-off < size {
			return nil, bad("first keys outside the section")
		}
		t.firsts[d] = b[off : off+size : off+size]
		off += size
		last := uint32(0)
		for k := 0; k < size; k += 4 {
			v := le32(t.firsts[d], k)
			if v < last || v > uint32(count) {
				return nil, bad("first keys out of order")
			}
			last = v
		}
		if last != uint32(count) {
			return nil, bad("first keys do not end at the last")
		}
	}
	if off != len(b) {
		return nil, bad("section longer than its levels")
	}
	return t, nil
}
