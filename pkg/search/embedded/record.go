package embedded

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
)

// The layouts of the entries of a snapshot's sections (see format.go).
// Each has one writer (put, or append for a section built by appending)
// and one reader: a view whose accessors read a field in place, or a
// decode function; what queries read per key is read in place, never
// decoded into a struct first.

func le16(b []byte, off int) uint16 { return binary.LittleEndian.Uint16(b[off:]) }
func le32(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }
func le64(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }

// Record field offsets: only recordView and the put methods use them.
const (
	rSlugOff = 0  // uint32 into blob
	rSlugLen = 4  // uint16
	rNameLen = 6  // uint16; the name follows the slug in the blob (0 for an alternate name's record)
	rArea    = 8  // uint32
	rID      = 12 // uint32: a city's id; an alternate name's record: its city's record (see recordView.cityRec)
	rPop     = 16 // uint32, 0 = unknown
	rLat     = 20 // int32, 1e-7 degrees, noLocation when unknown; an alternate name's record: which name (see recordView.altName)
	rLon     = 24 // int32, 1e-7 degrees
	rRank    = 28 // uint32: the rank (see assignRanks) in the low rankBits, and the flags
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

const degreeScale = 1e7

// cityRecord is the record of a city's main name, field by field, as the
// build writes it.
type cityRecord struct {
	// slugOff is where the city's strings start in the blob: its slug,
	// then its name, then its alternate names.
	slugOff          uint32
	slugLen, nameLen uint16
	area             uint32 // index into the areas
	id               uint32
	pop              uint32 // 0 = unknown
	lat, lon         int32  // 1e-7 degrees (see fixedDegrees); lat is noLocation when unknown
	// flags are flagMulti and flagAltNames; the rank is added in place
	// once the records are sorted (see recordView.addRank).
	flags uint32
}

// put writes r to b[:recordSize].
func (r *cityRecord) put(b []byte) {
	b = b[:recordSize]
	le := binary.LittleEndian
	le.PutUint32(b[rSlugOff:], r.slugOff)
	le.PutUint16(b[rSlugLen:], r.slugLen)
	le.PutUint16(b[rNameLen:], r.nameLen)
	le.PutUint32(b[rArea:], r.area)
	le.PutUint32(b[rID:], r.id)
	le.PutUint32(b[rPop:], r.pop)
	le.PutUint32(b[rLat:], uint32(r.lat))
	le.PutUint32(b[rLon:], uint32(r.lon))
	le.PutUint32(b[rRank:], r.flags)
}

// altRecord is the record of the key of one of a city's alternate names.
// It copies its city's area and population, by which queries filter and
// rank each key, and points to its city's record for the rest.
type altRecord struct {
	slugOff   uint32 // the key's slug in the blob
	slugLen   uint16
	area, pop uint32 // its city's
	city      uint32 // its city's record
	name      uint32 // which of its city's names: AltNames[name-1]
}

// put writes r to b[:recordSize].
func (r *altRecord) put(b []byte) {
	b = b[:recordSize]
	clear(b)
	le := binary.LittleEndian
	le.PutUint32(b[rSlugOff:], r.slugOff)
	le.PutUint16(b[rSlugLen:], r.slugLen)
	le.PutUint32(b[rArea:], r.area)
	le.PutUint32(b[rID:], r.city)
	le.PutUint32(b[rPop:], r.pop)
	le.PutUint32(b[rLat:], r.name)
	le.PutUint32(b[rRank:], flagAlt|flagMulti)
}

// recordView is one record of a snapshot (recordSize bytes), read in
// place: each accessor reads one field. The accessors of one kind of
// record (city or alternate name, see isAlt) say so.
type recordView []byte

func (r recordView) slugOff() uint32 { return le32(r, rSlugOff) }
func (r recordView) slugLen() uint32 { return uint32(le16(r, rSlugLen)) }

// nameLen is the length of a city's name, which follows its slug; 0 for
// an alternate name's record.
func (r recordView) nameLen() uint32 { return uint32(le16(r, rNameLen)) }

// area is the index of the city's area; an alternate name's record has
// its city's.
func (r recordView) area() uint32 { return le32(r, rArea) }

// pop is the city's population, 0 for unknown; an alternate name's
// record has its city's.
func (r recordView) pop() uint32 { return le32(r, rPop) }

// id is a city record's city id.
func (r recordView) id() uint32 { return le32(r, rID) }

// cityRec is an alternate name's record's city: the index of its record.
func (r recordView) cityRec() uint32 { return le32(r, rID) }

// altName is which of its city's names an alternate name's record is the
// key of: AltNames[altName-1].
func (r recordView) altName() uint32 { return le32(r, rLat) }

// location is a city record's coordinates, in degrees; ok is false when
// it has none.
func (r recordView) location() (lat, lon float64, ok bool) {
	l := int32(le32(r, rLat))
	if l == noLocation {
		return 0, 0, false
	}
	return float64(l) / degreeScale, float64(int32(le32(r, rLon))) / degreeScale, true
}

// rank is the record's position in the base order of the names index
// (see snapshot.rank).
func (r recordView) rank() uint32      { return le32(r, rRank) & rankMask }
func (r recordView) isAlt() bool       { return le32(r, rRank)&flagAlt != 0 }
func (r recordView) multi() bool       { return le32(r, rRank)&flagMulti != 0 }
func (r recordView) hasAltNames() bool { return le32(r, rRank)&flagAltNames != 0 }

// addRank sets the rank of a record written without one.
func (r recordView) addRank(rank uint32) {
	binary.LittleEndian.PutUint32(r[rRank:], le32(r, rRank)|rank)
}

// city decodes a city record.
func (r recordView) city() cityRecord {
	return cityRecord{
		slugOff: r.slugOff(), slugLen: le16(r, rSlugLen), nameLen: le16(r, rNameLen),
		area: r.area(), id: r.id(), pop: r.pop(),
		lat: int32(le32(r, rLat)), lon: int32(le32(r, rLon)), flags: le32(r, rRank) &^ rankMask,
	}
}

// validate checks the fields of record i of a snapshot of count records,
// nAreas areas and a blob of blobLen bytes that a reader indexes with:
// its strings lie in the blob, its area and rank are in range, and an
// alternate name's record names a record and a name. (That the record
// it names is a city with that name is the snapshot's to check.)
func (r recordView) validate(i uint32, count, nAreas int, blobLen uint64) error {
	if uint64(r.slugOff())+uint64(r.slugLen())+uint64(r.nameLen()) > blobLen || int(r.area()) >= nAreas || r.rank() >= uint32(count) {
		return fmt.Errorf("%w: record %d out of bounds", errCorrupt, i)
	}
	if r.isAlt() && (int(r.cityRec()) >= count || r.altName() == 0) {
		return fmt.Errorf("%w: record %d names no city", errCorrupt, i)
	}
	return nil
}

// blobRef is a string in the blob: its offset and length.
type blobRef struct{ off, len uint32 }

func (b blobRef) in(blobLen uint64) bool { return uint64(b.off)+uint64(b.len) <= blobLen }

// bytes returns the string's bytes in blob, in which it lies.
func (b blobRef) bytes(blob []byte) []byte { return blob[uint64(b.off) : uint64(b.off)+uint64(b.len)] }

// An area is areaSize bytes: the blobRef of its country, code, subcountry
// and region, as (offset, length) uint32 pairs.

func appendArea(dst []byte, fields [4]blobRef) []byte {
	for _, f := range fields {
		dst = binary.LittleEndian.AppendUint32(dst, f.off)
		dst = binary.LittleEndian.AppendUint32(dst, f.len)
	}
	return dst
}

func readArea(b []byte) (fields [4]blobRef) {
	for j := range fields {
		fields[j] = blobRef{off: le32(b, j*8), len: le32(b, j*8+4)}
	}
	return fields
}

// heavyRef is an entry of a heavy section: a heavy prefix, the range of
// its exact matches and where its list is. It is heavySize bytes of
// uint32s in field order.
type heavyRef struct {
	prefix           blobRef // a prefix of a key's slug
	exactLo, exactHi uint32  // the keys whose slug is the prefix
	listOff, listLen uint32  // its list, in uint32s of the lists section
}

func appendHeavyRef(dst []byte, h heavyRef) []byte {
	for _, v := range [...]uint32{h.prefix.off, h.prefix.len, h.exactLo, h.exactHi, h.listOff, h.listLen} {
		dst = binary.LittleEndian.AppendUint32(dst, v)
	}
	return dst
}

func readHeavyRef(b []byte) heavyRef {
	return heavyRef{
		prefix:  blobRef{off: le32(b, 0), len: le32(b, 4)},
		exactLo: le32(b, 8), exactHi: le32(b, 12), listOff: le32(b, 16), listLen: le32(b, 20),
	}
}

// validate checks that h's prefix lies in a blob of blobLen bytes, its
// exact matches among keys keys, and its list in a lists section of
// listsLen bytes.
func (h heavyRef) validate(i int, blobLen uint64, keys int, listsLen int) error {
	if !h.prefix.in(blobLen) || h.exactLo > h.exactHi || int(h.exactHi) > keys || (uint64(h.listOff)+uint64(h.listLen))*4 > uint64(listsLen) {
		return fmt.Errorf("%w: heavy prefix %d out of bounds", errCorrupt, i)
	}
	return nil
}

// An entry of the altIndex section is altIndexSize bytes: a city's
// record, and the index in altLens of its first alternate name (uint32
// each). A last entry, of record math.MaxUint32, ends the last city's
// names.
const altIndexSize = 8

func appendAltIndex(dst []byte, rec, first uint32) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, rec)
	return binary.LittleEndian.AppendUint32(dst, first)
}

// readAltIndex returns entry i of an altIndex section, and where the
// next entry's names start.
func readAltIndex(b []byte, i int) (rec, first, next uint32) {
	at := i * altIndexSize
	return le32(b, at), le32(b, at+4), le32(b, at+altIndexSize+4)
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

// pack is a word key of this shape.
func (w wordShape) pack(rank, rec uint32, off uint16, multi bool) uint64 {
	v := uint64(rank)<<w.rankShift() | uint64(rec)<<w.recShift() | uint64(off)<<w.offShift()
	if multi {
		v |= 1
	}
	return v
}

// rec and off read a word key of this shape: the record of its city and
// the offset of its word in the city's slug.
func (w wordShape) rec(key uint64) uint32 { return uint32(key >> w.recShift() & (1<<w.recBits - 1)) }
func (w wordShape) off(key uint64) uint32 { return uint32(key >> w.offShift() & (1<<w.offBits - 1)) }

// holds reports whether keys of this shape hold nWords ranks and the
// indexes of records records.
func (w wordShape) holds(records, nWords int) bool {
	if w.recBits > 32 || w.offBits > 16 || (records > 0 && bits.Len(uint(records-1)) > int(w.recBits)) {
		return false
	}
	return int(w.rankShift())+bits.Len(uint(max(nWords-1, 0))) <= 64
}

// fixedDegrees stores degrees as an int32 count of 1e-7 degrees, enough for
// the 7 decimals of the MaxMind file.
func fixedDegrees(v float64) int32 {
	return int32(math.Round(v * degreeScale))
}
