package relevance

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Baseline is the plain population order that the ranking is measured
// against: for a query folded with search.Slug, every city with a name or
// an alternate name whose search.Slug starts with it, most populous first
// (ties by the lower id). It knows no word starts, no script of its own for
// names in other alphabets (a name counts by its transliteration), no
// typos, no qualifiers and no location; a trailing space is folded away.
type Baseline struct {
	cities []search.City
	keys   []baselineKey // sorted by slug
	ids    map[uint32]bool
	// sections are the ids of sections of populated places (see
	// SectionCode), which Largest leaves out.
	sections map[uint32]bool
}

// baselineKey is one folded name of cities[city].
type baselineKey struct {
	slug string
	city int32
}

// NewBaseline indexes cities, as an import gave them to the store.
func NewBaseline(cities []search.City) *Baseline {
	b := &Baseline{cities: cities, ids: make(map[uint32]bool, len(cities))}
	var seen []string
	for i := range cities {
		c := &cities[i]
		b.ids[c.ID] = true
		seen = seen[:0]
		for _, name := range append([]string{c.Name}, c.AltNames...) {
			s := search.Slug(name)
			if s == "" || slices.Contains(seen, s) {
				continue
			}
			seen = append(seen, s)
			b.keys = append(b.keys, baselineKey{slug: s, city: int32(i)})
		}
	}
	slices.SortFunc(b.keys, func(x, y baselineKey) int { return strings.Compare(x.slug, y.slug) })
	return b
}

// Top returns the best limit cities for query in population order, each
// city once, and each GeoNames id once (okfn may list a place twice).
func (b *Baseline) Top(query string, limit int) []search.City {
	prefix := search.Slug(query)
	if prefix == "" {
		return nil
	}
	start := sort.Search(len(b.keys), func(i int) bool { return b.keys[i].slug >= prefix })
	var matched []int32
	for i := start; i < len(b.keys) && strings.HasPrefix(b.keys[i].slug, prefix); i++ {
		matched = append(matched, b.keys[i].city)
	}
	slices.SortFunc(matched, func(x, y int32) int {
		cx, cy := &b.cities[x], &b.cities[y]
		return cmp.Or(cmp.Compare(cy.Population, cx.Population), cmp.Compare(cx.ID, cy.ID), cmp.Compare(x, y))
	})
	matched = slices.Compact(matched) // a city through two of its names
	var top []search.City
	for _, i := range matched {
		if len(top) == limit {
			break
		}
		c := b.cities[i]
		if c.ID == 0 || !slices.ContainsFunc(top, func(t search.City) bool { return t.ID == c.ID }) {
			top = append(top, c)
		}
	}
	return top
}

// Has reports whether a city of the indexed dataset has GeoNames id id.
func (b *Baseline) Has(id uint32) bool {
	return b.ids[id]
}

// Largest returns the n most populous cities indexed, each GeoNames id
// once (ties: lower id), leaving out cities without an id and sections of
// populated places: a district is part of a place that counts already,
// and GeoNames may give it the whole city's population (Zagreb - Centar
// has 800,000, Zagreb 698,966), so that it comes first where a person
// means the city. Top still lists them.
func (b *Baseline) Largest(n int) []search.City {
	order := make([]int, 0, len(b.cities))
	for i := range b.cities {
		if b.cities[i].ID != 0 && !b.sections[b.cities[i].ID] {
			order = append(order, i)
		}
	}
	slices.SortFunc(order, func(x, y int) int {
		cx, cy := &b.cities[x], &b.cities[y]
		return cmp.Or(cmp.Compare(cy.Population, cx.Population), cmp.Compare(cx.ID, cy.ID), cmp.Compare(x, y))
	})
	var out []search.City
	seen := make(map[uint32]bool, n)
	for _, i := range order {
		if len(out) == n {
			break
		}
		if c := b.cities[i]; !seen[c.ID] {
			seen[c.ID] = true
			out = append(out, c)
		}
	}
	return out
}
