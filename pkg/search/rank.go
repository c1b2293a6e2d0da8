package search

import "strings"

// ExactBoost is the factor by which a whole-name match's population counts
// in Weight, and in Score from five letters (see WholeBoost).
const ExactBoost = 10

// AltDivisor is how much less a match through an alternate name weighs
// than one through the main name. GeoNames lists dozens of names for a big
// city, in every language: "san" lists Santiago and San Diego, not
// Shanghai as "Sangaj" (14.6M) nor São Paulo as "Sanpaulu". Yet "new" still
// lists Delhi (10.9M) as "New Delhi", and "pek" Beijing as "Peking" before
// Pekin (34,000).
const AltDivisor = 30

// Weight is the ranking weight of a city of this population reached
// through key for the folded query prefix, in units of 1/AltDivisor of a
// person: the population, times ExactBoost when the key is the whole
// prefix, divided by AltDivisor for an alternate name. It is the order in
// which stores pick candidates, kept by their indexes ahead of time; the
// Service ranks the candidates by Score.
func Weight(prefix string, key NameKey, population int64) int64 {
	w := population
	if key.Slug == prefix {
		w *= ExactBoost
	}
	if key.Alt == 0 {
		w *= AltDivisor
	}
	return w
}

// Compare orders a and b, both reached through their main name, for the
// folded query prefix (see CompareFound).
func Compare(prefix string, a, b *City) int {
	return CompareFound(prefix, &Found{City: *a, Key: NameKey{Slug: a.Slug}}, &Found{City: *b, Key: NameKey{Slug: b.Slug}})
}

// CompareFound orders a and b for the folded query prefix: negative when
// a ranks before b, positive when after, 0 only for cities that are equal
// in every field the order looks at. Both keys are expected to start with
// prefix. The order is: matches from the start of a name before matches
// from a later word ("york" lists York before New York City), then Weight
// (higher first), whole-name match first, main name before alternate
// name, shorter key, key in byte order, then name, country, subcountry,
// region and id in byte order, so that the order is total and the same in
// every store.
func CompareFound(prefix string, a, b *Found) int {
	return compareFound(prefix, a, prefix, b)
}

// compareFound is CompareFound with a prefix for each side: typo matches
// and query variants each rank against the text that reached them.
func compareFound(ap string, a *Found, bp string, b *Found) int {
	if c := CompareKeys(ap, a.Key, a.Population, bp, b.Key, b.Population); c != 0 {
		return c
	}
	return compareCities(&a.City, &b.City)
}

// CompareKeys is the part of CompareFound that looks only at keys and
// populations, each against its own prefix. Stores that keep keys sorted
// use it to rank without building City values.
func CompareKeys(ap string, a NameKey, aPop int64, bp string, b NameKey, bPop int64) int {
	if aw, bw := a.Word(), b.Word(); aw != bw {
		if bw {
			return -1
		}
		return 1
	}
	aw, bw := Weight(ap, a, aPop), Weight(bp, b, bPop)
	switch {
	case aw > bw:
		return -1
	case aw < bw:
		return 1
	}
	if ae, be := a.Slug == ap, b.Slug == bp; ae != be {
		if ae {
			return -1
		}
		return 1
	}
	if am, bm := a.Alt == 0, b.Alt == 0; am != bm {
		if am {
			return -1
		}
		return 1
	}
	if len(a.Slug) != len(b.Slug) {
		if len(a.Slug) < len(b.Slug) {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Slug, b.Slug)
}

// compareCities is the tail of the order, which does not look at keys.
func compareCities(a, b *City) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := strings.Compare(a.Country, b.Country); c != 0 {
		return c
	}
	if c := strings.Compare(a.Subcountry, b.Subcountry); c != 0 {
		return c
	}
	if c := strings.Compare(a.Region, b.Region); c != 0 {
		return c
	}
	switch {
	case a.ID < b.ID:
		return -1
	case a.ID > b.ID:
		return 1
	}
	return 0
}

// CompareRank orders two cities reached through their main names by slug
// and population alone (see CompareKeys).
func CompareRank(prefix, aSlug string, aPop int64, bSlug string, bPop int64) int {
	return CompareKeys(prefix, NameKey{Slug: aSlug}, aPop, prefix, NameKey{Slug: bSlug}, bPop)
}
