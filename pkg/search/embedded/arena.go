package embedded

import (
	"fmt"
	"math"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// builder turns a stream of cities into the sections of a snapshot. It
// keeps each city as a 32-byte record plus its strings in one arena, so
// that a dataset of millions of cities fits in a few hundred megabytes
// while it is sorted.
type builder struct {
	// records holds a cityRecord per city as read, without flags.
	records chunked
	// arena holds per city its slug, its name, its alternate names, then
	// the slugs of those that are keys (see altBuild).
	arena chunked
	alts  []altBuild // every city's alternate names, in reading order
	// altFirst holds for each city as read the index in alts of its
	// first alternate name, then len(alts).
	altFirst []uint32
	areas    []area
	areaOf   search.AreaNumbers // numbers areas as the indexes of theirs
	count    int
	local    localBuild // every city's local names
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
	return &builder{altFirst: []uint32{0}}
}

func (b *builder) add(c *search.City) error {
	if len(c.Slug) > math.MaxUint16 || len(c.Name) > math.MaxUint16 {
		return fmt.Errorf("%w: name of %d bytes is too long", search.ErrInvalidCity, len(c.Name))
	}
	if err := b.local.add(uint32(b.count), c); err != nil {
		return err
	}
	// A city's slug, name and alternate names lie in one chunk of the
	// arena, where the layout reads them in place (see readOrder).
	block := len(c.Slug) + len(c.Name)
	for _, alt := range c.AltNames {
		block += len(alt)
	}
	b.arena.reserve(block)
	ai, newArea := b.areaOf.Number(c)
	if newArea {
		b.areas = append(b.areas, area{country: c.Country, code: c.CountryCode, subcountry: c.Subcountry, region: c.Region})
	}
	rec := cityRecord{
		slugOff: uint32(b.arena.len()), slugLen: uint16(len(c.Slug)), nameLen: uint16(len(c.Name)),
		area: ai, id: c.ID, pop: uint32(max(0, min(c.Population, math.MaxUint32))), lat: noLocation,
	}
	if c.HasLocation {
		rec.lat, rec.lon = fixedDegrees(c.Lat), fixedDegrees(c.Lon)
	}
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
		b.arena.reserve(len(slug))
		b.alts[first+i].slugOff, b.alts[first+i].slugLen = uint32(b.arena.len()), uint16(len(slug))
		b.arena.writeString(slug)
	}
	if b.arena.len() > math.MaxUint32 { // an offset above did not fit: the load fails
		return fmt.Errorf("dataset too large: more than 4 GiB of names")
	}
	var r [recordSize]byte
	rec.put(r[:])
	b.records.reserve(recordSize)
	b.records.write(r[:])
	b.altFirst = append(b.altFirst, uint32(len(b.alts)))
	b.count++
	return nil
}

// asRead returns the cities added, in reading order, which build sorts,
// and empties b's buffers.
func (b *builder) asRead() *readOrder {
	r := &readOrder{records: b.records, arena: b.arena, areas: b.areas, count: b.count}
	b.records, b.arena = chunked{}, chunked{}
	return r
}

// readOrder is the cities added to a builder, in reading order, read in
// place from its chunks: the hundreds of megabytes of records and strings
// are never copied into one slice (which would hold them twice at once)
// before the layout copies them, in slug order, into the snapshot.
type readOrder struct {
	records chunked // a record per city, chunkSize a multiple of recordSize
	arena   chunked
	areas   []area
	count   int
	sink    byte // what touch reads
}

// rec returns record i, in place.
func (r *readOrder) rec(i uint32) recordView {
	return recordView(r.records.at(int(i)*recordSize, recordSize))
}

// slug returns the slug of record i.
func (r *readOrder) slug(i uint32) []byte {
	rec := r.rec(i)
	return r.arena.at(int(rec.slugOff()), int(rec.slugLen()))
}

// name returns the name of record i.
func (r *readOrder) name(i uint32) []byte {
	rec := r.rec(i)
	return r.arena.at(int(rec.slugOff()+rec.slugLen()), int(rec.nameLen()))
}

// touch reads the records of cities, then the first byte of their strings,
// each in a loop of its own, so that many of these cache misses are in
// flight at once (a loop that did more between them would wait for each)
// and the cities are in the caches when read.
func (r *readOrder) touch(cities []uint32) {
	var sum byte
	for _, i := range cities {
		sum += r.records.at(int(i)*recordSize, 1)[0]
	}
	for _, i := range cities {
		if rec := r.rec(i); rec.slugLen() > 0 {
			sum += r.arena.at(int(rec.slugOff()), 1)[0]
		}
	}
	r.sink += sum
}

func (r *readOrder) pop(i uint32) int64 { return int64(r.rec(i).pop()) }

// compareCities orders the cities of records i and j as
// snapshot.compareCities does.
func (r *readOrder) compareCities(i, j uint32) int {
	return compareCityRecords(r.name(i), r.name(j), r.rec(i), r.rec(j), r.areas)
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
// garbage collector, which cannot preempt it). Bytes are read in place at
// their offsets (see at): each chunk is a slot of chunkSize offsets, and
// what is written after a reserve lies in one chunk, so an offset may be
// followed by a gap that no write filled.
type chunked struct {
	// chunks holds a slice per slot of chunkSize offsets: a chunk of k
	// slots (made for a reservation of more than chunkSize bytes) is in
	// all of them, from the slot's first byte to its end.
	chunks [][]byte
	free   []byte // the room left in the last chunk, where writes go
	n      int
}

const chunkSize = 4 << 20

// len returns the offset of the next byte written.
func (c *chunked) len() int { return c.n }

// reserve makes sure that the next n bytes written lie in one chunk: a new
// one, of as many slots as they need, if the last has less room.
func (c *chunked) reserve(n int) {
	if len(c.free) >= n {
		return
	}
	slots := max(1, (n+chunkSize-1)/chunkSize)
	ch := make([]byte, slots*chunkSize)
	for s := range slots {
		c.chunks = append(c.chunks, ch[s*chunkSize:])
	}
	c.free, c.n = ch, (len(c.chunks)-slots)*chunkSize
}

// writeString appends p, which a reserve made room for.
func (c *chunked) writeString(p string) {
	if len(p) > len(c.free) {
		panic("embedded: chunked write beyond its reservation")
	}
	copy(c.free, p)
	c.free = c.free[len(p):]
	c.n += len(p)
}

func (c *chunked) write(p []byte) { c.writeString(aliasString(p)) }

// at returns the n bytes at off, in place.
func (c *chunked) at(off, n int) []byte {
	if n == 0 {
		return nil
	}
	ch := c.chunks[off/chunkSize]
	return ch[off%chunkSize : off%chunkSize+n]
}

// equal reports whether the bytes at off are s.
func (c *chunked) equal(off uint32, s string) bool {
	return string(c.at(int(off), len(s))) == s
}
