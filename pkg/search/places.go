package search

import (
	"slices"
	"strings"
	"sync"

	"github.com/biter777/countries"
)

// countryAliases are the other names people give a country after a city
// ("cambridge uk", "paris, texas, usa", "dubai uae"), beside its ISO
// alpha-2 and alpha-3 codes, its ISO 3166 name and its short name (see
// CountryName). Only names that mean one country are listed: "america" is
// the United States, as in "springfield, america", but "congo" stays the
// Republic of the Congo that ISO calls so, and England, Scotland, Wales
// and Northern Ireland are divisions of the United Kingdom (see
// regionCodes), not countries.
var countryAliases = map[string]string{
	"u-s": "us", "u-s-a": "us", "america": "us", "united states of america": "us",
	"uk": "gb", "u-k": "gb", "britain": "gb", "great britain": "gb",
	"uae": "ae", "emirates": "ae",
	"holland":        "nl",
	"korea":          "kr",
	"czech republic": "cz",
	"ivory coast":    "ci",
	"burma":          "mm",
	"swaziland":      "sz",
	"macedonia":      "mk",
	"vatican":        "va",
	"drc":            "cd",
}

// place is what a qualifier may name: a country, or a first-level
// division of one.
type place struct {
	country string // lower-case ISO 3166 alpha-2 code
	// regions are the folded forms a city's Subcountry or Region takes in
	// the division (see Query.Regions): its code and its name; none for
	// a country.
	regions []string
}

// placeName is one way to write a place, folded.
type placeName struct {
	slug  string
	code  bool // a code is matched whole, never by its start
	place place
}

// placeIndex knows the countries and the divisions of regionCodes by every
// name of theirs, sorted by slug, so that the places a typed qualifier
// starts are found by binary search rather than by a scan per keystroke.
type placeIndex struct {
	names []placeName
}

// places is the index, built the first time a qualifier is read.
var places = sync.OnceValue(newPlaceIndex)

func newPlaceIndex() *placeIndex {
	ix := &placeIndex{}
	for _, c := range countries.All() {
		code := strings.ToLower(c.Alpha2())
		if CountryName(code) == "" {
			continue
		}
		p := place{country: code}
		ix.add(code, true, p)
		ix.add(c.Alpha3(), true, p)
		ix.add(CountryName(code), false, p)
		name := c.String()
		if i := strings.Index(name, " ("); i > 0 {
			name = name[:i]
		}
		ix.add(name, false, p)
	}
	for alias, code := range countryAliases {
		ix.add(alias, letters(Slug(alias)) <= 3, place{country: code})
	}
	for _, table := range []map[string]string{regionCodes, regionAbbreviations} {
		for country, list := range table {
			for _, entry := range strings.Split(list, "|") {
				code, name, _ := strings.Cut(entry, " ")
				p := place{country: country, regions: []string{Slug(code), Slug(name)}}
				ix.add(code, true, p)
				ix.add(name, false, p)
			}
		}
	}
	slices.SortFunc(ix.names, func(a, b placeName) int { return strings.Compare(a.slug, b.slug) })
	ix.names = slices.CompactFunc(ix.names, func(a, b placeName) bool {
		return a.slug == b.slug && a.code == b.code && a.place.country == b.place.country && slices.Equal(a.place.regions, b.place.regions)
	})
	return ix
}

func (ix *placeIndex) add(name string, code bool, p place) {
	if s := Slug(name); s != "" {
		ix.names = append(ix.names, placeName{slug: s, code: code, place: p})
	}
}

// minPrefixLetters is how many letters a qualifier needs to be read as the
// start of a name ("tex", "mass"): two letters are a code ("ma", "tx"),
// and the start of a name only when they are no code at all ("te").
const minPrefixLetters = 3

// lookup appends the places that the folded qualifier part names: those
// with a code or name equal to it (exact reports whether there are some),
// and those whose name starts with it (see minPrefixLetters). One letter
// names nothing: it is a word being typed.
func (ix *placeIndex) lookup(dst []place, part string) (_ []place, exact bool) {
	n := letters(part)
	if n < 2 {
		return dst, false
	}
	i, _ := slices.BinarySearchFunc(ix.names, part, func(e placeName, t string) int { return strings.Compare(e.slug, t) })
	for j := i; j < len(ix.names) && ix.names[j].slug == part; j++ {
		dst, exact = append(dst, ix.names[j].place), true
	}
	if n < minPrefixLetters && exact {
		return dst, exact
	}
	for j := i; j < len(ix.names) && strings.HasPrefix(ix.names[j].slug, part); j++ {
		if e := ix.names[j]; !e.code && e.slug != part {
			dst = append(dst, e.place)
		}
	}
	return dst, exact
}

// namesPlace reports whether a folded qualifier part names the folded name
// of a place the dataset knows, by the rule of lookup: the whole name, or
// its start from minPrefixLetters letters (or from two when exact is
// false: the part is no code or name of its own).
func namesPlace(part, name string, exact bool) bool {
	if name == part {
		return true
	}
	n := letters(part)
	return (n >= minPrefixLetters || (n == 2 && !exact)) && strings.HasPrefix(name, part)
}
