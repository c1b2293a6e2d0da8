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
	// dominance is how many times as populous as any other place of its
	// name, country and division a place must be to be joined by name
	// with a city that has neither an id found in the dump nor a location.
	dominance = 10
)

// EnrichedReader completes the cities of another reader with the places of
// a Gazetteer, and counts the cities it completed by the kind of match. It
// is the one stage of an import that enriches. It holds cities back in
// runs, as a join by name depends on every city of the run: the places
// that other cities take by id, the divisions that those tell, and the
// other cities that want the same place. A run is the whole input for
// cities without a location (an okfn CSV, a few tens of thousands of
// rows), and the cities of one country, at most maxRegionRun of them, for
// cities with one (MaxMind's file, which is sorted by country).
type EnrichedReader struct {
	in   runReader
	held heldCities
	g    *Gazetteer
	// byID and byName count the cities completed by each kind of match.
	byID, byName int
	// regions, when not nil, names the region of the place that a city
	// with a location (a MaxMind row) is joined with (see maxmindRegions).
	regions *RegionNames
	// taken are the places given to a city, by index in g.places, each with
	// the search.Key of that city as it came: no place is given by name to
	// a second city, but to one with the same key, the same place listed
	// twice, which the store keeps once.
	taken map[int32]search.Key
	// votes are the subcountries of the cities matched by id, by the
	// division of their place; named are the (division, subcountry) pairs
	// that they tell (see namesDivision), where a city joined by name must
	// lie.
	votes votes[division]
	named map[divisionName]bool
	// Of each city of the run: its place, or -1; the place it wants by
	// name, or -1, and how good a join that is (see candidate).
	match, wanted []int32
	rank          []float64
	// merging makes a city without a location merge the rows identical
	// to it as they are read (see merge), for an import, whose store would
	// drop them: copies is how many rows each city of the run stands for,
	// seen finds them, and merged counts the rows merged.
	merging bool
	copies  []int
	seen    map[rowIdentity]int
	merged  int
}

// rowIdentity is every field of a city without alternate names, so that
// two rows with the same are the same row.
type rowIdentity struct {
	id                                                   uint32
	name, slug, country, countryCode, subcountry, region string
	population                                           int64
	lat, lon                                             float64
	hasLocation                                          bool
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
// that it matches. A city with an id takes the place with that geonameid.
// Any other city is joined by name, and never takes another place's data:
//
//   - a city with a location (a MaxMind row) takes the nearest place of its
//     country whose name or ASCII name folds to its slug, within MaxJoinKm;
//     one of its region code, when both have one, before any of another
//     (see sameRegion);
//   - any other city with a country (an okfn row whose place is not in the
//     dump) takes a place of its country and first-level division: the
//     cities matched by id tell which admin1 codes each subcountry stands
//     for (see namesDivision), and a division that none of them names
//     holds no match. It takes the place whose name or ASCII name folds to
//     its slug when there is one, or one of several that is more than
//     dominance times as populous as the others; only when there is none,
//     the one place of the division with an alternate name that is
//     exactly the city's name. An alternate name folded, or shared by two
//     places, is as often a neighbourhood or an older place of its own
//     (okfn's "Victoria", the old city at the heart of Hong Kong, is among
//     Hong Kong's alternate names), and so are two towns of one name.
//
// A place taken by id is never joined by name with another city, and two
// cities that want one place by name do not share it: the nearer takes it
// (the one joined by its name or ASCII name rather than an alternate
// name, for cities without a location), the first in the file on a tie,
// and the other is left as it is. Only a city with the search.Key of the
// one that holds the place shares it: the same place listed twice, which
// the store keeps once (as the first, whose data it then has).
//
// A matched city gains the place's population and location where it has
// none, the place's admin1 code as Region when it came with a location but
// no region (or MaxMind's "00" for unknown), and the place's names other
// than the city's own as AltNames (see search.City). Other cities are left
// as they are: no population, so they rank after the matched ones.
func (g *Gazetteer) Enrich(r search.CityReader) *EnrichedReader {
	return &EnrichedReader{in: runReader{r: r}, g: g, taken: make(map[int32]search.Key), votes: make(votes[division])}
}

// ReadBatch appends the next batch of cities to dst, each completed when it
// matches a place (see search.CityReader).
func (e *EnrichedReader) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	if dst = e.held.take(dst); len(dst) > n {
		return dst, nil
	}
	if e.in.err == nil {
		e.copies = e.copies[:0]
		clear(e.seen)
		e.held.run, e.held.next = e.in.readRun(e.held.run[:0], sameEnrichRun, e.merge), 0
		e.enrichRun(e.held.run)
	}
	if dst = e.held.take(dst); len(dst) > n {
		return dst, nil
	}
	return dst, e.in.err
}

// merge reports whether c, about to join run, is a row identical to a
// city of run without a location, and then counts it as a copy of that
// city. A run of such cities is the whole input (an okfn CSV), held until
// its last row is read: merged, a file of one row repeated costs one city.
// Each copy is joined as its city is, votes as it does and counts as
// enriched; the store would drop it as a duplicate of that city.
func (e *EnrichedReader) merge(run []search.City, c *search.City) bool {
	if !e.merging || located(c) || len(c.AltNames) > 0 {
		e.copies = append(e.copies, 1)
		return false
	}
	id := rowIdentity{c.ID, c.Name, c.Slug, c.Country, c.CountryCode, c.Subcountry, c.Region, c.Population, c.Lat, c.Lon, c.HasLocation}
	if i, ok := e.seen[id]; ok {
		e.copies[i]++
		e.merged++
		return true
	}
	if e.seen == nil {
		e.seen = make(map[rowIdentity]int)
	}
	e.seen[id] = len(run)
	e.copies = append(e.copies, 1)
	return false
}

// sameEnrichRun reports whether c joins the run of n cities that starts
// with first (see EnrichedReader).
func sameEnrichRun(first, c *search.City, n int) bool {
	return !located(first) && !located(c) || sameCountryRun(first, c, n)
}

// located reports whether c is joined by name and distance.
func located(c *search.City) bool { return c.ID == 0 && c.HasLocation }

// Enriched is how many cities were completed so far.
func (e *EnrichedReader) Enriched() int { return e.byID + e.byName }

// EnrichedByID is how many of the cities completed so far were matched by
// their geonameid.
func (e *EnrichedReader) EnrichedByID() int { return e.byID }

// EnrichedByName is how many of the cities completed so far were joined by
// name (see Enrich).
func (e *EnrichedReader) EnrichedByName() int { return e.byName }

// enrichRun completes the cities of run that match a place: those matched
// by id first, then those joined by name.
func (e *EnrichedReader) enrichRun(run []search.City) {
	g := e.g
	e.match, e.rank = e.match[:0], e.rank[:0]
	for i := range run {
		e.match = append(e.match, e.matchID(&run[i], e.copies[i]))
	}
	e.named = make(map[divisionName]bool, len(e.votes))
	for d, names := range e.votes {
		top, _ := e.votes.winner(d)
		for name, n := range names {
			if namesDivision(n, name == top) {
				e.named[divisionName{d, name}] = true
			}
		}
	}
	// A place wanted by name by several cities goes to the best of them,
	// and to those listed as the same place.
	e.wanted = e.wanted[:0]
	winner := make(map[int32]int)
	for i := range run {
		p, rank := int32(-1), 0.0
		if e.match[i] < 0 {
			p, rank = e.candidate(&run[i])
		}
		e.wanted, e.rank = append(e.wanted, p), append(e.rank, rank)
		if w, ok := winner[p]; p >= 0 && (!ok || rank < e.rank[w]) {
			winner[p] = i
		}
	}
	for i, p := range e.wanted {
		if p < 0 {
			continue
		}
		if w := winner[p]; w == i || run[w].Key() == run[i].Key() {
			e.match[i] = p
			e.taken[p] = run[w].Key()
		}
	}
	for i := range run {
		p := e.match[i]
		if p < 0 {
			continue
		}
		c := &run[i]
		place := &g.places[p]
		g.enrichFrom(c, place)
		if e.wanted[i] < 0 {
			e.byID += e.copies[i]
			continue
		}
		e.byName += e.copies[i]
		if located(c) && e.regions != nil {
			c.Subcountry = e.regions.name(place.id, place.country, g.admin1s[place.admin1])
		}
	}
}

// matchID returns the index of the place whose geonameid is c's, or -1,
// and marks it taken; c votes for the name of its division once for each
// of its copies.
func (e *EnrichedReader) matchID(c *search.City, copies int) int32 {
	if c.ID == 0 {
		return -1
	}
	i, ok := e.g.byID[c.ID]
	if !ok {
		return -1
	}
	p := &e.g.places[i]
	e.taken[i] = c.Key()
	for range copies {
		e.votes.add(division{p.country, p.admin1}, c.Subcountry)
	}
	return i
}

// candidate returns the place that c, a city not matched by id, would be
// joined with by name (see Enrich), and how good a join it is (lower is
// better: see nearest for a located city; 0 for a join by name or
// ASCII name, 1 by alternate name for others); or -1.
func (e *EnrichedReader) candidate(c *search.City) (int32, float64) {
	switch {
	case c.CountryCode == "":
		return -1, 0
	case located(c):
		return e.nearest(c)
	case c.HasLocation:
		return -1, 0 // a city of an id that the dump lacks, located already
	}
	if i := e.dominantPlace(c); i >= 0 {
		return i, 0
	}
	return e.byAltName(c), 1
}

// free reports whether place i is in c's country, has a name that folds
// to c's slug, and has not been given to a city but one with c's key.
func (e *EnrichedReader) free(i int32, c *search.City) bool {
	if k, ok := e.taken[i]; ok && k != c.Key() {
		return false
	}
	return e.g.named(i, countryCode(c.CountryCode), c.Slug)
}

// nearest returns the free place of c's country and name closest to c,
// within MaxJoinKm, and how good a join it is: its distance in km, plus
// MaxJoinKm for a place of another region than c's (see sameRegion), which
// any place of c's region is preferred to; or -1.
func (e *EnrichedReader) nearest(c *search.City) (int32, float64) {
	g := e.g
	best, bestRank := int32(-1), math.Inf(1)
	at := search.Point{Lat: c.Lat, Lon: c.Lon}
	cc := countryCode(c.CountryCode)
	g.byName.each(cc, c.Slug, func(i int32) {
		if !e.free(i, c) {
			return
		}
		p := &g.places[i]
		km := search.DistanceKm(at, search.Point{Lat: p.lat, Lon: p.lon})
		if km > MaxJoinKm {
			return
		}
		if !g.sameRegion(cc, c.Region, g.admin1s[p.admin1]) {
			km += MaxJoinKm
		}
		if km < bestRank || km == bestRank && i < best {
			best, bestRank = i, km
		}
	})
	return best, bestRank
}

// sameRegion reports whether region, a city's code, may be the division
// admin1 of country: unless either is no code, or region is none of the
// country's codes in g (another system's, as MaxMind's FIPS codes of
// British counties), they are the same. A place of another region is
// still joined when it is the only one of its name near the city: codes
// change between revisions of a file (MaxMind gives Tampere, 0 km from
// its GeoNames place, Finland's region code of before 2010), and a place
// of the same name and location is that city.
func (g *Gazetteer) sameRegion(country code, region, admin1 string) bool {
	if !knownDivision(country, region) || !knownDivision(country, admin1) || region == admin1 {
		return true
	}
	return !g.codes[regionKey{country, region}]
}

// namesDivision reports whether a subcountry that n of a division's
// cities matched by id have stands for that division: when most of them
// agree on it (see votes.winner), or when at least two have it, as the
// divisions that were split since the GeoNames dump was made have their
// cities in several subcountries of the dataset (Telangana's in Andhra
// Pradesh's code of 2013, Ladakh's in Jammu and Kashmir's). A lone city of
// another subcountry is a border case or an error ("Chiba" among Tokyo's
// 17 cities, "Qinghai" among Heilongjiang's 73), not a name of the
// division.
func namesDivision(n int, winner bool) bool { return winner || n >= 2 }

// inDivision reports whether place i lies in a division that c's
// subcountry stands for (see EnrichedReader.named).
func (e *EnrichedReader) inDivision(i int32, c *search.City) bool {
	p := &e.g.places[i]
	return e.named[divisionName{division{p.country, p.admin1}, c.Subcountry}]
}

// dominantPlace returns the free place of c's country and division whose
// name or ASCII name folds to c's slug, when there is one, or when one of
// several is more than dominance times as populous as any other (a town
// beside hamlets or a county seat of its name); else -1: a name cannot
// tell which of two towns a city is.
func (e *EnrichedReader) dominantPlace(c *search.City) int32 {
	g := e.g
	best, next := int32(-1), int64(-1) // next: the population of the runner-up
	g.byName.each(countryCode(c.CountryCode), c.Slug, func(i int32) {
		if !e.free(i, c) || !e.inDivision(i, c) {
			return
		}
		pop := g.places[i].population
		switch {
		case best < 0:
			best = i
		case pop > g.places[best].population || pop == g.places[best].population && i < best:
			next, best = max(next, g.places[best].population), i
		default:
			next = max(next, pop)
		}
	})
	if best >= 0 && next >= 0 && g.places[best].population <= dominance*next {
		return -1
	}
	return best
}

// byAltName returns the free place of c's country and division that has
// c's name, as it is written, as an alternate name, when no other place of
// the division, free or not, has an alternate name that folds to c's slug;
// or -1.
func (e *EnrichedReader) byAltName(c *search.City) int32 {
	g := e.g
	found, n := int32(-1), 0
	cc := countryCode(c.CountryCode)
	g.byAlt.each(cc, c.Slug, func(i int32) {
		if !g.named(i, cc, c.Slug) || !e.inDivision(i, c) {
			return
		}
		n++
		if e.free(i, c) && g.hasName(i, c.Name) {
			found = i
		}
	})
	if n != 1 {
		return -1
	}
	return found
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

// hasName reports whether place i has name, as it is written.
func (g *Gazetteer) hasName(i int32, name string) bool {
	p := &g.places[i]
	for k := p.first; k < p.first+p.count; k++ {
		if g.name(k) == name {
			return true
		}
	}
	return false
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
