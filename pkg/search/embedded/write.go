package embedded

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

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
