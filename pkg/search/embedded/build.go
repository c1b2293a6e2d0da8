package embedded

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"math/bits"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// builder turns a stream of cities into the sections of a snapshot. It
// keeps each city as a 32-byte record plus its strings in one arena, so
// that a dataset of millions of cities fits in a few hundred megabytes
// while it is sorted.
type builder struct {
	// records holds a record per city as read: the layout of the
	// snapshot's, with the number of alternate names in the rank field.
	records chunked
	// arena holds per city its slug, its name, its alternate names, then
	// the slugs of those that are keys (see altBuild).
	arena    chunked
	alts     []altBuild // every city's alternate names, in reading order
	areas    []area
	areaIdx  map[area]uint32
	lastArea area // rows come grouped by country and region: skip the map
	lastIdx  uint32
	count    int
}

// altBuild is one alternate name of a city being built.
type altBuild struct {
	nameLen uint16
	// slugLen is the length of the name's slug when it is a key (see
	// search.Keys), else 0; the slug is in the arena at slugOff.
	slugLen uint16
	slugOff uint32
}

func newBuilder() *builder {
	return &builder{areaIdx: make(map[area]uint32)}
}

func (b *builder) add(c *search.City) error {
	if len(c.Slug) > math.MaxUint16 || len(c.Name) > math.MaxUint16 {
		return fmt.Errorf("%w: name of %d bytes is too long", search.ErrInvalidCity, len(c.Name))
	}
	a := area{country: c.Country, code: c.CountryCode, subcountry: c.Subcountry, region: c.Region}
	ai := b.lastIdx
	if a != b.lastArea || len(b.areas) == 0 {
		var ok bool
		if ai, ok = b.areaIdx[a]; !ok {
			ai = uint32(len(b.areas))
			b.areas = append(b.areas, a)
			b.areaIdx[a] = ai
		}
		b.lastArea, b.lastIdx = a, ai
	}
	var r [recordSize]byte
	binary.LittleEndian.PutUint32(r[rSlugOff:], uint32(b.arena.len()))
	binary.LittleEndian.PutUint16(r[rSlugLen:], uint16(len(c.Slug)))
	binary.LittleEndian.PutUint16(r[rNameLen:], uint16(len(c.Name)))
	binary.LittleEndian.PutUint32(r[rArea:], ai)
	binary.LittleEndian.PutUint32(r[rID:], c.ID)
	pop := c.Population
	pop = max(0, min(pop, math.MaxUint32))
	binary.LittleEndian.PutUint32(r[rPop:], uint32(pop))
	lat, lon := int32(noLocation), int32(0)
	if c.HasLocation {
		lat, lon = fixedDegrees(c.Lat), fixedDegrees(c.Lon)
	}
	binary.LittleEndian.PutUint32(r[rLat:], uint32(lat))
	binary.LittleEndian.PutUint32(r[rLon:], uint32(lon))
	binary.LittleEndian.PutUint32(r[rRank:], uint32(len(c.AltNames)))
	b.arena.writeString(c.Slug)
	b.arena.writeString(c.Name)
	first := len(b.alts)
	for _, alt := range c.AltNames {
		if len(alt) > math.MaxUint16 {
			return fmt.Errorf("%w: alternate name of %d bytes is too long", search.ErrInvalidCity, len(alt))
		}
		b.arena.writeString(alt)
		b.alts = append(b.alts, altBuild{nameLen: uint16(len(alt))})
	}
	// The keys of alternate names, as search.Keys makes them: a key that
	// is empty, the city's slug or an earlier alternate name's is none.
	for i, alt := range c.AltNames {
		slug := search.AltKey(alt)
		if slug == "" || slug == c.Slug || len(slug) > math.MaxUint16 || b.hasAltKey(b.alts[first:first+i], slug) {
			continue
		}
		b.alts[first+i].slugOff, b.alts[first+i].slugLen = uint32(b.arena.len()), uint16(len(slug))
		b.arena.writeString(slug)
	}
	if b.arena.len() > math.MaxUint32 { // an offset above did not fit: the load fails
		return fmt.Errorf("dataset too large: more than 4 GiB of names")
	}
	b.records.write(r[:])
	b.count++
	return nil
}

// hasAltKey reports whether one of alts is a key with this slug.
func (b *builder) hasAltKey(alts []altBuild, slug string) bool {
	for _, a := range alts {
		if int(a.slugLen) == len(slug) && b.arena.equal(a.slugOff, slug) {
			return true
		}
	}
	return false
}

// chunked is an append-only buffer of fixed-size chunks: growing it to
// hundreds of megabytes never copies or clears what it already holds, as
// a growing slice would (and a huge copy or clear also holds up the
// garbage collector, which cannot preempt it).
type chunked struct {
	chunks [][]byte
	n      int
}

const chunkSize = 4 << 20

func (c *chunked) len() int { return c.n }

func (c *chunked) writeString(p string) {
	for len(p) > 0 {
		last := len(c.chunks) - 1
		if last < 0 || len(c.chunks[last]) == cap(c.chunks[last]) {
			c.chunks = append(c.chunks, make([]byte, 0, chunkSize))
			last++
		}
		k := min(len(p), cap(c.chunks[last])-len(c.chunks[last]))
		c.chunks[last] = append(c.chunks[last], p[:k]...)
		c.n += k
		p = p[k:]
	}
}

func (c *chunked) write(p []byte) { c.writeString(aliasString(p)) }

// equal reports whether the bytes at off are s.
func (c *chunked) equal(off uint32, s string) bool {
	for i := range len(s) {
		at := int(off) + i
		if c.chunks[at/chunkSize][at%chunkSize] != s[i] {
			return false
		}
	}
	return true
}

// bytes returns the contents as one slice and empties c.
func (c *chunked) bytes() []byte {
	out := make([]byte, 0, c.n)
	for i, ch := range c.chunks {
		out = append(out, ch...)
		c.chunks[i] = nil
	}
	*c = chunked{}
	return out
}

// built is a snapshot built in memory, with what goes into its file
// besides what the snapshot reads back.
type built struct {
	*snapshot
	words                     *wordTable
	wordSec                   []byte // the words section
	altIndex, altLens         []byte
	heavy, wordHeavy          []heavyBuild
	trie                      []byte
	cities, alts, altNameKeys int
}

// build sorts the cities read by slug (ties in rank order), drops
// duplicates (same slug and area; the first, most populous, stays), adds
// the keys of their alternate names and of the later words of their
// names, and lays records and strings out again in slug order, so that
// neighbours in a prefix range are neighbours in memory.
func (b *builder) build(ctx context.Context) (*built, error) {
	src := &snapshot{records: b.records.bytes(), blob: b.arena.bytes(), areas: b.areas, count: b.count}
	alts := b.alts
	b.alts = nil
	// The first alternate name of each city as read.
	altFirst := make([]uint32, src.count+1)
	for i := range uint32(src.count) {
		altFirst[i+1] = altFirst[i] + le32(src.rec(i), rRank)
	}
	cities := sortCities(src)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The keys of alternate names: city (its position in cities) and
	// alternate name, sorted by slug, ties in rank order.
	type altKey struct{ city, alt uint32 }
	var altKeys []altKey
	for c, i := range cities {
		for a := altFirst[i]; a < altFirst[i+1]; a++ {
			if alts[a].slugLen > 0 {
				altKeys = append(altKeys, altKey{uint32(c), a})
			}
		}
	}
	altSlug := func(k altKey) []byte {
		a := &alts[k.alt]
		return src.blob[a.slugOff : a.slugOff+uint32(a.slugLen)]
	}
	slices.SortFunc(altKeys, func(x, y altKey) int {
		if c := bytes.Compare(altSlug(x), altSlug(y)); c != 0 {
			return c
		}
		return compareBuilt(src, cities[x.city], true, cities[y.city], true)
	})
	total := len(cities) + len(altKeys)
	if total > rankMask {
		return nil, fmt.Errorf("dataset too large: %d keys of names", total)
	}
	// Merge the cities and the alternate names' keys into the names
	// order; recOf is each city's record there.
	recOf := make([]uint32, len(cities))
	order := make([]uint32, 0, total) // a city's position, or an alternate name's key | flagAlt
	for c, a := 0, 0; c < len(cities) || a < len(altKeys); {
		takeCity := a == len(altKeys)
		if !takeCity && c < len(cities) {
			k := altKeys[a]
			cmp := bytes.Compare(src.slug(cities[c]), altSlug(k))
			if cmp == 0 {
				cmp = compareBuilt(src, cities[c], false, cities[k.city], true)
			}
			takeCity = cmp <= 0
		}
		if takeCity {
			recOf[c] = uint32(len(order))
			order = append(order, uint32(c))
			c++
		} else {
			order = append(order, uint32(a)|flagAlt)
			a++
		}
	}
	// Lay out the records, their strings and the alternate names.
	out := &built{cities: len(cities), alts: len(alts)}
	var err error
	dst := &snapshot{
		records: make([]byte, 0, total*recordSize),
		blob:    make([]byte, 0, len(src.blob)),
		areas:   b.areas,
		count:   total,
		cities:  len(cities),
	}
	hasAltKeys := make([]bool, len(cities))
	for _, k := range altKeys {
		hasAltKeys[k.city] = true
	}
	altRecs := make(map[uint32][]uint32) // the records of each city's alternate names' keys
	nAlts := 0
	for _, o := range order {
		var nr [recordSize]byte
		if o&flagAlt != 0 {
			k := altKeys[o&^flagAlt]
			c := cities[k.city]
			cr := src.rec(c)
			slug := altSlug(k)
			binary.LittleEndian.PutUint32(nr[rSlugOff:], uint32(len(dst.blob)))
			binary.LittleEndian.PutUint16(nr[rSlugLen:], uint16(len(slug)))
			binary.LittleEndian.PutUint32(nr[rArea:], le32(cr, rArea))
			binary.LittleEndian.PutUint32(nr[rID:], recOf[k.city])
			binary.LittleEndian.PutUint32(nr[rPop:], le32(cr, rPop))
			binary.LittleEndian.PutUint32(nr[rLat:], k.alt-altFirst[c]+1)
			binary.LittleEndian.PutUint32(nr[rRank:], flagAlt|flagMulti)
			altRecs[recOf[k.city]] = append(altRecs[recOf[k.city]], uint32(len(dst.records)/recordSize))
			dst.records = append(dst.records, nr[:]...)
			dst.blob = append(dst.blob, slug...)
			out.altNameKeys++
			continue
		}
		i := cities[o]
		r := src.rec(i)
		copy(nr[:], r)
		var flags uint32
		if hasAltKeys[o] {
			flags |= flagMulti
		}
		first, end := altFirst[i], altFirst[i+1]
		if first < end {
			flags |= flagAltNames
			out.altIndex = binary.LittleEndian.AppendUint32(out.altIndex, uint32(len(dst.records)/recordSize))
			out.altIndex = binary.LittleEndian.AppendUint32(out.altIndex, uint32(nAlts))
		}
		n := uint32(le16(r, rSlugLen)) + uint32(le16(r, rNameLen))
		for a := first; a < end; a++ {
			n += uint32(alts[a].nameLen)
			out.altLens = binary.LittleEndian.AppendUint16(out.altLens, alts[a].nameLen)
			nAlts++
		}
		binary.LittleEndian.PutUint32(nr[rSlugOff:], uint32(len(dst.blob)))
		binary.LittleEndian.PutUint32(nr[rRank:], flags)
		dst.records = append(dst.records, nr[:]...)
		off := le32(r, rSlugOff)
		dst.blob = append(dst.blob, src.blob[off:off+n]...)
	}
	out.altIndex = binary.LittleEndian.AppendUint32(out.altIndex, math.MaxUint32)
	out.altIndex = binary.LittleEndian.AppendUint32(out.altIndex, uint32(nAlts))
	if uint64(len(dst.blob)) > math.MaxUint32 {
		return nil, fmt.Errorf("dataset too large: %d bytes of names", len(dst.blob))
	}
	src, alts, order, cities = nil, nil, nil, nil // let the copies read go
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst.names = index{s: dst, n: dst.count}
	if out.words, err = newWordTable(dst, altRecs); err != nil {
		return nil, err
	}
	out.snapshot = dst
	return out, nil
}

// index computes what queries need besides the sorted keys, on every core:
// the names' ranks, then their heavy prefixes; the typo trie; the words'
// ranks, then their keys and heavy prefixes.
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
		w.assignRanks()
		out.wordSec = w.encode()
		out.wordHeavy = precompute(w, scanLimit, listCap, 1)
	})
	wg.Wait()
	s.words = index{s: s, n: len(out.words.keys), words: true, keys: out.wordSec, shape: out.words.shape}
}

// compareBuilt orders two keys of one slug, of the cities whose records
// are a and b (main name or alternate name as aAlt and bAlt say), as
// search.CompareKeys does for a whole-name match of that slug: by weight,
// main name first, then by city.
func compareBuilt(s *snapshot, a uint32, aAlt bool, b uint32, bAlt bool) int {
	wa, wb := weight(s.pop(a), aAlt, true), weight(s.pop(b), bAlt, true)
	switch {
	case wa > wb:
		return -1
	case wa < wb:
		return 1
	case aAlt != bAlt:
		if bAlt {
			return -1
		}
		return 1
	}
	return s.compareCities(a, b)
}

// sortCities returns the records of s (cities as read) ordered by slug,
// ties by population then by city, then as read, less duplicates: of the
// cities with the same slug and area, the first.
func sortCities(s *snapshot) []uint32 {
	perm := sortByHead(s.count, func(i uint32) []byte { return s.slug(i) }, func(a, b uint32) int {
		return compareBuilt(s, a, false, b, false)
	})
	out := perm[:0]
	seen := make(map[uint32]struct{})
	for k := 0; k < len(perm); {
		run := k + 1
		for run < len(perm) && bytes.Equal(s.slug(perm[run]), s.slug(perm[k])) {
			run++
		}
		if run-k == 1 {
			out = append(out, perm[k])
			k = run
			continue
		}
		clear(seen)
		for _, i := range perm[k:run] {
			a := le32(s.rec(i), rArea)
			if _, dup := seen[a]; dup {
				continue
			}
			seen[a] = struct{}{}
			out = append(out, i)
		}
		k = run
	}
	return out
}

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
	rank  uint32
	off   uint16 // where its slug starts in its city's
	len   uint16 // its slug's length
	multi bool   // its city has other word keys
}

// newWordTable makes the keys of the later words of the main names of s,
// as search.Keys makes them (a word whose slug is an alternate name's key
// is none: altRecs holds the records of those keys by city), sorted by
// slug, ties by population then by city.
func newWordTable(s *snapshot, altRecs map[uint32][]uint32) (*wordTable, error) {
	var keys []wordBuild
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
		for j := 0; j+1 < len(slug); j++ {
			if slug[j] != '-' || slices.ContainsFunc(altSlugs, func(a []byte) bool { return bytes.Equal(a, slug[j+1:]) }) {
				continue
			}
			keys = append(keys, wordBuild{head: head(slug[j+1:]), rec: i, pop: le32(s.rec(i), rPop), off: uint16(j + 1), len: uint16(len(slug) - j - 1)})
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
	perm := sortByHeads(len(keys), func(k uint32) uint64 { return keys[k].head },
		func(k uint32) []byte { return s.slug(keys[k].rec)[keys[k].off:] },
		func(a, b uint32) int { return compareBuilt(s, keys[a].rec, false, keys[b].rec, false) })
	w.keys = make([]wordBuild, len(keys))
	for i, k := range perm {
		w.keys[i] = keys[k]
	}
	return w, nil
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
		v := uint64(k.rank)<<w.shape.rankShift() | uint64(k.rec)<<w.shape.recShift() | uint64(k.off)<<w.shape.offShift()
		if k.multi {
			v |= 1
		}
		out = binary.LittleEndian.AppendUint64(out, v)
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
	return le32(w.s.rec(w.keys[k].rec), rSlugOff) + uint32(w.keys[k].off)
}
func (w *wordTable) byteAt(k uint32, d int) byte {
	if d < 8 {
		return byte(w.keys[k].head >> (56 - 8*d))
	}
	return w.s.slug(w.keys[k].rec)[int(w.keys[k].off)+d]
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
		r := s.records[int(i)*recordSize+rRank:]
		binary.LittleEndian.PutUint32(r, le32(r, 0)|rank)
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
	prefixOff, prefixLen uint32
	exactLo, exactHi     uint32
	list                 []uint32
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
}

// base orders keys as if none were a whole-name match: by rank.
func (p *prefixWalker) base(i, j uint32) int {
	oi, oj := p.x.order(i), p.x.order(j)
	switch {
	case oi < oj:
		return -1
	case oi > oj:
		return 1
	}
	return 0
}

// walk ranks keys [lo, hi), which share their first depth bytes, and
// returns their best listCap by the base order, one per city.
func (p *prefixWalker) walk(lo, hi, depth int) []uint32 {
	x := p.x
	if hi-lo <= p.scanLimit {
		idx := make([]uint32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			idx = append(idx, uint32(i))
		}
		slices.SortFunc(idx, p.base)
		return p.mergeTop(idx, nil)
	}
	exactHi := lo
	for exactHi < hi && x.slugLen(uint32(exactHi)) == depth {
		exactHi++
	}
	var best []uint32
	for c := exactHi; c < hi; {
		b := x.byteAt(uint32(c), depth)
		e := c + 1
		for e < hi && x.byteAt(uint32(e), depth) == b {
			e++
		}
		best = p.mergeTop(best, p.walk(c, e, depth+1))
		c = e
	}
	if x.byteAt(uint32(lo), depth-1) != '-' {
		p.heavy = append(p.heavy, heavyBuild{
			prefixOff: x.slugOff(uint32(lo)), prefixLen: uint32(depth),
			exactLo: uint32(lo), exactHi: uint32(exactHi), list: best,
		})
	}
	exact := make([]uint32, 0, min(exactHi-lo, p.listCap))
	for i := lo; i < exactHi && len(exact) < p.listCap; i++ {
		exact = append(exact, uint32(i)) // in rank order already: see build
	}
	return p.mergeTop(exact, best)
}

// mergeTop merges two lists sorted by the base order into a new one of at
// most listCap keys, the first of each city.
func (p *prefixWalker) mergeTop(a, b []uint32) []uint32 {
	out := make([]uint32, 0, min(len(a)+len(b), p.listCap))
	var multi []uint32 // the cities of out's keys that are not their only one
	for len(out) < p.listCap && (len(a) > 0 || len(b) > 0) {
		var k uint32
		if len(b) == 0 || (len(a) > 0 && p.base(a[0], b[0]) <= 0) {
			k, a = a[0], a[1:]
		} else {
			k, b = b[0], b[1:]
		}
		if p.x.multi(k) {
			c := p.x.city(k)
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
		return le32(x.s.rec(rec), rSlugOff) + off
	}
	return le32(x.s.rec(k), rSlugOff)
}

// build is what a snapshot is built with besides its cities.
type build struct {
	// scanLimit is the longest prefix range a query ranks by scanning;
	// listCap the length of a heavy prefix's precomputed list.
	scanLimit, listCap int
	// source is the file the cities come from.
	source search.Source
	// enter hears the steps after reading (see search.LoadOptions.Phase).
	enter func(phase string)
}

// write writes the snapshot to w, which must be positioned at its start;
// it seeks back to fill the header last.
func (s *built) write(w io.WriteSeeker, b build) error {
	// Area strings, then the source's name, go to the end of the blob.
	blob := s.blob
	areaRefs := make([]byte, 0, len(s.areas)*areaSize)
	for _, a := range s.areas {
		for _, f := range [4]string{a.country, a.code, a.subcountry, a.region} {
			areaRefs = binary.LittleEndian.AppendUint32(areaRefs, uint32(len(blob)))
			areaRefs = binary.LittleEndian.AppendUint32(areaRefs, uint32(len(f)))
			blob = append(blob, f...)
		}
	}
	sourceOff := len(blob)
	blob = append(blob, b.source.Name...)
	if uint64(len(blob)) > math.MaxUint32 {
		return fmt.Errorf("dataset too large: %d bytes of strings", len(blob))
	}
	heavyRefs, lists := heavySections(s.heavy)
	wordHeavyRefs, wordLists := heavySections(s.wordHeavy)

	var hdr [headerSize]byte
	copy(hdr[:], magic)
	put32 := func(off int, v uint32) { binary.LittleEndian.PutUint32(hdr[off:], v) }
	put64 := func(off int, v uint64) { binary.LittleEndian.PutUint64(hdr[off:], v) }
	put32(hVersion, version)
	put32(hListCap, uint32(b.listCap))
	put32(hRecords, uint32(s.count))
	put32(hCities, uint32(s.cities))
	put32(hAreas, uint32(len(s.areas)))
	put32(hScanLimit, uint32(b.scanLimit))
	put32(hHeavy, uint32(len(s.heavy)))
	put32(hWordHeavy, uint32(len(s.wordHeavy)))
	put32(hWords, uint32(s.snapshot.words.n))
	hdr[hWordShape], hdr[hWordShape+1] = byte(s.snapshot.words.shape.recBits), byte(s.snapshot.words.shape.offBits)
	put32(hAltCities, uint32(len(s.altIndex)/8-1))
	put32(hAlts, uint32(len(s.altLens)/2))
	put64(hImported, uint64(time.Now().UnixNano()))
	put64(hSourceSize, uint64(max(b.source.Size, 0)))
	put32(hSourceOff, uint32(sourceOff))
	put32(hSourceLen, uint32(len(b.source.Name)))
	var secs [numSections][]byte
	secs[secRecords], secs[secAreas], secs[secHeavy], secs[secLists] = s.records, areaRefs, heavyRefs, lists
	secs[secTrie], secs[secWords], secs[secWordHeavy], secs[secWordLists] = s.trie, s.wordSec, wordHeavyRefs, wordLists
	secs[secAltIndex], secs[secAltLens], secs[secBlob] = s.altIndex, s.altLens, blob
	off := uint64(headerSize)
	for i, sec := range secs {
		put64(hSections+16*i, off)
		put64(hSections+16*i+8, uint64(len(sec)))
		off += uint64(len(sec))
	}

	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	for _, sec := range secs {
		if _, err := bw.Write(sec); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	put32(hCRC, crc.Sum32())
	if _, err := w.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := w.Write(hdr[:])
	return err
}

// heavySections encodes heavy prefixes as the heavy and lists sections.
func heavySections(heavy []heavyBuild) (refs, lists []byte) {
	refs = make([]byte, 0, len(heavy)*heavySize)
	for _, h := range heavy {
		for _, v := range [...]uint32{h.prefixOff, h.prefixLen, h.exactLo, h.exactHi, uint32(len(lists) / 4), uint32(len(h.list))} {
			refs = binary.LittleEndian.AppendUint32(refs, v)
		}
		for _, i := range h.list {
			lists = binary.LittleEndian.AppendUint32(lists, i)
		}
	}
	return refs, lists
}

// readInto reads r into b. Reading (parsing, decoding, folding) runs on its
// own goroutine, handing batches of cities over, so that it and the copying
// into b use two cores.
func readInto(ctx context.Context, r search.CityReader, b *builder) (int, error) {
	const batchSize = 4096
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make(chan []search.City, 4)
	free := make(chan []search.City, 5)
	for range cap(free) {
		free <- make([]search.City, 0, batchSize)
	}
	var n int
	var readErr error
	go func() {
		defer close(full)
		batch := <-free
		n, readErr = search.Each(ctx, r, func(c *search.City) error {
			batch = append(batch, *c)
			if len(batch) < batchSize {
				return nil
			}
			select {
			case full <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case batch = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		})
		if readErr == nil && len(batch) > 0 {
			full <- batch
		}
	}()
	var addErr error
	for batch := range full {
		for i := range batch {
			if addErr == nil {
				addErr = b.add(&batch[i])
			}
		}
		if addErr != nil {
			cancel() // stop the reader; drain until it closes full
		}
		clear(batch)
		free <- batch[:0]
	}
	if addErr != nil {
		return n, addErr
	}
	return n, readErr
}

// buildFile reads r into a snapshot file at path (which must not exist).
func buildFile(ctx context.Context, r search.CityReader, path string, b build, log *slog.Logger) (search.LoadStats, error) {
	start := time.Now()
	lap := func() time.Duration {
		now := time.Now()
		d := now.Sub(start)
		start = now
		return d
	}
	bld := newBuilder()
	n, err := readInto(ctx, r, bld)
	read := lap()
	stats := search.LoadStats{Read: n}
	if err != nil {
		return stats, err
	}
	b.enter(search.PhaseSorting)
	s, err := bld.build(ctx)
	if err != nil {
		return stats, err
	}
	stats.Stored = s.cities
	bld = nil // let the unsorted copy go before the lists are built
	sorted := lap()
	b.enter(search.PhaseIndexing)
	s.index(b.scanLimit, b.listCap)
	ranked := lap()
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	b.enter(search.PhaseWriting)
	f, err := createFile(path)
	if err != nil {
		return stats, err
	}
	if err := s.write(f, b); err != nil {
		f.Close()
		return stats, fileError("write", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return stats, fileError("sync", path, err)
	}
	log.Debug("snapshot built", "cities", s.cities, "name_keys", s.count, "word_keys", s.snapshot.words.n,
		"alternate_names", s.alts, "alternate_name_keys", s.altNameKeys, "heavy_prefixes", len(s.heavy)+len(s.wordHeavy),
		"read", read, "sort", sorted, "index", ranked, "write", lap())
	return stats, f.Close()
}

// snapshotFile is what buildFile writes a snapshot to: an *os.File, or in
// tests a file that fails as a full disk does.
type snapshotFile interface {
	io.WriteSeeker
	Sync() error
	Close() error
}

// createFile creates the new snapshot file at path, which must not exist.
var createFile = func(path string) (snapshotFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}

// fileError names op and path in err, unless err is the file's own error
// (an *fs.PathError), which names them already: "write PATH: no space left
// on device", not "write PATH: write PATH: …".
func fileError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}
