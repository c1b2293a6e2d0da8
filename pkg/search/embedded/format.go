package embedded

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strings"
	"sync"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// A snapshot file holds one dataset, immutable once written. All integers
// are little-endian.
//
//	header     headerSize bytes: magic, version, counts, import time,
//	           source file, CRC-32C, then the offset and length of each
//	           section (see header)
//	records    32 bytes each: the keys of whole names (see search.Keys),
//	           sorted by slug, ties in rank order. A city is the record of
//	           its main name's key, which holds it; the key of one of its
//	           alternate names is a record that points to the city's
//	           (see cityRecord, altRecord and recordView)
//	areas      interned (country, code, subcountry, region) (see appendArea)
//	heavy      prefixes of names with more than scanLimit records (see
//	           heavyRef)
//	lists      uint32 record indexes: each heavy prefix's best non-exact
//	           matches, one per city
//	trie       the top levels of the trie of the records' slugs, for typo
//	           search (see trie.go)
//	words      8 bytes each: the keys of later words of main names, sorted
//	           by slug, ties in rank order (see wordShape)
//	wordHeavy  as heavy, for words
//	wordLists  as lists, of word key indexes
//	altIndex   8 bytes for each city with alternate names: its record, and
//	           the index of its first name in altLens; then a sentinel (see
//	           appendAltIndex)
//	altLens    uint16: the length of every alternate name, city by city
//	localIndex as altIndex, for each city with local names (see local.go)
//	locals     the local names: language, flags and name each
//	blob       the bytes of every string: per city record its slug, its
//	           name and its alternate names; per alternate-name record its
//	           slug; then areas and the source file's name
//
// The records and the words are the two indexes a query searches (see
// index): names first, then, for a query that lets later words match,
// words, skipping the cities already found. Each finds a prefix's range by
// binary search and ranks it by scanning; a heavy prefix, whose range is
// too long to scan, instead finds its precomputed list (built at import,
// see heavy.go) by hash lookup and merges it with the prefix's exact
// matches, which lie at the start of its range.
const (
	magic       = "CFSNAP\x00\x01"
	version     = 8
	recordSize  = 32
	areaSize    = 32
	heavySize   = 24
	wordKeySize = 8
)

// FormatVersion is the version of the snapshot file format that this build
// writes and reads: a copy of a snapshot elsewhere (MongoDB's, see package
// mongo) is usable here only when it carries this version.
const FormatVersion = version

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var errCorrupt = errors.New("corrupt snapshot")

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
	buf := make([]byte, headerSize)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return search.DatasetStats{}, err
	}
	h, err := decodeHeader(buf[:n])
	if err != nil {
		return search.DatasetStats{}, err
	}
	crc := crc32.New(crcTable)
	size, err := io.CopyBuffer(crc, f, make([]byte, 1<<20))
	if err != nil {
		return search.DatasetStats{}, err
	}
	if crc.Sum32() != h.crc {
		return search.DatasetStats{}, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	if err := h.validate(uint64(headerSize) + uint64(size)); err != nil {
		return search.DatasetStats{}, err
	}
	stats := h.stats()
	name := make([]byte, h.source.len)
	if _, err := f.ReadAt(name, int64(h.sections[secBlob].off)+int64(h.source.off)); err != nil {
		return search.DatasetStats{}, err
	}
	stats.Source.Name = string(name)
	return stats, nil
}

func parseSnapshot(data []byte) (*snapshot, error) {
	h, err := decodeHeader(data)
	if err != nil {
		return nil, err
	}
	if got := crc32.Checksum(data[headerSize:], crcTable); got != h.crc {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	if err := h.validate(uint64(len(data))); err != nil {
		return nil, err
	}
	s := &snapshot{
		data:      data,
		count:     int(h.records),
		cities:    int(h.cities),
		listCap:   int(h.listCap),
		scanLimit: int(h.scanLimit),
		records:   h.section(data, secRecords),
		blob:      h.section(data, secBlob),
		imported:  h.importedAt(),
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errCorrupt, fmt.Sprintf(format, args...))
	}
	blobLen := uint64(len(s.blob))
	str := func(ref blobRef) (string, error) {
		if !ref.in(blobLen) {
			return "", bad("string outside blob")
		}
		return aliasString(ref.bytes(s.blob)), nil
	}
	areas := h.section(data, secAreas)
	s.areas = make([]area, h.areas)
	for i := range s.areas {
		var f [4]string
		for j, ref := range readArea(areas[i*areaSize:]) {
			if f[j], err = str(ref); err != nil {
				return nil, err
			}
		}
		s.areas[i] = area{country: f[0], code: f[1], subcountry: f[2], region: f[3], subSlug: search.Slug(f[2]), regionSlug: search.Slug(f[3])}
	}
	cities := 0
	for i := range uint32(s.count) {
		r := s.rec(i)
		if err := r.validate(i, s.count, len(s.areas), blobLen); err != nil {
			return nil, err
		}
		if !r.isAlt() {
			cities++
		} else if s.isAlt(r.cityRec()) {
			return nil, bad("record %d names no city", i)
		}
	}
	if cities != s.cities {
		return nil, bad("%d cities, the header says %d", cities, s.cities)
	}
	if err := s.parseAltNames(h.section(data, secAltIndex), h.section(data, secAltLens), int(h.altCities), int(h.alts)); err != nil {
		return nil, err
	}
	if err := s.parseLocalNames(h.section(data, secLocalIndex), h.section(data, secLocals)); err != nil {
		return nil, err
	}
	for i := range uint32(s.count) {
		if r := s.rec(i); r.isAlt() && uint64(r.altName()) > s.altAt[r.cityRec()]&math.MaxUint32 {
			return nil, bad("record %d names an alternate name its city does not have", i)
		}
	}
	if s.trie, err = parseTrie(h.section(data, secTrie), s.count); err != nil {
		return nil, err
	}
	s.names = index{s: s, n: s.count}
	nWords := int(h.words)
	s.words = index{s: s, n: nWords, words: true, keys: h.section(data, secWords), shape: h.wordShape}
	for k := range uint32(nWords) {
		rec, off := s.words.wordRec(k)
		if int(rec) >= s.count || s.isAlt(rec) || int(off) >= s.slugLen(rec) || off == 0 || s.words.rank(k) >= uint64(nWords) {
			return nil, bad("word key %d out of bounds", k)
		}
	}
	if err := s.names.parseHeavy(h.section(data, secHeavy), h.section(data, secLists), int(h.heavy)); err != nil {
		return nil, err
	}
	if err := s.words.parseHeavy(h.section(data, secWordHeavy), h.section(data, secWordLists), int(h.wordHeavy)); err != nil {
		return nil, err
	}
	if s.source.Name, err = str(h.source); err != nil {
		return nil, err
	}
	s.source.Name = strings.Clone(s.source.Name) // kept by stats long after
	s.source.Size = int64(h.sourceSize)
	// The three read every key once, most of the opening's time: the
	// names' beside the others.
	var grams sync.WaitGroup
	grams.Go(func() { s.names.grams = buildGrams(&s.names) })
	s.words.grams = buildGrams(&s.words)
	s.kids = s.shortChildren()
	grams.Wait()
	s.placesReady = make(chan struct{})
	s.aidsBuilt = make(chan struct{})
	go func() { // the data is Go memory: nothing to wait for before it goes
		defer close(s.aidsBuilt)
		collapse(data)
		s.popNodes.Store(buildPopNodes(s))
		s.jumps.Store(buildJumps(s.trie))
	}()
	return s, nil
}

// parseAltNames reads the alternate names of the cities that have some:
// each city's follow its name in the blob, their lengths in lens. The
// header has checked the sections' sizes.
func (s *snapshot) parseAltNames(index, lens []byte, nCities, nAlts int) error {
	if nCities == 0 {
		return nil
	}
	s.altNames = make([]string, 0, nAlts)
	s.altAt = make(map[uint32]uint64, nCities)
	prev := -1
	for i := range nCities {
		rec, first, next := readAltIndex(index, i)
		if int(rec) <= prev || int(rec) >= s.count || s.isAlt(rec) ||
			!s.rec(rec).hasAltNames() || int(first) != len(s.altNames) || first >= next || int(next) > nAlts {
			return fmt.Errorf("%w: alternate names of city %d", errCorrupt, i)
		}
		prev = int(rec)
		r := s.rec(rec)
		off := uint64(r.slugOff()) + uint64(r.slugLen()) + uint64(r.nameLen())
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
		if _, ok := s.altAt[i]; s.rec(i).hasAltNames() && !ok {
			return fmt.Errorf("%w: record %d has no alternate names", errCorrupt, i)
		}
	}
	return nil
}

// parseHeavy reads the n heavy prefixes of x and their lists; the header
// has checked the size of heavy.
func (x *index) parseHeavy(heavy, lists []byte, n int) error {
	blob := x.s.blob
	x.heavy = newHeavyPrefixes(n)
	for i := range n {
		h := readHeavyRef(heavy[i*heavySize:])
		if err := h.validate(i, uint64(len(blob)), x.n, len(lists)); err != nil {
			return err
		}
		list := lists[uint64(h.listOff)*4 : (uint64(h.listOff)+uint64(h.listLen))*4]
		for j := 0; j < len(list); j += 4 {
			if int(le32(list, j)) >= x.n {
				return fmt.Errorf("%w: heavy list %d out of bounds", errCorrupt, i)
			}
		}
		x.heavy.set(aliasString(h.prefix.bytes(blob)), heavyEntry{exactLo: h.exactLo, exactHi: h.exactHi, list: list})
	}
	return nil
}
