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
		var refs [4]blobRef
		for j, f := range [4]string{a.country, a.code, a.subcountry, a.region} {
			refs[j] = blobRef{off: uint32(len(blob)), len: uint32(len(f))}
			blob = append(blob, f...)
		}
		areaRefs = appendArea(areaRefs, refs)
	}
	sourceOff := len(blob)
	blob = append(blob, b.source.Name...)
	if uint64(len(blob)) > math.MaxUint32 {
		return fmt.Errorf("dataset too large: %d bytes of strings", len(blob))
	}
	heavyRefs, lists := heavySections(s.heavy)
	wordHeavyRefs, wordLists := heavySections(s.wordHeavy)

	h := header{
		listCap: uint32(b.listCap), scanLimit: uint32(b.scanLimit),
		records: uint32(s.count), cities: uint32(s.cities), areas: uint32(len(s.areas)),
		heavy: uint32(len(s.heavy)), wordHeavy: uint32(len(s.wordHeavy)),
		words: uint32(s.snapshot.words.n), wordShape: s.snapshot.words.shape,
		altCities: uint32(len(s.altIndex)/altIndexSize - 1), alts: uint32(len(s.altLens) / 2),
		source:     blobRef{off: uint32(sourceOff), len: uint32(len(b.source.Name))},
		sourceSize: uint64(max(b.source.Size, 0)),
		imported:   time.Now().UnixNano(),
	}
	var secs [numSections][]byte
	secs[secRecords], secs[secAreas], secs[secHeavy], secs[secLists] = s.records, areaRefs, heavyRefs, lists
	secs[secTrie], secs[secWords], secs[secWordHeavy], secs[secWordLists] = s.trie, s.wordSec, wordHeavyRefs, wordLists
	secs[secAltIndex], secs[secAltLens], secs[secBlob] = s.altIndex, s.altLens, blob
	secs[secLocalIndex], secs[secLocals] = s.localIndex, s.locals
	off := uint64(headerSize)
	for i, sec := range secs {
		h.sections[i] = section{off: off, len: uint64(len(sec))}
		off += uint64(len(sec))
	}

	// The header goes first with no checksum, then again with it.
	var hdr [headerSize]byte
	h.put(hdr[:])
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
	h.crc = crc.Sum32()
	h.put(hdr[:])
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
		refs = appendHeavyRef(refs, heavyRef{
			prefix:  h.prefix,
			exactLo: h.exactLo, exactHi: h.exactHi,
			listOff: uint32(len(lists) / 4), listLen: uint32(len(h.list)),
		})
		for _, i := range h.list {
			lists = binary.LittleEndian.AppendUint32(lists, i)
		}
	}
	return refs, lists
}
