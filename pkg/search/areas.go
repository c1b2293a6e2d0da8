package search

import "unsafe"

// AreaNumbers numbers the areas of cities (country code, country,
// subcountry and region: a Key's all but its slug) 0, 1, … in the order
// they are first met, as the import's stages do to keep an area once
// rather than per city. Files list a country's cities by name rather than
// by region, so that most cities are not in the area of the one before:
// the areas met recently are remembered by the addresses of their strings,
// which the readers intern, and most cities are numbered without hashing
// the strings' bytes. The zero value is ready to use.
type AreaNumbers struct {
	byArea map[cityArea]uint32
	recent [recentAreas]recentArea
}

// cityArea is the area of a city.
type cityArea struct{ countryCode, country, subcountry, region string }

// recentAreas is how many areas AreaNumbers remembers by address: a few
// times the regions of a large country.
const (
	recentBits  = 10
	recentAreas = 1 << recentBits
)

// recentArea is an area met recently: the addresses and lengths of its
// strings (whose bytes the addresses keep alive, so that equal addresses
// and lengths are equal strings) and its number.
type recentArea struct {
	data [4]*byte
	lens [4]int
	n    uint32
}

// Number returns the number of c's area, and whether c is the first city
// met in it.
func (a *AreaNumbers) Number(c *City) (n uint32, first bool) {
	var r recentArea
	var h uint64
	for i, s := range [4]string{c.CountryCode, c.Country, c.Subcountry, c.Region} {
		if len(s) > 0 { // an empty string's address is any
			r.data[i], r.lens[i] = unsafe.StringData(s), len(s)
		}
		h = (h ^ uint64(uintptr(unsafe.Pointer(r.data[i])))) * 0x9e3779b97f4a7c15
	}
	recent := &a.recent[h>>(64-recentBits)]
	// A slot never written holds the area of empty strings, which is not
	// remembered: its number may not be 0.
	if recent.data == r.data && recent.lens == r.lens && r.data != [4]*byte{} {
		return recent.n, false
	}
	if a.byArea == nil {
		a.byArea = make(map[cityArea]uint32)
	}
	ka := cityArea{c.CountryCode, c.Country, c.Subcountry, c.Region}
	n, ok := a.byArea[ka]
	if !ok {
		n = uint32(len(a.byArea))
		a.byArea[ka] = n
	}
	r.n = n
	*recent = r
	return n, !ok
}
