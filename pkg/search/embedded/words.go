package embedded

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// wordTable is the keys of later words while they are built, sorted by
// slug, with what the build reads of them: the build walks them in this
// order, which is no order at all in the records they point to.
type wordTable struct {
	s     *snapshot
	keys  []wordBuild
	shape wordShape
}

// wordBuild is one key of a later word while it is built.
type wordBuild struct {
	head  uint64 // the first 8 bytes of its slug, big-endian
	rec   uint32 // its city's record
	pop   uint32
	name  uint32 // the first 4 bytes of its city's name (see nameHead)
	rank  uint32
	off   uint16 // where its slug starts in its city's
	len   uint16 // its slug's length
	multi bool   // its city has other word keys
}

// newWordTable makes the keys of the later words of the main names of s,
// as search.Keys makes them (a word whose slug is an alternate name's key
// is none: altRecs holds the records of those keys by city), in the order
// of their records; sort orders them.
func newWordTable(s *snapshot, altRecs map[uint32][]uint32) (*wordTable, error) {
	// At most a key per hyphen: counted first, so that millions of keys
	// are not copied again and again as the slice grows.
	most := 0
	for i := range uint32(s.count) {
		if !s.isAlt(i) {
			most += bytes.Count(s.slug(i), []byte{'-'})
		}
	}
	keys := make([]wordBuild, 0, most)
	maxOff := 1
	var altSlugs [][]byte
	for i := range uint32(s.count) {
		slug := s.slug(i)
		if s.isAlt(i) || bytes.IndexByte(slug, '-') < 0 {
			continue
		}
		altSlugs = altSlugs[:0]
		for _, a := range altRecs[i] {
			altSlugs = append(altSlugs, s.slug(a))
		}
		first := len(keys)
		name := nameHead(s.name(i)) // beside the slug: read here, not at random when sorting
		for j := 0; j+1 < len(slug); j++ {
			if slug[j] != '-' || slices.ContainsFunc(altSlugs, func(a []byte) bool { return bytes.Equal(a, slug[j+1:]) }) {
				continue
			}
			keys = append(keys, wordBuild{head: head(slug[j+1:]), rec: i, pop: s.rec(i).pop(), name: name, off: uint16(j + 1), len: uint16(len(slug) - j - 1)})
			maxOff = max(maxOff, j+1)
		}
		if len(keys)-first > 1 { // a query must keep one of them
			for k := first; k < len(keys); k++ {
				keys[k].multi = true
			}
		}
	}
	w := &wordTable{s: s, shape: wordShape{recBits: uint(max(1, bits.Len(uint(s.count-1)))), offBits: uint(bits.Len(uint(maxOff)))}}
	if len(keys) >= wordAnswer || !w.shape.holds(s.count, len(keys)) {
		return nil, fmt.Errorf("dataset too large: %d keys of later words", len(keys))
	}
	w.keys = keys
	return w, nil
}

// sort orders the keys by slug, ties by population then by city. It reads
// no rank of the records, which may be assigned meanwhile.
func (w *wordTable) sort() {
	s, keys := w.s, w.keys
	perm, _ := sortByHeads(len(keys), func(k uint32) uint64 { return keys[k].head },
		func(k uint32) []byte { return s.slug(keys[k].rec)[keys[k].off:] },
		mainTieBreak(s, func(k uint32) uint32 { return keys[k].rec }, func(k uint32) uint64 { return tieKey(keys[k].pop, keys[k].name) }))
	w.keys = make([]wordBuild, len(keys))
	for i, k := range perm {
		w.keys[i] = keys[k]
	}
}

// assignRanks numbers the word keys in the base order of the words index:
// population (higher first), slug length, then position.
func (w *wordTable) assignRanks() {
	rankKeys(len(w.keys), func(k uint32) int64 { return int64(w.keys[k].pop) }, func(uint32) bool { return false },
		func(k uint32) int { return int(w.keys[k].len) }, func(k, rank uint32) { w.keys[k].rank = rank })
}

// encode returns the words section.
func (w *wordTable) encode() []byte {
	out := make([]byte, 0, len(w.keys)*wordKeySize)
	for _, k := range w.keys {
		out = binary.LittleEndian.AppendUint64(out, w.shape.pack(k.rank, k.rec, k.off, k.multi))
	}
	return out
}

// The build reads the word keys through keySource.
func (w *wordTable) size() int             { return len(w.keys) }
func (w *wordTable) slugLen(k uint32) int  { return int(w.keys[k].len) }
func (w *wordTable) order(k uint32) uint64 { return uint64(w.keys[k].rank) }
func (w *wordTable) city(k uint32) uint32  { return w.keys[k].rec }
func (w *wordTable) multi(k uint32) bool   { return w.keys[k].multi }
func (w *wordTable) slugOff(k uint32) uint32 {
	return w.s.rec(w.keys[k].rec).slugOff() + uint32(w.keys[k].off)
}
func (w *wordTable) byteAt(k uint32, d int) byte {
	if d < 8 {
		return byte(w.keys[k].head >> (56 - 8*d))
	}
	return w.s.slug(w.keys[k].rec)[int(w.keys[k].off)+d]
}
