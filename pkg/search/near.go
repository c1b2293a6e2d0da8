package search

import (
	"cmp"
	"math"
	"slices"
)

// Reverse lookup: which cities are around a point, best first (see
// docs/api.md, "Reverse"). People ask "which city am I in", and the
// nearest populated place is often a district or a suburb of the city they
// are in (Paris 04 a few hundred metres away, the middle of Paris three
// kilometres), so distance alone does not answer. Each city is taken as a
// disc around its point, of radius
//
//	CityRadiusKm(population) = √population / 250 km, at most MaxCityRadiusKm
//
// the size of a city of that many people at 20,000 a square kilometre, a
// dense centre (Paris 5.8 km, London 11 km, a town of 10,000 0.4 km, a
// place of unknown population none). The cities whose disc holds the point
// come first, the most prominent first (population times fame, as Score
// counts them: London before the City of London, which GeoNames gives
// London's population); then the others by how far the point is from the
// edge of their disc, nearest first; ties by distance, then by id.
const (
	// MaxCityRadiusKm bounds CityRadiusKm: no city's centre counts
	// farther out, so that a search knows where to stop.
	MaxCityRadiusKm = 25
	// DefaultRadiusKm is how far around the point a reverse lookup looks
	// when the person did not say; MaxRadiusKm is the most it may.
	DefaultRadiusKm = 100
	MaxRadiusKm     = 500
)

// CityRadiusKm is the radius of the disc that a city of population pop is
// taken to cover (see the rule above).
func CityRadiusKm(pop int64) float64 {
	if pop <= 0 {
		return 0
	}
	return math.Min(MaxCityRadiusKm, math.Sqrt(float64(pop))/250)
}

// Prominence is how prominent a city of population pop with names
// alternate names is: its population, times its fame (see FameNames).
func Prominence(pop int64, names int) float64 {
	return float64(pop) * (1 + float64(names)/FameNames)
}

// NearQuery asks a store for the cities of one dataset around a point.
type NearQuery struct {
	Dataset Dataset
	// Point is where the person is.
	Point Point
	// RadiusKm is how far from Point a city may be, 0 < RadiusKm ≤
	// MaxRadiusKm.
	RadiusKm float64
	// Limit is how many cities to return at most, 1..MaxLimit.
	Limit int
	// Countries, when not empty, keeps only the cities of these
	// lower-case ISO codes, as in Query.
	Countries []string
}

// Validate checks the parts of a query that every store relies on.
func (q NearQuery) Validate() error {
	if _, err := ParseDataset(string(q.Dataset)); err != nil {
		return err
	}
	if !q.Point.valid() || math.IsInf(q.Point.Lat, 0) || math.IsInf(q.Point.Lon, 0) {
		return invalid("lat", "Invalid location: latitude from -90 to 90 and longitude from -180 to 180")
	}
	if !(q.RadiusKm > 0 && q.RadiusKm <= MaxRadiusKm) {
		return invalid("radius_km", "Invalid radius: use a number of kilometres above 0 and at most %d", MaxRadiusKm)
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return invalid("limit", "Invalid limit %d: use a whole number from 1 to %d", q.Limit, MaxLimit)
	}
	return validCountries(q.Countries)
}

// Accepts reports whether c passes q's country filter and has a location.
func (q *NearQuery) Accepts(c *City) bool {
	return c.HasLocation && (len(q.Countries) == 0 || slices.Contains(q.Countries, c.CountryCode))
}

// Place is what the reverse rule looks at of a city: stores that index
// their own representation of cities fill it without building a City.
type Place struct {
	// Item is the store's handle of the city (an index, a record).
	Item uint32
	// ID, Lat, Lon and Population are the city's; AltNames is how many
	// alternate names it has.
	ID         uint32
	Lat, Lon   float64
	Population int64
	AltNames   int
	// What Nearest measured from the query's point: the distance to the
	// city's point and to the edge of its disc, whether the disc holds the
	// point, and then the city's prominence.
	distance, edge float64
	inside         bool
	prominence     float64
}

// PlaceOf returns the Place of c, with handle item.
func PlaceOf(item uint32, c *City) Place {
	return Place{Item: item, ID: c.ID, Lat: c.Lat, Lon: c.Lon, Population: c.Population, AltNames: len(c.AltNames)}
}

// comparePlaces orders two places measured from one point by the rule.
func comparePlaces(a, b *Place) int {
	if a.inside != b.inside {
		if a.inside {
			return -1
		}
		return 1
	}
	if a.inside {
		if c := cmp.Compare(b.prominence, a.prominence); c != 0 {
			return c // the more prominent first
		}
	}
	return cmp.Or(cmp.Compare(a.edge, b.edge), cmp.Compare(a.distance, b.distance), cmp.Compare(a.ID, b.ID))
}

// Nearest keeps the best places of a NearQuery, by the rule above, as a
// store offers them; it is how every store ranks a reverse lookup, so
// that they agree. Use it as FindNear does.
type Nearest struct {
	q    NearQuery
	best []Place // sorted, at most q.Limit
}

// Offer considers p, a city that q accepts: it is kept when it lies within
// q.RadiusKm and ranks among the best q.Limit so far.
func (n *Nearest) Offer(p Place) {
	if !n.measure(&p) {
		return
	}
	if len(n.best) == n.q.Limit && comparePlaces(&p, &n.best[len(n.best)-1]) >= 0 {
		return
	}
	i, _ := slices.BinarySearchFunc(n.best, &p, func(x Place, y *Place) int { return comparePlaces(&x, y) })
	if len(n.best) == n.q.Limit {
		n.best = n.best[:len(n.best)-1]
	}
	n.best = slices.Insert(n.best, i, p)
}

// WidePopulation is the population from which a city's disc is a
// kilometre wide or more (CityRadiusKm is 1): such cities are few (a city
// of a few thousand covers a few hundred metres), so a reverse lookup
// looks for them apart, farther out (see FindNear).
const WidePopulation = 62_500

// Wide reports whether a city of population pop is one FindNear looks for
// apart (see WidePopulation).
func Wide(pop int64) bool { return pop >= WidePopulation }

// measure fills in how p lies from the query's point, and reports
// whether it lies within the query's radius.
func (n *Nearest) measure(p *Place) bool {
	p.distance = DistanceKm(n.q.Point, Point{p.Lat, p.Lon})
	if p.distance > n.q.RadiusKm {
		return false
	}
	r := CityRadiusKm(p.Population)
	p.edge, p.inside = p.distance-r, p.distance <= r
	if p.inside {
		p.prominence = Prominence(p.Population, p.AltNames)
	}
	return true
}

// complete reports whether no city beyond what a round scanned can rank
// among the best kept: the cities not Wide within km of the point, the
// Wide ones within km+MaxCityRadiusKm−1.
func (n *Nearest) complete(km float64) bool {
	if km >= n.q.RadiusKm {
		return true
	}
	if len(n.best) < n.q.Limit {
		return false
	}
	// A city left out lies outside its disc (km ≥ 1), its edge farther
	// than km−1 from the point: farther than km and less than 1 km wide,
	// or farther than km+MaxCityRadiusKm−1 and at most MaxCityRadiusKm.
	last := &n.best[len(n.best)-1]
	return last.inside || last.edge <= km-1
}

// Scan is how a store offers FindNear its cities: every city that q
// accepts with a location in any of boxes, to n.Offer, each once a call:
// with wide, exactly those that are Wide by population, else exactly
// those that are not. Stores index the two apart.
type Scan func(n *Nearest, boxes []Box, wide bool) error

// FindNear runs q over a store's spatial index, and returns the best
// places, best first. Each round scans the cities within a few kilometres
// of the point, and the Wide ones, whose disc may hold it from farther,
// up to MaxCityRadiusKm beyond; it doubles the distance, up to q.RadiusKm,
// until no city farther out could rank among the best. So the work stays
// bounded where cities are dense, and grows with the distance to the
// nearest cities where they are not. q must be valid.
func FindNear(q NearQuery, scan Scan) ([]Place, error) {
	for km := min(q.RadiusKm, 2); ; km = min(q.RadiusKm, 2*km) {
		n := &Nearest{q: q}
		if err := scan(n, NearBoxes(q.Point, min(q.RadiusKm, km+MaxCityRadiusKm-1)), true); err != nil {
			return nil, err
		}
		if err := scan(n, NearBoxes(q.Point, km), false); err != nil {
			return nil, err
		}
		if n.complete(km) {
			return n.best, nil
		}
	}
}

// NearBoxes returns the boxes that hold every point within km of p: one,
// or two when the area crosses the antimeridian; the whole band of
// longitudes near a pole.
func NearBoxes(p Point, km float64) []Box {
	dLat := km / 111 // a degree of latitude is 111.2 km: a margin
	b := Box{MinLat: math.Max(-90, p.Lat-dLat), MaxLat: math.Min(90, p.Lat+dLat), MinLon: -180, MaxLon: 180}
	// The widest longitude span is at the latitude nearest a pole.
	edge := math.Max(math.Abs(b.MinLat), math.Abs(b.MaxLat))
	c := math.Cos(edge * math.Pi / 180)
	if edge >= 89.9 || km/(111*c) >= 180 {
		return []Box{b}
	}
	dLon := km / (111 * c)
	b.MinLon, b.MaxLon = p.Lon-dLon, p.Lon+dLon
	switch {
	case b.MinLon < -180:
		w := b
		w.MinLon, w.MaxLon = b.MinLon+360, 180
		b.MinLon = -180
		return []Box{b, w}
	case b.MaxLon > 180:
		e := b
		e.MinLon, e.MaxLon = -180, b.MaxLon-360
		b.MaxLon = 180
		return []Box{b, e}
	}
	return []Box{b}
}
