package search

import "strings"

// ExactBoost is the factor by which a whole-name match's population counts.
const ExactBoost = 10

// Weight is the ranking weight of a city with this slug and population for
// the folded query prefix (see the package doc).
func Weight(prefix, slug string, population int64) int64 {
	if slug == prefix {
		return population * ExactBoost
	}
	return population
}

// Compare orders a and b for the folded query prefix: negative when a ranks
// before b, positive when after, 0 only for cities that are equal in every
// field the order looks at. Both are expected to match prefix.
func Compare(prefix string, a, b *City) int {
	if c := CompareRank(prefix, a.Slug, a.Population, b.Slug, b.Population); c != 0 {
		return c
	}
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

// CompareRank is the part of Compare that looks only at slug and population:
// weight (higher first), then whole-name match, then shorter slug, then slug.
// Stores that keep cities sorted by slug use it to rank without building
// City values.
func CompareRank(prefix, aSlug string, aPop int64, bSlug string, bPop int64) int {
	aw, bw := Weight(prefix, aSlug, aPop), Weight(prefix, bSlug, bPop)
	switch {
	case aw > bw:
		return -1
	case aw < bw:
		return 1
	}
	if ae, be := aSlug == prefix, bSlug == prefix; ae != be {
		if ae {
			return -1
		}
		return 1
	}
	if len(aSlug) != len(bSlug) {
		if len(aSlug) < len(bSlug) {
			return -1
		}
		return 1
	}
	return strings.Compare(aSlug, bSlug)
}
