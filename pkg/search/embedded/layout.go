package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// built is a snapshot built in memory, with what goes into its file
// besides what the snapshot reads back.
type built struct {
	*snapshot
	words                     *wordTable
	wordSec                   []byte // the words section
	altIndex, altLens         []byte
	localIndex, locals        []byte // see local.go
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
	src := b.asRead()
	alts, altFirst := b.alts, b.altFirst // altFirst[i]: city i's first alternate name as read
	b.alts, b.altFirst = nil, nil
	local := b.local
	b.local = localBuild{}
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
		return src.arena.at(int(a.slugOff), int(a.slugLen))
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
	const altKeyBit = 1 << 31
	order := make([]uint32, 0, total) // a city's position, or an alternate name's key | altKeyBit
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
			order = append(order, uint32(a)|altKeyBit)
			a++
		}
	}
	// Lay out the records, their strings and the alternate names.
	out := &built{cities: len(cities), alts: len(alts)}
	var err error
	dst := &snapshot{
		records: make([]byte, 0, total*recordSize),
		blob:    make([]byte, 0, src.arena.len()),
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
	// The layout reads the records and strings of the cities as read in
	// no order at all, most often cache misses: it reads a batch's ahead
	// (see readOrder.touch).
	var ahead [layoutBatch]uint32
	for start := 0; start < len(order); start += layoutBatch {
		batch := order[start:min(start+layoutBatch, len(order))]
		for j, o := range batch {
			if o&altKeyBit != 0 {
				ahead[j] = cities[altKeys[o&^altKeyBit].city]
			} else {
				ahead[j] = cities[o]
			}
		}
		src.touch(ahead[:len(batch)])
		for _, o := range batch {
			var nr [recordSize]byte
			if o&altKeyBit != 0 {
				k := altKeys[o&^altKeyBit]
				c := cities[k.city]
				cr := src.rec(c)
				slug := altSlug(k)
				rec := altRecord{
					slugOff: uint32(len(dst.blob)), slugLen: uint16(len(slug)), area: cr.area(), pop: cr.pop(),
					city: recOf[k.city], name: k.alt - altFirst[c] + 1,
				}
				rec.put(nr[:])
				altRecs[recOf[k.city]] = append(altRecs[recOf[k.city]], uint32(len(dst.records)/recordSize))
				dst.records = append(dst.records, nr[:]...)
				dst.blob = append(dst.blob, slug...)
				out.altNameKeys++
				continue
			}
			i := cities[o]
			rec := src.rec(i).city()
			if hasAltKeys[o] {
				rec.flags |= flagMulti
			}
			first, end := altFirst[i], altFirst[i+1]
			if first < end {
				rec.flags |= flagAltNames
				out.altIndex = appendAltIndex(out.altIndex, uint32(len(dst.records)/recordSize), uint32(nAlts))
			}
			n := uint32(rec.slugLen) + uint32(rec.nameLen)
			for a := first; a < end; a++ {
				n += uint32(alts[a].nameLen)
				out.altLens = binary.LittleEndian.AppendUint16(out.altLens, alts[a].nameLen)
				nAlts++
			}
			local.lay(out, i, uint32(len(dst.records)/recordSize))
			off := rec.slugOff
			rec.slugOff = uint32(len(dst.blob))
			rec.put(nr[:])
			dst.records = append(dst.records, nr[:]...)
			dst.blob = append(dst.blob, src.arena.at(int(off), int(n))...)
		}
	}
	out.altIndex = appendAltIndex(out.altIndex, math.MaxUint32, uint32(nAlts))
	local.end(out)
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

// layoutBatch is how many keys the layout reads ahead at once: enough
// cache misses in flight to overlap, and few enough that what they bring
// stays in the caches until used.
const layoutBatch = 64

// compareBuilt orders two keys of one slug, of the cities whose records
// are a and b (main name or alternate name as aAlt and bAlt say), as
// search.CompareFound orders two whole-name matches of that slug:
// search.CompareKeys (population, then main name first), then the cities.
func compareBuilt(s cityOrder, a uint32, aAlt bool, b uint32, bAlt bool) int {
	// Both keys are the whole query: which slug that is does not matter to
	// the order, so the empty one stands for it.
	if c := search.CompareKeys("", wholeKey(aAlt), s.pop(a), "", wholeKey(bAlt), s.pop(b)); c != 0 {
		return c
	}
	return s.compareCities(a, b)
}

// cityOrder is what compareBuilt reads of the cities it orders: those of
// a snapshot, or those of a builder as read (see readOrder).
type cityOrder interface {
	pop(i uint32) int64
	compareCities(i, j uint32) int
}

// mainTieBreak orders main-name keys of one slug of s as compareBuilt does,
// given the record of each key and its tieKey.
func mainTieBreak(s cityOrder, rec func(k uint32) uint32, key func(k uint32) uint64) tieBreak {
	return tieBreak{key: key, compare: func(a, b uint32) int { return compareBuilt(s, rec(a), false, rec(b), false) }}
}

// tieKey is the key of mainTieBreak for a city of population pop whose
// name starts with the bytes of nameHead: the more populous city first,
// then the one whose name's first 4 bytes come first.
func tieKey(pop, nameHead uint32) uint64 { return uint64(^pop)<<32 | uint64(nameHead) }

// nameHead returns the first 4 bytes of name, big-endian, zero-padded.
func nameHead(name []byte) uint32 {
	var k [4]byte
	copy(k[:], name)
	return binary.BigEndian.Uint32(k[:])
}

// wholeKey is the key of a whole-name match of the empty prefix (see
// compareBuilt) through a main or an alternate name.
func wholeKey(alt bool) search.NameKey {
	if alt {
		return search.NameKey{Alt: 1}
	}
	return search.NameKey{}
}

// sortCities returns the records of s (cities as read) ordered by slug,
// ties by population then by city, then as read, less duplicates: of the
// cities with the same slug and area, the first (see search.KeepFirst; an
// area stands for the rest of a search.Key). The duplicates of the sort's
// two parts, which share no slug, are dropped on a core each.
func sortCities(s *readOrder) []uint32 {
	perm, upper := sortByHead(s.count, func(i uint32) []byte { return s.slug(i) }, mainTieBreak(s, func(i uint32) uint32 { return i },
		func(i uint32) uint64 { return tieKey(s.rec(i).pop(), nameHead(s.name(i))) }))
	keepFirst := func(part []uint32) []uint32 {
		return search.KeepFirst(part, func(a, b *uint32) bool { return bytes.Equal(s.slug(*a), s.slug(*b)) },
			func(i *uint32) uint32 { return s.rec(*i).area() })
	}
	var lower []uint32
	var wg sync.WaitGroup
	wg.Go(func() { lower = keepFirst(perm[:upper]) })
	kept := keepFirst(perm[upper:])
	wg.Wait()
	n := copy(perm[len(lower):], kept)
	return perm[:len(lower)+n]
}
