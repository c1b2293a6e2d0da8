package importer

import (
	"math"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Enrichment joins the rows of a dataset that lacks population, location
// or other names (the okfn CSV, MaxMind's file) with the places of a
// GeoNames dump.
const (
	// MaxJoinKm is how far a located city (a MaxMind row) may lie from the
	// GeoNames place of its name to be joined with it.
	MaxJoinKm = 20
	// MaxAltNameRunes bounds an alternate name: longer ones are official
	// titles that nobody types ("Ciudad de la Santísima Trinidad y Puerto
	// de Santa María del Buen Ayre").
	MaxAltNameRunes = search.MaxQueryRunes
)

// EnrichedReader completes the cities of another reader with the places of
// a Gazetteer, and counts the cities it completed. It is the one stage of
// an import that enriches: it reads in file order, as the join of a city
// without a location depends on the cities matched by id before it.
type EnrichedReader struct {
	r        search.CityReader
	g        *Gazetteer
	enriched int
	// regions, when not nil, names the region of the place that a city
	// with a location (a MaxMind row) is joined with (see maxmindRegions).
	regions *RegionNames
	// Of the cities matched by id: the (country, admin1 code) pairs of
	// their places, and which of them stood for which subcountry.
	admin1   map[division]bool
	admin1Of map[divisionName]bool
}

// division is a first-level division: a country and an admin1 code (an
// index in Gazetteer.admin1s).
type division struct {
	country code
	admin1  uint32
}

// divisionName pairs a division with a subcountry of the dataset.
type divisionName struct {
	division
	subcountry string
}

var _ search.CityReader = (*EnrichedReader)(nil)

// Enrich returns a reader of r's cities, each completed from the place of g
// that it matches:
//
//   - a city with an id takes the place with that geonameid;
//   - a city with a location (a MaxMind row) takes the nearest place of its
//     country whose name or ASCII name folds to its slug, within MaxJoinKm;
//   - any other city with a country takes a place of its country whose name
//     or ASCII name (else an alternate name) folds to its slug: never one
//     in another subcountry than the city's, as the cities matched by id
//     before it tell the subcountries of admin1 codes; one in the city's
//     subcountry if there is one, else the most populous.
//
// A matched city gains the place's population and location where it has
// none, the place's admin1 code as Region when it came with a location but
// no region (or MaxMind's "00" for unknown), and the place's names other
// than the city's own as AltNames (see search.City). Other cities are left
// as they are: no population, so they rank after the matched ones.
func (g *Gazetteer) Enrich(r search.CityReader) *EnrichedReader {
	return &EnrichedReader{r: r, g: g, admin1: make(map[division]bool), admin1Of: make(map[divisionName]bool)}
}

// ReadBatch appends the next batch of cities to dst, each completed when it
// matches a place (see search.CityReader).
func (e *EnrichedReader) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	dst, err := e.r.ReadBatch(dst)
	for i := n; i < len(dst); i++ {
		e.enrich(&dst[i])
	}
	return dst, err
}

// enrich completes c when it matches a place.
func (e *EnrichedReader) enrich(c *search.City) {
	if c.ID == 0 && c.HasLocation {
		if p := e.g.enrichLocated(c); p != nil {
			e.enriched++
			if e.regions != nil {
				c.Subcountry = e.regions.name(p.id, p.country, e.g.admin1s[p.admin1])
			}
		}
		return
	}
	if i := e.match(c); i >= 0 {
		e.g.enrichFrom(c, &e.g.places[i])
		e.enriched++
	}
}

// Enriched is how many cities were completed so far.
func (e *EnrichedReader) Enriched() int { return e.enriched }

// match returns the index of the place of c, a city without a location
// or with an id, or -1.
func (e *EnrichedReader) match(c *search.City) int32 {
	g := e.g
	if c.ID != 0 {
		if i, ok := g.byID[c.ID]; ok {
			p := &g.places[i]
			if c.Subcountry != "" {
				d := division{p.country, p.admin1}
				e.admin1[d] = true
				e.admin1Of[divisionName{d, c.Subcountry}] = true
			}
			return i
		}
	}
	if c.CountryCode == "" || c.HasLocation {
		return -1
	}
	if i := e.best(c, &g.byName); i >= 0 {
		return i
	}
	return e.best(c, &g.byAlt)
}

// enrichLocated completes c, a city with a location, from the place of its
// country and name nearest to it, and returns that place, or nil when
// there is none.
func (g *Gazetteer) enrichLocated(c *search.City) *gazPlace {
	if c.CountryCode == "" {
		return nil
	}
	i := g.nearest(c)
	if i < 0 {
		return nil
	}
	g.enrichFrom(c, &g.places[i])
	return &g.places[i]
}

// named reports whether place i is in country and has a name that folds
// to slug.
func (g *Gazetteer) named(i int32, country code, slug string) bool {
	p := &g.places[i]
	if p.country != country {
		return false
	}
	for k := p.first; k < p.first+p.count; k++ {
		if g.slug(k) == slug {
			return true
		}
	}
	return false
}

// nearest returns the place of c's country and name closest to c, within
// MaxJoinKm, or -1.
func (g *Gazetteer) nearest(c *search.City) int32 {
	best, bestKm := int32(-1), math.Inf(1)
	cc := countryCode(c.CountryCode)
	at := search.Point{Lat: c.Lat, Lon: c.Lon}
	g.byName.each(cc, c.Slug, func(i int32) {
		if !g.named(i, cc, c.Slug) {
			return
		}
		p := &g.places[i]
		if km := search.DistanceKm(at, search.Point{Lat: p.lat, Lon: p.lon}); km <= MaxJoinKm && (km < bestKm || km == bestKm && i < best) {
			best, bestKm = i, km
		}
	})
	return best
}

// best returns the place of x that has c's country and name, for a city
// without a location: not one in another subcountry (as far as the cities
// matched by id tell), one in its subcountry if there is one, else the
// most populous, the first in the file on a tie; or -1.
func (e *EnrichedReader) best(c *search.City, x *nameIndex) int32 {
	best, bestSame := int32(-1), false
	cc := countryCode(c.CountryCode)
	x.each(cc, c.Slug, func(i int32) {
		if !e.g.named(i, cc, c.Slug) {
			return
		}
		p := &e.g.places[i]
		d := division{p.country, p.admin1}
		same := e.admin1Of[divisionName{d, c.Subcountry}]
		if !same && c.Subcountry != "" && e.admin1[d] {
			return // the place lies in another subcountry
		}
		if best >= 0 {
			b := &e.g.places[best]
			switch {
			case same != bestSame:
				if !same {
					return
				}
			case p.population != b.population:
				if p.population < b.population {
					return
				}
			case i > best:
				return
			}
		}
		best, bestSame = i, same
	})
	return best
}

// enrichFrom completes c from its place p.
func (g *Gazetteer) enrichFrom(c *search.City, p *gazPlace) {
	if c.Population == 0 {
		c.Population = p.population
	}
	if !c.HasLocation {
		// okfn rows: they name their division already (Subcountry).
		c.Lat, c.Lon, c.HasLocation = p.lat, p.lon, true
	} else if admin1 := g.admin1s[p.admin1]; (c.Region == "" || c.Region == "00") && admin1 != "00" {
		c.Region = admin1
	}
	// Every name but the one that folds like the city's.
	names := make([]string, 0, p.count)
	for k := p.first; k < p.first+p.count; k++ {
		if g.slug(k) != c.Slug {
			names = append(names, g.name(k))
		}
	}
	c.AltNames = clip(names)
}
