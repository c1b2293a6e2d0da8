package embedded

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
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
//	header     headerSize bytes: magic, version, counts, import time,
//	           source file, CRC-32C, then the offset and length of each
//	           section
//	records    32 bytes each: the keys of whole names (see search.Keys),
//	           sorted by slug, ties in rank order. A city is the record of
//	           its main name's key, which holds it; the key of one of its
//	           alternate names is a record that points to the city's.
//	areas      interned (country, code, subcountry, region)
//	heavy      prefixes of names with more than scanLimit records
//	lists      uint32 record indexes: each heavy prefix's best non-exact
//	           matches, one per city
//	trie       the top levels of the trie of the records' slugs, for typo
//	           search (see trie.go)
//	words      8 bytes each: the keys of later words of main names, sorted
//	           by slug, ties in rank order (see wordShape)
//	wordHeavy  as heavy, for words
//	wordLists  as lists, of word key indexes
//	altIndex   8 bytes for each city with alternate names: its record, and
//	           the index of its first name in altLens; then a sentinel
//	altLens    uint16: the length of every alternate name, city by city
//	blob       the bytes of every string: per city record its slug, its
//	           name and its alternate names; per alternate-name record its
//	           slug; then areas and the source file's name
//
// The records and the words are the two indexes a query searches (see
// index): names first, then, for a query that lets later words match,
// words, skipping the cities already found. Each finds a prefix's range by
// binary search and ranks it by scanning; a heavy prefix, whose range is
// too long to scan, instead finds its precomputed list (built at import,
// see build.go) by hash lookup and merges it with the prefix's exact
// matches, which lie at the start of its range.
const (
	magic       = "CFSNAP\x00\x01"
	version     = 6
	recordSize  = 32
	areaSize    = 32
	heavySize   = 24
	wordKeySize = 8
)

// Header fields.
const (
	hVersion    = 8  // uint32
	hListCap    = 12 // uint32
	hRecords    = 16 // uint32: records, the keys of whole names
	hCities     = 20 // uint32: cities, the records of main names
	hAreas      = 24 // uint32
	hScanLimit  = 28 // uint32
	hHeavy      = 32 // uint32
	hWordHeavy  = 36 // uint32
	hWords      = 40 // uint32
	hWordShape  = 44 // uint8 record bits, uint8 offset bits (see wordShape)
	hAltCities  = 48 // uint32
	hAlts       = 52 // uint32
	hCRC        = 56 // uint32, of everything after the header
	hSourceOff  = 60 // uint32 into blob
	hSourceLen  = 64 // uint32
	hImported   = 72 // int64, Unix nanoseconds
	hSourceSize = 80 // uint64
	hSections   = 88 // numSections × (offset, length), uint64 each
	headerSize  = hSections + numSections*16
)

// The sections, in file order.
const (
	secRecords = iota
	secAreas
	secHeavy
	secLists
	secTrie
	secWords
	secWordHeavy
	secWordLists
	secAltIndex
	secAltLens
	secBlob
	numSections
)

// Record field offsets.
const (
	rSlugOff = 0  // uint32 into blob
	rSlugLen = 4  // uint16
	rNameLen = 6  // uint16; the name follows the slug in the blob (0 for an alternate name's record)
	rArea    = 8  // uint32; an alternate name's record has its city's
	rID      = 12 // uint32; an alternate name's record: its city's record
	rPop     = 16 // uint32, 0 = unknown; an alternate name's record has its city's
	rLat     = 20 // int32, 1e-7 degrees; noLocation when unknown. An alternate name's record: i for AltNames[i-1]
	rLon     = 24 // int32, 1e-7 degrees
	rRank    = 28 // uint32: the rank (see assignRanks) in the low rankBits, and the flags above
)

// Flags in a record's rank field.
const (
	rankBits = 29
	rankMask = 1<<rankBits - 1
	// flagAlt marks the record of an alternate name.
	flagAlt = 1 << 31
	// flagMulti marks a record whose city has other records: its
	// alternate names' keys, or its main name's.
	flagMulti = 1 << 30
	// flagAltNames marks a city with alternate names (see altIndex).
	flagAltNames = 1 << 29
)

// noLocation marks a record without coordinates (no latitude is that far south).
const noLocation = math.MinInt32

// Heavy entry field offsets.
const (
	kPrefixOff = 0  // uint32 into blob (the prefix is a prefix of a key's slug)
	kPrefixLen = 4  // uint32
	kExactLo   = 8  // uint32: first key whose slug equals the prefix
	kExactHi   = 12 // uint32: end of those keys
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
	list             []byte // uint32 key indexes
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
	count        int // records
	cities       int
	// altNames holds every alternate name, city by city, aliasing the
	// blob; altAt gives a city's as first<<32 | count.
	altNames  []string
	altAt     map[uint32]uint64
	listCap   int
	scanLimit int
	imported  time.Time
	source    search.Source
}

// stats describes the dataset the snapshot holds.
func (s *snapshot) stats() search.DatasetStats {
	return search.DatasetStats{Cities: s.cities, Imported: s.imported, Source: s.source}
}

func le16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }
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

// readStats describes the dataset of the snapshot file at path from its
// header, once the checksum of the rest is verified, reading the file
// through a small buffer: what an import needs to know of the dataset it
// replaces, without reading it into memory.
func readStats(path string) (search.DatasetStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return search.DatasetStats{}, err
	}
	defer f.Close()
	hdr := make([]byte, headerSize)
	if _, err := io.ReadFull(f, hdr[:12]); err != nil || string(hdr[:len(magic)]) != magic {
		return search.DatasetStats{}, fmt.Errorf("%w: not a cityfinder snapshot", errCorrupt)
	}
	if v := le32(hdr, hVersion); v != version {
		return search.DatasetStats{}, fmt.Errorf("%w: version %d, this build reads %d", errCorrupt, v, version)
	}
	if _, err := io.ReadFull(f, hdr[12:]); err != nil {
		return search.DatasetStats{}, fmt.Errorf("%w: header cut short", errCorrupt)
	}
	crc := crc32.New(crcTable)
	size, err := io.CopyBuffer(crc, f, make([]byte, 1<<20))
	if err != nil {
		return search.DatasetStats{}, err
	}
	if crc.Sum32() != le32(hdr, hCRC) {
		return search.DatasetStats{}, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	stats := search.DatasetStats{Cities: int(le32(hdr, hCities)), Source: search.Source{Size: int64(le64(hdr, hSourceSize))}}
	if ns := int64(le64(hdr, hImported)); ns != 0 {
		stats.Imported = time.Unix(0, ns)
	}
	blobOff, blobLen := le64(hdr, hSections+16*secBlob), le64(hdr, hSections+16*secBlob+8)
	off, n := uint64(le32(hdr, hSourceOff)), uint64(le32(hdr, hSourceLen))
	if blobOff+blobLen > uint64(headerSize)+uint64(size) || off+n > blobLen {
		return search.DatasetStats{}, fmt.Errorf("%w: source name outside the file", errCorrupt)
	}
	name := make([]byte, n)
	if _, err := f.ReadAt(name, int64(blobOff+off)); err != nil {
		return search.DatasetStats{}, err
	}
	stats.Source.Name = string(name)
	return stats, nil
}

func parseSnapshot(data []byte) (*snapshot, error) {
	if len(data) < 12 || string(data[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: not a cityfinder snapshot", errCorrupt)
	}
	if v := le32(data, hVersion); v != version {
		return nil, fmt.Errorf("%w: version %d, this build reads %d: import the dataset again", errCorrupt, v, version)
	}
	if len(data) < headerSize {
		return nil, fmt.Errorf("%w: header cut short", errCorrupt)
	}
	if got, want := crc32.Checksum(data[headerSize:], crcTable), le32(data, hCRC); got != want {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	s := &snapshot{
		data:      data,
		count:     int(le32(data, hRecords)),
		cities:    int(le32(data, hCities)),
		listCap:   int(le32(data, hListCap)),
		scanLimit: int(le32(data, hScanLimit)),
	}
	var secs [numSections][]byte
	for i := range secs {
		off, n := le64(data, hSections+16*i), le64(data, hSections+16*i+8)
		if off > uint64(len(data)) || n > uint64(len(data))-off {
			return nil, fmt.Errorf("%w: section %d [%d,+%d) outside file of %d bytes", errCorrupt, i, off, n, len(data))
		}
		secs[i] = data[off : off+n : off+n]
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
	}
	nAreas := int(le32(data, hAreas))
	if uint64(len(secs[secRecords])) != uint64(s.count)*recordSize || len(secs[secAreas]) != nAreas*areaSize ||
		s.count > rankMask || s.cities > s.count {
		return nil, bad("section sizes")
	}
	s.records, s.blob = secs[secRecords], secs[secBlob]
	str := func(off, n uint32) (string, error) {
		if uint64(off)+uint64(n) > uint64(len(s.blob)) {
			return "", bad("string outside blob")
		}
		return aliasString(s.blob[off : off+n]), nil
	}
	var err error
	s.areas = make([]area, nAreas)
	for i := range s.areas {
		b := secs[secAreas][i*areaSize:]
		var f [4]string
		for j := range f {
			if f[j], err = str(le32(b, j*8), le32(b, j*8+4)); err != nil {
				return nil, err
			}
		}
		s.areas[i] = area{country: f[0], code: f[1], subcountry: f[2], region: f[3], subSlug: search.Slug(f[2]), regionSlug: search.Slug(f[3])}
	}
	cities := 0
	for i := range uint32(s.count) {
		r := s.rec(i)
		off, n := uint64(le32(r, rSlugOff)), uint64(le16(r, rSlugLen))+uint64(le16(r, rNameLen))
		if off+n > uint64(len(s.blob)) || int(le32(r, rArea)) >= nAreas || le32(r, rRank)&rankMask >= uint32(s.count) {
			return nil, bad("record %d out of bounds", i)
		}
		if s.isAlt(i) {
			c := le32(r, rID)
			if int(c) >= s.count || s.isAlt(c) || le32(r, rLat) == 0 {
				return nil, bad("record %d names no city", i)
			}
			continue
		}
		cities++
	}
	if cities != s.cities {
		return nil, bad("%d cities, the header says %d", cities, s.cities)
	}
	if err := s.parseAltNames(secs[secAltIndex], secs[secAltLens], int(le32(data, hAltCities)), int(le32(data, hAlts))); err != nil {
		return nil, err
	}
	for i := range uint32(s.count) {
		if r := s.rec(i); s.isAlt(i) && uint64(le32(r, rLat)) > s.altAt[le32(r, rID)]&math.MaxUint32 {
			return nil, bad("record %d names an alternate name its city does not have", i)
		}
	}
	if s.trie, err = parseTrie(secs[secTrie], s.count); err != nil {
		return nil, err
	}
	s.names = index{s: s, n: s.count}
	shape := wordShape{recBits: uint(data[hWordShape]), offBits: uint(data[hWordShape+1])}
	nWords := int(le32(data, hWords))
	if uint64(len(secs[secWords])) != uint64(nWords)*wordKeySize || !shape.holds(s.count, nWords) {
		return nil, bad("words section")
	}
	s.words = index{s: s, n: nWords, words: true, keys: secs[secWords], shape: shape}
	for k := range uint32(nWords) {
		rec, off := s.words.wordRec(k)
		if int(rec) >= s.count || s.isAlt(rec) || int(off) >= s.slugLen(rec) || off == 0 || s.words.rank(k) >= uint64(nWords) {
			return nil, bad("word key %d out of bounds", k)
		}
	}
	if err := s.names.parseHeavy(secs[secHeavy], secs[secLists], int(le32(data, hHeavy))); err != nil {
		return nil, err
	}
	if err := s.words.parseHeavy(secs[secWordHeavy], secs[secWordLists], int(le32(data, hWordHeavy))); err != nil {
		return nil, err
	}
	if s.source.Name, err = str(le32(data, hSourceOff), le32(data, hSourceLen)); err != nil {
		return nil, err
	}
	s.source.Name = strings.Clone(s.source.Name) // kept by stats long after
	s.source.Size = int64(le64(data, hSourceSize))
	if ns := int64(le64(data, hImported)); ns != 0 {
		s.imported = time.Unix(0, ns)
	}
	s.names.grams = buildGrams(&s.names)
	s.words.grams = buildGrams(&s.words)
	s.kids = s.shortChildren()
	return s, nil
}

// parseAltNames reads the alternate names of the cities that have some:
// each city's follow its name in the blob, their lengths in lens.
func (s *snapshot) parseAltNames(index, lens []byte, nCities, nAlts int) error {
	if uint64(len(index)) != (uint64(nCities)+1)*8 || uint64(len(lens)) != uint64(nAlts)*2 {
		return fmt.Errorf("%w: alternate names sections", errCorrupt)
	}
	if nCities == 0 {
		return nil
	}
	s.altNames = make([]string, 0, nAlts)
	s.altAt = make(map[uint32]uint64, nCities)
	prev := -1
	for i := range nCities {
		rec, first, next := le32(index, i*8), le32(index, i*8+4), le32(index, i*8+12)
		if int(rec) <= prev || int(rec) >= s.count || s.isAlt(rec) ||
			le32(s.rec(rec), rRank)&flagAltNames == 0 || int(first) != len(s.altNames) || first >= next || int(next) > nAlts {
			return fmt.Errorf("%w: alternate names of city %d", errCorrupt, i)
		}
		prev = int(rec)
		r := s.rec(rec)
		off := uint64(le32(r, rSlugOff)) + uint64(le16(r, rSlugLen)) + uint64(le16(r, rNameLen))
		for j := first; j < next; j++ {
			n := uint64(le16(lens, int(j)*2))
			if off+n > uint64(len(s.blob)) {
				return fmt.Errorf("%w: alternate name outside blob", errCorrupt)
			}
			s.altNames = append(s.altNames, aliasString(s.blob[off:off+n]))
			off += n
		}
		s.altAt[rec] = uint64(first)<<32 | uint64(next-first)
	}
	if len(s.altNames) != nAlts {
		return fmt.Errorf("%w: alternate names count", errCorrupt)
	}
	for i := range uint32(s.count) {
		if _, ok := s.altAt[i]; le32(s.rec(i), rRank)&flagAltNames != 0 && !ok {
			return fmt.Errorf("%w: record %d has no alternate names", errCorrupt, i)
		}
	}
	return nil
}

// parseHeavy reads the heavy prefixes of x and their lists.
func (x *index) parseHeavy(heavy, lists []byte, n int) error {
	if uint64(len(heavy)) != uint64(n)*heavySize {
		return fmt.Errorf("%w: heavy section", errCorrupt)
	}
	blob := x.s.blob
	x.heavy = make(map[string]heavyEntry, n)
	for i := range n {
		b := heavy[i*heavySize:]
		off, plen := le32(b, kPrefixOff), le32(b, kPrefixLen)
		lo, hi := le32(b, kExactLo), le32(b, kExactHi)
		lOff, lLen := uint64(le32(b, kListOff)), uint64(le32(b, kListLen))
		if uint64(off)+uint64(plen) > uint64(len(blob)) || lo > hi || int(hi) > x.n || (lOff+lLen)*4 > uint64(len(lists)) {
			return fmt.Errorf("%w: heavy prefix %d out of bounds", errCorrupt, i)
		}
		list := lists[lOff*4 : (lOff+lLen)*4]
		for j := 0; j < len(list); j += 4 {
			if int(le32(list, j)) >= x.n {
				return fmt.Errorf("%w: heavy list %d out of bounds", errCorrupt, i)
			}
		}
		x.heavy[aliasString(blob[off:off+plen])] = heavyEntry{exactLo: lo, exactHi: hi, list: list}
	}
	return nil
}

// wordShape is how a word key packs into 64 bits: from the top, its rank,
// its city's record (recBits), the offset of the word in the city's slug
// (offBits), and a bit that marks a city with other word keys. Ranks are
// unique and on top, so comparing two keys as integers compares their
// ranks.
type wordShape struct{ recBits, offBits uint }

func (w wordShape) offShift() uint  { return 1 }
func (w wordShape) recShift() uint  { return 1 + w.offBits }
func (w wordShape) rankShift() uint { return 1 + w.offBits + w.recBits }

// holds reports whether keys of this shape hold nWords ranks and the
// indexes of records records.
func (w wordShape) holds(records, nWords int) bool {
	if w.recBits > 32 || w.offBits > 16 || (records > 0 && bits.Len(uint(records-1)) > int(w.recBits)) {
		return false
	}
	return int(w.rankShift())+bits.Len(uint(max(nWords-1, 0))) <= 64
}

// Slugs are made of '-', '0'–'9' and 'a'–'z', which trigramCode numbers in
// byte order, so that the codes of three-byte strings sort as they do.
const trigramSymbols = 37

func trigramSymbol(c byte) (int, bool) {
	sym := symbols[c]
	return int(sym), sym >= 0
}

// symbols numbers the bytes of the slug alphabet in byte order; -1 for
// the others.
var symbols = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := range len(search.SlugBytes) {
		t[search.SlugBytes[i]] = int8(i)
	}
	return t
}()

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
// (see shortIndex), the set of bytes that follow it in some slug of a
// whole name, as a bit set over the slug alphabet. The typo search visits
// these short prefixes for almost every query, and they have the longest
// ranges.
func (s *snapshot) shortChildren() []uint64 {
	kids := make([]uint64, levelOffset(shortPrefixLen+1))
	var prev []byte
	for i := 0; i < s.count; i++ {
		slug := s.slug(uint32(i))
		n := min(len(slug), shortPrefixLen+1)
		if len(prev) >= n && string(prev[:n]) == string(slug[:n]) {
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

// slug returns the slug of record i; the bytes alias the snapshot.
func (s *snapshot) slug(i uint32) []byte {
	r := s.rec(i)
	off := le32(r, rSlugOff)
	return s.blob[off : off+uint32(le16(r, rSlugLen))]
}

// slugLen returns the length of record i's slug, read from the record.
func (s *snapshot) slugLen(i uint32) int { return int(le16(s.rec(i), rSlugLen)) }

// keySlug returns the slug of record k: the keys of whole names are the
// records, sorted by slug; the typo trie is built over them.
func (s *snapshot) keySlug(k uint32) []byte { return s.slug(k) }

// name returns the name of the city whose record is i.
func (s *snapshot) name(i uint32) []byte {
	r := s.rec(i)
	off := le32(r, rSlugOff) + uint32(le16(r, rSlugLen))
	return s.blob[off : off+uint32(le16(r, rNameLen))]
}

func (s *snapshot) pop(i uint32) int64 { return int64(le32(s.rec(i), rPop)) }

// rank is record i's position in the base order of the names index: the
// order of search.CompareKeys among records none of which is a whole-name
// match. Two such records rank the same way for every query prefix, so one
// integer comparison orders them.
func (s *snapshot) rank(i uint32) uint32 { return le32(s.rec(i), rRank) & rankMask }

// isAlt reports whether record i is the key of an alternate name.
func (s *snapshot) isAlt(i uint32) bool { return le32(s.rec(i), rRank)&flagAlt != 0 }

// city returns the record of the city that record i is a key of.
func (s *snapshot) city(i uint32) uint32 {
	r := s.rec(i)
	if le32(r, rRank)&flagAlt != 0 {
		return le32(r, rID)
	}
	return i
}

// aliasString views b as a string without copying. The snapshot's data is
// never written after it is read, so the string stays valid.
func aliasString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// compareCities follows search.CompareFound's tail for the cities whose
// records are i and j: name, country, subcountry, region, id.
func (s *snapshot) compareCities(i, j uint32) int {
	if c := strings.Compare(aliasString(s.name(i)), aliasString(s.name(j))); c != 0 {
		return c
	}
	ri, rj := s.rec(i), s.rec(j)
	if c := compareArea(&s.areas[le32(ri, rArea)], &s.areas[le32(rj, rArea)]); c != 0 {
		return c
	}
	idi, idj := le32(ri, rID), le32(rj, rID)
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
		f := &dst[len(dst)-1]
		var c uint32
		if k&wordAnswer != 0 {
			rec, off := s.words.wordRec(k &^ wordAnswer)
			c = rec
			s.fillCity(&f.City, c)
			f.Key = search.NameKey{Slug: f.Slug[off:], Offset: int(off)}
			continue
		}
		c = s.city(k)
		s.fillCity(&f.City, c)
		f.Key = search.NameKey{Slug: f.Slug}
		if c != k {
			f.Key = search.NameKey{Slug: aliasString(s.slug(k)), Alt: int(le32(s.rec(k), rLat))}
		}
	}
	return dst
}

// fillCity writes the city of record c into f, field by field: the City
// is written where it lives, not built beside it and copied.
func (s *snapshot) fillCity(f *search.City, c uint32) {
	r := s.rec(c)
	a := &s.areas[le32(r, rArea)]
	f.ID = le32(r, rID)
	f.Slug = aliasString(s.slug(c))
	f.Name = aliasString(s.name(c))
	f.Country, f.CountryCode, f.Subcountry, f.Region = a.country, a.code, a.subcountry, a.region
	f.Population = int64(le32(r, rPop))
	f.Lat, f.Lon, f.HasLocation = 0, 0, false
	if lat := int32(le32(r, rLat)); lat != noLocation {
		f.Lat = float64(lat) / degreeScale
		f.Lon = float64(int32(le32(r, rLon))) / degreeScale
		f.HasLocation = true
	}
	f.AltNames = nil
	if le32(r, rRank)&flagAltNames != 0 {
		at := s.altAt[c]
		first, n := at>>32, at&math.MaxUint32
		f.AltNames = s.altNames[first : first+n : first+n]
	}
}

// fixedDegrees stores degrees as an int32 count of 1e-7 degrees, enough for
// the 7 decimals of the MaxMind file.
func fixedDegrees(v float64) int32 {
	return int32(math.Round(v * degreeScale))
}
