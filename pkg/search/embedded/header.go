package embedded

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Header field offsets (see header).
const (
	hVersion    = 8  // uint32
	hListCap    = 12 // uint32
	hRecords    = 16 // uint32
	hCities     = 20 // uint32
	hAreas      = 24 // uint32
	hScanLimit  = 28 // uint32
	hHeavy      = 32 // uint32
	hWordHeavy  = 36 // uint32
	hWords      = 40 // uint32
	hWordShape  = 44 // uint8 record bits, uint8 offset bits
	hAltCities  = 48 // uint32
	hAlts       = 52 // uint32
	hCRC        = 56 // uint32
	hSourceOff  = 60 // uint32
	hSourceLen  = 64 // uint32
	hImported   = 72 // int64
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
	secLocalIndex
	secLocals
	secBlob
	numSections
)

// header is the first headerSize bytes of a snapshot file: what it holds
// and where. put is the only writer of its layout and decodeHeader the
// only reader; validate is every check of the header against itself and
// the file's size, which the sections' contents may then rely on.
type header struct {
	listCap, scanLimit uint32 // what the heavy prefixes were built with
	records            uint32 // the keys of whole names
	cities             uint32 // the records of main names
	areas              uint32
	heavy, wordHeavy   uint32 // heavy prefixes of names, of words
	words              uint32 // the keys of later words
	wordShape          wordShape
	altCities, alts    uint32 // cities with alternate names, and those names
	crc                uint32 // CRC-32C of everything after the header
	source             blobRef
	sourceSize         uint64
	imported           int64 // Unix nanoseconds; 0 for unknown
	sections           [numSections]section
}

// section is where one section lies in the file.
type section struct{ off, len uint64 }

// put writes h, after the magic and version, to b[:headerSize].
func (h *header) put(b []byte) {
	b = b[:headerSize]
	clear(b)
	copy(b, magic)
	le := binary.LittleEndian
	for _, f := range [...]struct {
		off int
		v   uint32
	}{
		{hVersion, version}, {hListCap, h.listCap}, {hRecords, h.records}, {hCities, h.cities},
		{hAreas, h.areas}, {hScanLimit, h.scanLimit}, {hHeavy, h.heavy}, {hWordHeavy, h.wordHeavy},
		{hWords, h.words}, {hAltCities, h.altCities}, {hAlts, h.alts}, {hCRC, h.crc},
		{hSourceOff, h.source.off}, {hSourceLen, h.source.len},
	} {
		le.PutUint32(b[f.off:], f.v)
	}
	b[hWordShape], b[hWordShape+1] = byte(h.wordShape.recBits), byte(h.wordShape.offBits)
	le.PutUint64(b[hImported:], uint64(h.imported))
	le.PutUint64(b[hSourceSize:], h.sourceSize)
	for i, s := range h.sections {
		le.PutUint64(b[hSections+16*i:], s.off)
		le.PutUint64(b[hSections+16*i+8:], s.len)
	}
}

// decodeHeader reads the header at the start of b, which may be shorter
// than a header: it is then refused as cut short, once its magic and
// version are known to be right.
func decodeHeader(b []byte) (header, error) {
	if len(b) < hVersion+4 || string(b[:len(magic)]) != magic {
		return header{}, fmt.Errorf("%w: not a cityfinder snapshot", errCorrupt)
	}
	if v := le32(b, hVersion); v != version {
		return header{}, fmt.Errorf("%w: version %d, this build reads %d: import the dataset again", errCorrupt, v, version)
	}
	if len(b) < headerSize {
		return header{}, fmt.Errorf("%w: header cut short", errCorrupt)
	}
	h := header{
		listCap: le32(b, hListCap), scanLimit: le32(b, hScanLimit),
		records: le32(b, hRecords), cities: le32(b, hCities), areas: le32(b, hAreas),
		heavy: le32(b, hHeavy), wordHeavy: le32(b, hWordHeavy), words: le32(b, hWords),
		wordShape: wordShape{recBits: uint(b[hWordShape]), offBits: uint(b[hWordShape+1])},
		altCities: le32(b, hAltCities), alts: le32(b, hAlts), crc: le32(b, hCRC),
		source:     blobRef{off: le32(b, hSourceOff), len: le32(b, hSourceLen)},
		sourceSize: le64(b, hSourceSize), imported: int64(le64(b, hImported)),
	}
	for i := range h.sections {
		h.sections[i] = section{off: le64(b, hSections+16*i), len: le64(b, hSections+16*i+8)}
	}
	return h, nil
}

// validate checks h against itself and the size of its file: every
// section lies in the file, each fixed-size section holds as many entries
// as h counts, and the source's name lies in the blob.
func (h *header) validate(size uint64) error {
	for i, s := range h.sections {
		if s.off > size || s.len > size-s.off {
			return fmt.Errorf("%w: section %d [%d,+%d) outside file of %d bytes", errCorrupt, i, s.off, s.len, size)
		}
	}
	bad := func(what string) error { return fmt.Errorf("%w: %s", errCorrupt, what) }
	if h.sections[secRecords].len != uint64(h.records)*recordSize || h.sections[secAreas].len != uint64(h.areas)*areaSize ||
		h.records > rankMask || h.cities > h.records {
		return bad("section sizes")
	}
	if h.sections[secWords].len != uint64(h.words)*wordKeySize || !h.wordShape.holds(int(h.records), int(h.words)) {
		return bad("words section")
	}
	if h.sections[secAltIndex].len != (uint64(h.altCities)+1)*altIndexSize || h.sections[secAltLens].len != uint64(h.alts)*2 {
		return bad("alternate names sections")
	}
	if h.sections[secHeavy].len != uint64(h.heavy)*heavySize || h.sections[secWordHeavy].len != uint64(h.wordHeavy)*heavySize {
		return bad("heavy section")
	}
	if !h.source.in(h.sections[secBlob].len) {
		return bad("source name outside the blob")
	}
	return nil
}

// section returns section i of data, the file whose header h is, once
// h is valid.
func (h *header) section(data []byte, i int) []byte {
	s := h.sections[i]
	return data[s.off : s.off+s.len : s.off+s.len]
}

// importedAt returns when the snapshot was imported; zero for unknown.
func (h *header) importedAt() time.Time {
	if h.imported == 0 {
		return time.Time{}
	}
	return time.Unix(0, h.imported)
}

// stats describes the dataset, but for the source's name, which is in
// the blob.
func (h *header) stats() search.DatasetStats {
	return search.DatasetStats{Cities: int(h.cities), Imported: h.importedAt(), Source: search.Source{Size: int64(h.sourceSize)}}
}
