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
	areaIdx  map[area]uint32
	lastArea area // rows come grouped by country and region: skip the map
	lastIdx  uint32
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
	return &builder{areaIdx: make(map[area]uint32), altFirst: []uint32{0}}
}

func (b *builder) add(c *search.City) error {
	if len(c.Slug) > math.MaxUint16 || len(c.Name) > math.MaxUint16 {
		return fmt.Errorf("%w: name of %d bytes is too long", search.ErrInvalidCity, len(c.Name))
	}
	if err := b.local.add(uint32(b.count), c); err != nil {
		return err
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
		b.alts[first+i].slugOff, b.alts[first+i].slugLen = uint32(b.arena.len()), uint16(len(slug))
		b.arena.writeString(slug)
	}
	if b.arena.len() > math.MaxUint32 { // an offset above did not fit: the load fails
		return fmt.Errorf("dataset too large: more than 4 GiB of names")
	}
	var r [recordSize]byte
	rec.put(r[:])
	b.records.write(r[:])
	b.altFirst = append(b.altFirst, uint32(len(b.alts)))
	b.count++
	return nil
}

// asRead returns the cities added as a snapshot of their records in
// reading order, which build sorts, and empties b's buffers.
func (b *builder) asRead() *snapshot {
	return &snapshot{records: b.records.bytes(), blob: b.arena.bytes(), areas: b.areas, count: b.count}
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
