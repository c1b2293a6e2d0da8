package search

import (
	"math/bits"
	"strconv"
)

// Ids of cities (see docs/api.md, "Ids"). A city keeps the id its source
// gives it (the GeoNames id of GeoNames rows and okfn rows); a city
// without one (a MaxMind row) gets a derived id at Load, DerivedIDBase or
// above, so that no GeoNames id (below 2^31) is ever one, and a form that
// stored the id of a city finds the same city when the same file is
// imported again:
//
//	derived = DerivedIDBase + (FNV-1a 64 of the city's Key) mod 2^31
//
// the Key's fields (slug, country code, country, subcountry, region) each
// followed by a zero byte. Two Keys whose hashes meet (about two thousand
// of MaxMind's three million cities) are told apart in the order of the
// file: the later takes the next free id after its hash, wrapping within
// the derived range. Every store derives ids in the same LoadReader, so
// they agree; an import derives them before the Load with DerivedIDs, as
// LoadReader would.
const DerivedIDBase = 1 << 31

// MaxID is the largest id a city can have.
const MaxID = 1<<32 - 1

// ParseID reads a city id as people and URLs write it: a positive whole
// number in decimal, at most MaxID, without sign or spaces. Its error is
// an *InvalidError about field "id".
func ParseID(s string) (uint32, error) {
	ok := s != "" && len(s) <= 10
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] >= '0' && s[i] <= '9'
	}
	var n uint64
	if ok {
		n, _ = strconv.ParseUint(s, 10, 64)
	}
	if !ok || n == 0 || n > MaxID {
		return 0, invalid("id", "Invalid id %q: use a positive whole number up to %d", clip(s), uint64(MaxID))
	}
	return uint32(n), nil
}

// idDeriver gives the cities of one Load without an id their derived id
// (see DerivedIDBase), in the order they come.
type idDeriver struct {
	ids    DerivedIDs
	hashes []uint64 // of the cities being derived (see deriveAll)
}

// lookAhead is how many cities deriveAll looks up at once: the slots of
// its table are cache misses, and misses that do not wait on each other
// overlap, as many as fit in the caches.
const lookAhead = 256

// deriveAll gives each of cities without an id its derived id, in order,
// touching the slots where their ids go before any is claimed.
func (d *idDeriver) deriveAll(cities []City) {
	for i := 0; i < len(cities); i += lookAhead {
		group := cities[i:min(i+lookAhead, len(cities))]
		d.hashes = d.hashes[:0]
		for j := range group {
			var h uint64
			if group[j].ID == 0 {
				h = KeyHash(&group[j])
			}
			d.hashes = append(d.hashes, h)
		}
		// A loop of its own: a few instructions a slot, so that the
		// processor has many loads in flight.
		for _, h := range d.hashes {
			d.ids.Touch(h)
		}
		for j := range group {
			if group[j].ID == 0 {
				group[j].ID, _ = d.ids.Derive(d.hashes[j])
			}
		}
	}
}

// DerivedIDs gives derived ids (see DerivedIDBase) as LoadReader does, to
// a reader that gives them before the Load: the cities it hands over then
// have their ids, and LoadReader derives none. An import does, so that its
// table of duplicates is this one (see Derive's value) and each Key is
// hashed and looked up once. The ids are the same when it derives them
// in the order in which it hands the cities over, for every city that has
// none, with the Key it has when handed over; a duplicate that it drops
// can be derived too, as it gets the id of the city of its Key.
type DerivedIDs struct {
	// taken holds each derived id given, with the full hash of the Key
	// it was given to: a city with the same Key (a duplicate, which the
	// store keeps once) gets the same id.
	taken idTable
}

// Derive returns the derived id of a city without an id whose Key hashes
// to h (see KeyHash), claiming it when h is new, and a value held with
// that id for the caller, 0 until it is set; the pointer is valid until
// the next Derive.
func (d *DerivedIDs) Derive(h uint64) (uint32, *int32) {
	off := uint32(h % DerivedIDBase)
	for {
		id := DerivedIDBase + off
		if s := d.taken.claim(id, h); s.hash == h {
			return id, &s.value
		}
		off = (off + 1) % DerivedIDBase
	}
}

// Touch reads where the probe of Derive(h) starts, so that a Derive of h
// soon after finds it in the cache.
func (d *DerivedIDs) Touch(h uint64) { d.taken.touch(DerivedIDBase + uint32(h%DerivedIDBase)) }

// idTable is a set of ids, each with the hash it was given to, in one flat
// slice (open addressing, linear probing): a Load gives millions of ids,
// and a Go map that size costs several cache misses an id.
type idTable struct {
	slots []idSlot
	used  int
	shift uint   // 64 - log2(len(slots))
	sink  uint32 // what touch read, so that its loads stay
}

// idSlot is an id, its hash and the value that DerivedIDs.Derive hands
// out with it; id 0 (never derived) marks an empty slot.
type idSlot struct {
	id    uint32
	value int32
	hash  uint64
}

// claim gives id to hash h unless it is taken, and returns the slot that
// holds it, valid until the next claim.
func (t *idTable) claim(id uint32, h uint64) *idSlot {
	if 4*(t.used+1) > 3*len(t.slots) {
		t.grow()
	}
	s := t.find(id)
	if s.id != id {
		*s = idSlot{id: id, hash: h}
		t.used++
	}
	return s
}

// touch reads the slot where the probe of id starts, so that a claim of id
// soon after finds it in the cache.
func (t *idTable) touch(id uint32) {
	if len(t.slots) > 0 {
		t.sink += t.slots[t.slot(id)].id
	}
}

// slot is where the probe of id starts.
func (t *idTable) slot(id uint32) int { return int((uint64(id) * 0x9e3779b97f4a7c15) >> t.shift) }

// find returns the slot holding id, or the empty one where it goes.
func (t *idTable) find(id uint32) *idSlot {
	mask := len(t.slots) - 1
	for i := t.slot(id); ; i = (i + 1) & mask {
		if s := &t.slots[i]; s.id == id || s.id == 0 {
			return s
		}
	}
}

// grow doubles the table (or makes its first one) and moves every slot.
func (t *idTable) grow() {
	old := t.slots
	n := max(1<<12, 2*len(old))
	t.slots = make([]idSlot, n)
	t.shift = 64 - uint(bits.TrailingZeros(uint(n)))
	for _, s := range old {
		if s.id != 0 {
			*t.find(s.id) = s
		}
	}
}

// KeyHash is the hash of c's Key from which its derived id comes: its
// FNV-1a 64, the fields each followed by a zero byte (see DerivedIDBase).
func KeyHash(c *City) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, f := range [...]string{c.Slug, c.CountryCode, c.Country, c.Subcountry, c.Region} {
		for i := 0; i < len(f); i++ {
			h = (h ^ uint64(f[i])) * prime
		}
		h *= prime // the zero byte: h ^ 0 is h
	}
	return h
}
