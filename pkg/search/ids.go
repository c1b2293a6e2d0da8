package search

import "strconv"

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
// they agree.
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
	// taken holds each derived id given, with the full hash of the Key
	// it was given to: a city with the same Key (a duplicate, which the
	// store keeps once) gets the same id.
	taken map[uint32]uint64
}

// derive sets c.ID when it has none.
func (d *idDeriver) derive(c *City) {
	if c.ID != 0 {
		return
	}
	if d.taken == nil {
		d.taken = make(map[uint32]uint64)
	}
	h := keyHash(c)
	off := uint32(h % DerivedIDBase)
	for {
		id := DerivedIDBase + off
		owner, used := d.taken[id]
		if !used {
			d.taken[id] = h
		}
		if !used || owner == h {
			c.ID = id
			return
		}
		off = (off + 1) % DerivedIDBase
	}
}

// keyHash is the FNV-1a 64 hash of c's Key, its fields each followed by a
// zero byte.
func keyHash(c *City) uint64 {
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
