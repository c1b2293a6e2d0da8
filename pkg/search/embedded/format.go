package embedded

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// A snapshot file holds one dataset, immutable once written. All integers
// are little-endian.
//
//	header   headerSize bytes: magic, version, counts, section offsets,
//	         import time, source file, CRC-32C
//	records  count × recordSize, sorted by slug, ties in rank order
//	areas    nAreas × areaSize: interned (country, code, subcountry, region)
//	heavy    nHeavy × heavySize: prefixes with more than scanLimit matches
//	lists    uint32 record indexes: each heavy prefix's best non-exact matches
//	trie     the top levels of the trie of slugs, for typo search (see trie.go)
//	blob     the bytes of every string: per record its slug then its name
//
// Queries find a prefix's range by binary search over the records and rank it
// by scanning; a heavy prefix, whose range is too long to scan, instead finds
// its precomputed list (built at import, see build.go) by hash lookup and
// merges it with the prefix's exact matches, which lie at the start of its
// range.
const (
	magic      = "CFSNAP\x00\x01"
	version    = 4
	headerSize = 144
	recordSize = 32
	areaSize   = 32
	heavySize  = 24
)

// Header field offsets.
const (
	hVersion    = 8
	hListCap    = 12
	hCount      = 16
	hAreas      = 20
	hHeavy      = 24
	hScanLimit  = 28
	hRecordsOff = 32
	hAreasOff   = 40
	hHeavyOff   = 48
	hListsOff   = 56
	hBlobOff    = 64
	hBlobLen    = 72
	hListsLen   = 80
	hCRC        = 88
	hImported   = 96  // int64, Unix nanoseconds
	hSourceSize = 104 // uint64
	hSourceOff  = 112 // uint32 into blob
	hSourceLen  = 116 // uint32
	hTrieOff    = 120
	hTrieLen    = 128
)

// Record field offsets.
const (
	rSlugOff = 0  // uint32 into blob
	rSlugLen = 4  // uint16
	rNameLen = 6  // uint16; the name follows the slug in the blob
	rArea    = 8  // uint32
	rID      = 12 // uint32
	rPop     = 16 // uint32, 0 = unknown
	rLat     = 20 // int32, 1e-7 degrees; noLocation when unknown
	rLon     = 24 // int32, 1e-7 degrees
	rRank    = 28 // uint32: position in the base order, see assignRanks
)

// noLocation marks a record without coordinates (no latitude is that far south).
const noLocation = math.MinInt32

// Heavy entry field offsets.
const (
	kPrefixOff = 0  // uint32 into blob (the prefix is a prefix of a record's slug)
	kPrefixLen = 4  // uint32
	kExactLo   = 8  // uint32: first record whose slug equals the prefix
	kExactHi   = 12 // uint32: end of those records
	kListOff   = 16 // uint32 index into lists
	kListLen   = 20 // uint32
)

const degreeScale = 1e7

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var errCorrupt = errors.New("corrupt snapshot")

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
	list             []byte // uint32 record indexes
}

// snapshot is an open snapshot file, held in memory.
type snapshot struct {
	data      []byte
	records   []byte
	blob      []byte
	areas     []area
	heavy     map[string]heavyEntry // keys point into blob
	starts3   []uint32              // see gramStarts
	starts4   []uint32
	kids      []uint64 // see shortChildren
	trie      *trie
	count     int
	listCap   int
	scanLimit int
	imported  time.Time
	source    search.Source
}

// stats describes the dataset the snapshot holds.
func (s *snapshot) stats() search.DatasetStats {
	return search.DatasetStats{Cities: s.count, Imported: s.imported, Source: s.source}
}

func le32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// openSnapshot reads and checks a snapshot file. It reads the whole file
// into memory rather than mapping it: strings handed out by searches then
// point into Go memory that the garbage collector keeps alive for as long as
// they are used, even after a newer snapshot has replaced this one, so
// results need no copying. The data holds no pointers, so the collector
// never scans it.
func openSnapshot(path string) (*snapshot, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := parseSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("open snapshot %s: %w", path, err)
	}
	return s, nil
}

func parseSnapshot(data []byte) (*snapshot, error) {
	if len(data) < headerSize || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: not a cityfinder snapshot", errCorrupt)
	}
	if v := le32(data, hVersion); v != version {
		return nil, fmt.Errorf("%w: version %d, this build reads %d: import the dataset again", errCorrupt, v, version)
	}
	if got, want := crc32.Checksum(data[headerSize:], crcTable), le32(data, hCRC); got != want {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	s := &snapshot{
		data:      data,
		count:     int(le32(data, hCount)),
		listCap:   int(le32(data, hListCap)),
		scanLimit: int(le32(data, hScanLimit)),
	}
	section := func(off uint64, n uint64) ([]byte, error) {
		if off > uint64(len(data)) || n > uint64(len(data))-off {
			return nil, fmt.Errorf("%w: section [%d,+%d) outside file of %d bytes", errCorrupt, off, n, len(data))
		}
		return data[off : off+n : off+n], nil
	}
	var err error
	if s.records, err = section(le64(data, hRecordsOff), uint64(s.count)*recordSize); err != nil {
		return nil, err
	}
	if s.blob, err = section(le64(data, hBlobOff), le64(data, hBlobLen)); err != nil {
		return nil, err
	}
	nAreas, nHeavy := uint64(le32(data, hAreas)), uint64(le32(data, hHeavy))
	areas, err := section(le64(data, hAreasOff), nAreas*areaSize)
	if err != nil {
		return nil, err
	}
	heavy, err := section(le64(data, hHeavyOff), nHeavy*heavySize)
	if err != nil {
		return nil, err
	}
	lists, err := section(le64(data, hListsOff), le64(data, hListsLen))
	if err != nil {
		return nil, err
	}
	str := func(off, n uint32) (string, error) {
		if uint64(off)+uint64(n) > uint64(len(s.blob)) {
			return "", fmt.Errorf("%w: string outside blob", errCorrupt)
		}
		return string(s.blob[off : off+n]), nil
	}
	s.areas = make([]area, nAreas)
	for i := range s.areas {
		b := areas[i*areaSize:]
		var f [4]string
		for j := range f {
			if f[j], err = str(le32(b, j*8), le32(b, j*8+4)); err != nil {
				return nil, err
			}
		}
		s.areas[i] = area{country: f[0], code: f[1], subcountry: f[2], region: f[3], subSlug: search.Slug(f[2]), regionSlug: search.Slug(f[3])}
	}
	for i := 0; i < s.count; i++ {
		r := s.records[i*recordSize:]
		off, n := uint64(le32(r, rSlugOff)), uint64(binary.LittleEndian.Uint16(r[rSlugLen:]))+uint64(binary.LittleEndian.Uint16(r[rNameLen:]))
		if off+n > uint64(len(s.blob)) || uint64(le32(r, rArea)) >= nAreas {
			return nil, fmt.Errorf("%w: record %d out of bounds", errCorrupt, i)
		}
	}
	s.heavy = make(map[string]heavyEntry, nHeavy)
	for i := 0; i < int(nHeavy); i++ {
		b := heavy[i*heavySize:]
		off, n := le32(b, kPrefixOff), le32(b, kPrefixLen)
		lo, hi := le32(b, kExactLo), le32(b, kExactHi)
		lOff, lLen := uint64(le32(b, kListOff)), uint64(le32(b, kListLen))
		if uint64(off)+uint64(n) > uint64(len(s.blob)) || lo > hi || int(hi) > s.count || (lOff+lLen)*4 > uint64(len(lists)) {
			return nil, fmt.Errorf("%w: heavy prefix %d out of bounds", errCorrupt, i)
		}
		list := lists[lOff*4 : (lOff+lLen)*4]
		for j := 0; j < len(list); j += 4 {
			if int(le32(list, j)) >= s.count {
				return nil, fmt.Errorf("%w: heavy list %d out of bounds", errCorrupt, i)
			}
		}
		key := unsafe.String(unsafe.SliceData(s.blob[off:]), int(n)) // aliases data: no copy
		s.heavy[key] = heavyEntry{exactLo: lo, exactHi: hi, list: list}
	}
	trieSec, err := section(le64(data, hTrieOff), le64(data, hTrieLen))
	if err != nil {
		return nil, err
	}
	if s.trie, err = parseTrie(trieSec, s.count); err != nil {
		return nil, err
	}
	if s.source.Name, err = str(le32(data, hSourceOff), le32(data, hSourceLen)); err != nil {
		return nil, err
	}
	s.source.Size = int64(le64(data, hSourceSize))
	if ns := int64(le64(data, hImported)); ns != 0 {
		s.imported = time.Unix(0, ns)
	}
	s.starts3, s.starts4 = s.gramStarts(3), s.gramStarts(4)
	s.kids = s.shortChildren()
	return s, nil
}

// Slugs are made of '-', '0'–'9' and 'a'–'z', which trigramCode numbers in
// byte order, so that the codes of three-byte strings sort as they do.
const trigramSymbols = 37

func trigramSymbol(c byte) (int, bool) {
	switch {
	case c == '-':
		return 0, true
	case '0' <= c && c <= '9':
		return 1 + int(c-'0'), true
	case 'a' <= c && c <= 'z':
		return 11 + int(c-'a'), true
	}
	return 0, false
}

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

// gramStarts returns, for every k-byte string t in code order, the first
// record whose slug is not less than t, plus the record count: the records
// whose slugs start with t are starts[code(t)]:starts[code(t)+1]. A query
// binary-searches that short range instead of the whole dataset. Tables for
// k = 3 and 4 take 200 KB and 7.5 MB and a few tens of milliseconds to build.
func (s *snapshot) gramStarts(k int) []uint32 {
	n := 1
	for range k {
		n *= trigramSymbols
	}
	starts := make([]uint32, n+1)
	next := 0 // the first code whose start is not known yet
	for i := 0; i < s.count; i++ {
		// A slug is not less than a k-gram t exactly when its floor, the
		// greatest k-gram not above it, is not less than t. Floors grow
		// with the slugs.
		floor := gramFloor(s.slug(uint32(i)), k)
		for ; next <= floor; next++ {
			starts[next] = uint32(i)
		}
	}
	for ; next <= n; next++ {
		starts[next] = uint32(s.count)
	}
	return starts
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
// (see shortIndex), the set of bytes that follow it in some slug, as a bit
// set over the slug alphabet. The typo search visits these short prefixes
// for almost every query, and they have the longest ranges.
func (s *snapshot) shortChildren() []uint64 {
	kids := make([]uint64, levelOffset(shortPrefixLen+1))
	var prev []byte
	for i := 0; i < s.count; i++ {
		slug := s.slug(uint32(i))
		n := min(len(slug), shortPrefixLen+1)
		if len(prev) >= n && bytes.Equal(prev[:n], slug[:n]) {
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

func (s *snapshot) rec(i uint32) []byte {
	return s.records[int(i)*recordSize : int(i)*recordSize+recordSize]
}

// slug returns the slug of record i; the bytes alias the mapping.
func (s *snapshot) slug(i uint32) []byte {
	r := s.rec(i)
	off := le32(r, rSlugOff)
	return s.blob[off : off+uint32(binary.LittleEndian.Uint16(r[rSlugLen:]))]
}

// slugLen returns the length of record i's slug, read from the record.
func (s *snapshot) slugLen(i uint32) int {
	return int(binary.LittleEndian.Uint16(s.rec(i)[rSlugLen:]))
}

// keySlug returns the slug of key k. Keys are what queries match by
// prefix, sorted by slug; the typo trie is built over them. Each city has
// one key for now, the slug of its main name, so key k is record k.
func (s *snapshot) keySlug(k uint32) []byte { return s.slug(k) }

func (s *snapshot) name(i uint32) []byte {
	r := s.rec(i)
	off := le32(r, rSlugOff) + uint32(binary.LittleEndian.Uint16(r[rSlugLen:]))
	return s.blob[off : off+uint32(binary.LittleEndian.Uint16(r[rNameLen:]))]
}

func (s *snapshot) pop(i uint32) int64 { return int64(le32(s.rec(i), rPop)) }

// rank is record i's position in the base order: the order of search.Compare
// among records none of which is a whole-name match. Two such records rank
// the same way for every query prefix, so one integer comparison orders them.
func (s *snapshot) rank(i uint32) uint32 { return le32(s.rec(i), rRank) }

// aliasString views b as a string without copying. The snapshot's data is
// never written after it is read, so the string stays valid.
func aliasString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// compare orders records i and j for prefix exactly as search.Compare
// orders the cities they hold.
func (s *snapshot) compare(prefix string, i, j uint32) int {
	si, sj := aliasString(s.slug(i)), aliasString(s.slug(j))
	if c := search.CompareRank(prefix, si, s.pop(i), sj, s.pop(j)); c != 0 {
		return c
	}
	if c := strings.Compare(aliasString(s.name(i)), aliasString(s.name(j))); c != 0 {
		return c
	}
	ai, aj := &s.areas[le32(s.rec(i), rArea)], &s.areas[le32(s.rec(j), rArea)]
	if c := compareArea(ai, aj); c != 0 {
		return c
	}
	idi, idj := le32(s.rec(i), rID), le32(s.rec(j), rID)
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

// cities builds the found cities of records idx, each reached through its
// slug. Their strings point into the snapshot's data, which stays alive as
// long as they do.
func (s *snapshot) cities(idx []uint32) []search.Found {
	return s.appendCities(make([]search.Found, 0, len(idx)), idx)
}

// appendCities appends the found cities of records idx to dst.
func (s *snapshot) appendCities(dst []search.Found, idx []uint32) []search.Found {
	dst = slices.Grow(dst, len(idx))
	for _, i := range idx {
		dst = dst[:len(dst)+1]
		f := &dst[len(dst)-1]
		r := s.rec(i)
		a := &s.areas[le32(r, rArea)]
		// Field by field: the City is written where it lives, not built
		// beside it and copied.
		f.ID = le32(r, rID)
		f.Slug = aliasString(s.slug(i))
		f.Name = aliasString(s.name(i))
		f.Country, f.CountryCode, f.Subcountry, f.Region = a.country, a.code, a.subcountry, a.region
		f.Population = int64(le32(r, rPop))
		f.Lat, f.Lon, f.HasLocation = 0, 0, false
		if lat := int32(le32(r, rLat)); lat != noLocation {
			f.Lat = float64(lat) / degreeScale
			f.Lon = float64(int32(le32(r, rLon))) / degreeScale
			f.HasLocation = true
		}
		f.AltNames = nil
		f.Key = search.NameKey{Slug: f.Slug}
	}
	return dst
}

// fixedDegrees stores degrees as an int32 count of 1e-7 degrees, enough for
// the 7 decimals of the MaxMind file.
func fixedDegrees(v float64) int32 {
	return int32(math.Round(v * degreeScale))
}
