package search

import (
	"context"
	"math"
	"strings"
)

// LookupRequest asks for one city by its id, as a person or a URL gave it.
type LookupRequest struct {
	// Dataset is the dataset to look in; "" means Small.
	Dataset Dataset
	// ID is the city's id as written (see ParseID).
	ID string
}

// Lookup answers req: the city of that id, as a Hit without a match.
// Errors: ErrInvalidQuery (an *InvalidError) for an id that is not a
// positive whole number, ErrUnknownDataset, ErrNotFound when the dataset
// has no such city, and the store's errors (see Store.Lookup).
func (s *Service) Lookup(ctx context.Context, req LookupRequest) (Hit, error) {
	d, err := datasetOrSmall(req.Dataset)
	if err != nil {
		return Hit{}, err
	}
	id, err := ParseID(req.ID)
	if err != nil {
		return Hit{}, err
	}
	c, err := s.store.Lookup(ctx, d, id)
	if err != nil {
		return Hit{}, err
	}
	return Hit{City: c}, nil
}

// ReverseRequest asks which cities are around a point (see NearQuery and
// the reverse rule at CityRadiusKm).
type ReverseRequest struct {
	// Dataset is the dataset to look in; "" means Small.
	Dataset Dataset
	// Point is where the person is: nil when they did not say, which is
	// an error (see ParseLatLon).
	Point *Point
	// Limit is how many cities to return at most, 1..MaxLimit: the edges
	// fill in DefaultLimit when the person did not say.
	Limit int
	// RadiusKm is how far from Point a city may be, above 0 and at most
	// MaxRadiusKm; 0 means DefaultRadiusKm.
	RadiusKm float64
	// Countries, when not empty, keeps only cities of these countries, as
	// in Request.
	Countries string
}

// Reverse answers req: the cities around its point, best first, each with
// its distance. Errors: ErrInvalidQuery (an *InvalidError) for a missing
// or invalid point, limit, radius or country, ErrUnknownDataset, and the
// store's errors (see Store.Nearby).
func (s *Service) Reverse(ctx context.Context, req ReverseRequest) (Result, error) {
	d, err := datasetOrSmall(req.Dataset)
	if err != nil {
		return Result{}, err
	}
	if req.Point == nil {
		return Result{}, invalid("lat", "Missing location: give lat and lon in decimal degrees")
	}
	q := NearQuery{Dataset: d, Point: *req.Point, RadiusKm: req.RadiusKm, Limit: req.Limit}
	if q.RadiusKm == 0 {
		q.RadiusKm = DefaultRadiusKm
	}
	if req.Countries != "" {
		if q.Countries, err = parseCountryList(req.Countries); err != nil {
			return Result{}, err
		}
	}
	if err := q.Validate(); err != nil {
		return Result{}, err
	}
	cities, err := s.store.Nearby(ctx, make([]City, 0, q.Limit), q)
	if err != nil {
		return Result{}, err
	}
	res := Result{Dataset: d, Hits: make([]Hit, len(cities))}
	for i := range cities {
		res.Hits[i] = Hit{City: cities[i], HasDistance: true, DistanceKm: DistanceKm(q.Point, Point{cities[i].Lat, cities[i].Lon})}
	}
	return res, nil
}

// ParseLatLon reads a latitude and a longitude given apart, as the HTTP
// API takes them: plain decimal degrees (see ParseDecimal), latitude from
// -90 to 90, longitude from -180 to 180. Its error is an *InvalidError
// about field "lat" or "lon".
func ParseLatLon(lat, lon string) (*Point, error) {
	var p Point
	for _, f := range [...]struct {
		name, text string
		limit      float64
		v          *float64
	}{{"lat", lat, 90, &p.Lat}, {"lon", lon, 180, &p.Lon}} {
		t := strings.TrimSpace(f.text)
		if t == "" {
			return nil, invalid(f.name, "Missing %s: give lat and lon in decimal degrees", f.name)
		}
		v, ok := ParseDecimal(t)
		if !ok || math.Abs(v) > f.limit {
			return nil, invalid(f.name, "Invalid %s %q: use decimal degrees from %g to %g", f.name, clip(f.text), -f.limit, f.limit)
		}
		*f.v = v
	}
	return &p, nil
}

// datasetOrSmall checks a requested dataset, "" meaning Small.
func datasetOrSmall(d Dataset) (Dataset, error) {
	if d == "" {
		return Small, nil
	}
	return ParseDataset(string(d))
}
