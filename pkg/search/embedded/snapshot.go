package embedded

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// area is one interned (country, code, subcountry, region) combination.
type area struct {
	country, code, subcountry, region string
	// subSlug and regionSlug are subcountry and region folded, for the
	// region filter; set when a snapshot is read.
	subSlug, regionSlug string
}

// heavyEntry locates a heavy prefix's exact matches and precomputed list.
type heavyEntry struct {
	exactLo, exactHi uint32
	list             []byte // uint32 key indexes
}

// heavyPrefixes are the heavy prefixes of an index, by prefix: those of
// up to shortHeavyBytes bytes (nearly all) by their bytes and length in a
// word, so that a lookup hashes a word and compares keys without reading
// the blob, where a heavy prefix's bytes are mostly in no cache; the
// others by the prefix itself.
type heavyPrefixes struct {
	short map[uint64]heavyEntry
	long  map[string]heavyEntry // keys alias the blob
}

// shortHeavyBytes is the longest prefix that shortHeavyKey packs.
const shortHeavyBytes = 7

// shortHeavyKey returns prefix as a key of heavyPrefixes.short: its bytes,
// the first lowest, and its length in the top byte; ok is false when it
// is longer than shortHeavyBytes.
func shortHeavyKey(prefix string) (key uint64, ok bool) {
	if len(prefix) > shortHeavyBytes {
		return 0, false
	}
	key = uint64(len(prefix)) << 56
	for i := 0; i < len(prefix); i++ {
		key |= uint64(prefix[i]) << (8 * i)
	}
	return key, true
}

// newHeavyPrefixes returns heavyPrefixes with room for n.
func newHeavyPrefixes(n int) heavyPrefixes {
	return heavyPrefixes{short: make(map[uint64]heavyEntry, n), long: map[string]heavyEntry{}}
}

// set makes e the entry of prefix, which aliases the blob.
func (h *heavyPrefixes) set(prefix string, e heavyEntry) {
	if k, ok := shortHeavyKey(prefix); ok {
		h.short[k] = e
		return
	}
	h.long[prefix] = e
}

// len is how many heavy prefixes h holds.
func (h *heavyPrefixes) len() int { return len(h.short) + len(h.long) }

// get returns the entry of prefix, if it is heavy.
func (h *heavyPrefixes) get(prefix string) (heavyEntry, bool) {
	if k, ok := shortHeavyKey(prefix); ok {
		e, found := h.short[k]
		return e, found
	}
	e, found := h.long[prefix]
	return e, found
}

// snapshot is an open snapshot file, held in memory.
type snapshot struct {
	data    []byte
	records []byte
	blob    []byte
	areas   []area
	// names and words are the two indexes (see index).
	names, words index
	kids         []uint64 // see shortChildren
	trie         *trie
	// popNodes and jumps help the typo walk (see typopop.go and
	// typojump.go): built beside the first searches once the snapshot is
	// open (0.1–0.4 s for the full-size set, which serve's start would
	// otherwise wait for); nil until then, and for a trie too shallow.
	// aidsBuilt is closed once both are. A walk without them finds the
	// same corrections.
	popNodes  atomic.Pointer[popNodes]
	jumps     atomic.Pointer[jumps]
	aidsBuilt chan struct{}
	count     int // records
	cities    int
	// altNames holds every alternate name, city by city, aliasing the
	// blob; altAt gives a city's as first<<32 | count.
	altNames []string
	altAt    map[uint32]uint64
	// localNames holds every local name, city by city, aliasing the
	// locals section; localAt gives a city's as altAt does (nil when no
	// city has any).
	localNames []search.LocalName
	localAt    map[uint32]uint64
	// ids and grids index the city records by id and by location (see
	// indexPlaces), once placesReady is closed; placesOnce starts their
	// build.
	placesOnce  sync.Once
	placesReady chan struct{}
	ids         *search.IDIndex
	grids       [2]*search.Grid // the located cities that are not search.Wide, and those that are
	listCap     int
	scanLimit   int
	imported    time.Time
	source      search.Source
}

// stats describes the dataset the snapshot holds.
func (s *snapshot) stats() search.DatasetStats {
	return search.DatasetStats{Cities: s.cities, Imported: s.imported, Source: s.source}
}

// rec returns record i, in place.
func (s *snapshot) rec(i uint32) recordView {
	return recordView(s.records[int(i)*recordSize : int(i)*recordSize+recordSize])
}

// slug returns the slug of record i; the bytes alias the snapshot.
func (s *snapshot) slug(i uint32) []byte {
	r := s.rec(i)
	off := r.slugOff()
	return s.blob[off : off+r.slugLen()]
}

// slugLen returns the length of record i's slug, read from the record.
func (s *snapshot) slugLen(i uint32) int { return int(s.rec(i).slugLen()) }

// keySlug returns the slug of record k: the keys of whole names are the
// records, sorted by slug; the typo trie is built over them.
func (s *snapshot) keySlug(k uint32) []byte { return s.slug(k) }

// name returns the name of the city whose record is i.
func (s *snapshot) name(i uint32) []byte {
	r := s.rec(i)
	off := r.slugOff() + r.slugLen()
	return s.blob[off : off+r.nameLen()]
}

func (s *snapshot) pop(i uint32) int64 { return int64(s.rec(i).pop()) }

// rank is record i's position in the base order of the names index: the
// order of search.CompareKeys among records none of which is a whole-name
// match. Two such records rank the same way for every query prefix, so one
// integer comparison orders them.
func (s *snapshot) rank(i uint32) uint32 { return s.rec(i).rank() }

// isAlt reports whether record i is the key of an alternate name.
func (s *snapshot) isAlt(i uint32) bool { return s.rec(i).isAlt() }

// city returns the record of the city that record i is a key of.
func (s *snapshot) city(i uint32) uint32 {
	if r := s.rec(i); r.isAlt() {
		return r.cityRec()
	}
	return i
}

// aliasString views b as a string without copying. The snapshot's data is
// never written after it is read, so the string stays valid.
func aliasString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// compareCities follows search.CompareFound's tail for the cities whose
// records are i and j: name, country, subcountry, region, id.
func (s *snapshot) compareCities(i, j uint32) int {
	return compareCityRecords(s.name(i), s.name(j), s.rec(i), s.rec(j), s.areas)
}

// compareCityRecords is compareCities for two cities of names ni and nj,
// records ri and rj, whose areas are in areas.
func compareCityRecords(ni, nj []byte, ri, rj recordView, areas []area) int {
	if c := strings.Compare(aliasString(ni), aliasString(nj)); c != 0 {
		return c
	}
	if c := compareArea(&areas[ri.area()], &areas[rj.area()]); c != 0 {
		return c
	}
	idi, idj := ri.id(), rj.id()
	switch {
	case idi < idj:
		return -1
	case idi > idj:
		return 1
	}
	return 0
}

// compareArea follows search.Compare's field order: country, subcountry, region.
func compareArea(a, b *area) int {
	if c := strings.Compare(a.country, b.country); c != 0 {
		return c
	}
	if c := strings.Compare(a.subcountry, b.subcountry); c != 0 {
		return c
	}
	return strings.Compare(a.region, b.region)
}

// appendFound appends to dst the found city of each of the answer's keys
// (see answer). Their strings point into the snapshot's data, which stays
// alive as long as they do.
func (s *snapshot) appendFound(dst []search.Found, keys []uint32) []search.Found {
	dst = slices.Grow(dst, len(keys))
	for _, k := range keys {
		dst = dst[:len(dst)+1]
		s.fillFound(&dst[len(dst)-1], k)
	}
	return dst
}

// fillFound writes into f the found city of the answer's key k.
func (s *snapshot) fillFound(f *search.Found, k uint32) {
	if k&wordAnswer != 0 {
		rec, off := s.words.wordRec(k &^ wordAnswer)
		s.fillCity(&f.City, rec)
		f.Key = search.NameKey{Slug: f.Slug[off:], Offset: int(off)}
		return
	}
	c := s.city(k)
	s.fillCity(&f.City, c)
	f.Key = search.NameKey{Slug: f.Slug}
	if c != k {
		f.Key = search.NameKey{Slug: aliasString(s.slug(k)), Alt: int(s.rec(k).altName())}
	}
}

// fillCity writes the city of record c into f, field by field: the City
// is written where it lives, not built beside it and copied.
func (s *snapshot) fillCity(f *search.City, c uint32) {
	r := s.rec(c)
	a := &s.areas[r.area()]
	f.ID = r.id()
	f.Slug = aliasString(s.slug(c))
	f.Name = aliasString(s.name(c))
	f.Country, f.CountryCode, f.Subcountry, f.Region = a.country, a.code, a.subcountry, a.region
	f.Population = int64(r.pop())
	f.Lat, f.Lon, f.HasLocation = r.location()
	s.fillLocalNames(f, c)
	f.AltNames = s.altNamesOf(c)
}
