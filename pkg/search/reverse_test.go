package search_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// geoNames is a memory store holding the shared GeoNames dump as the
// large dataset, loaded once for the tests that read it.
var geoNames struct {
	once  sync.Once
	store *memory.Store
	err   error
}

func mustGeoNamesService(t *testing.T) *search.Service {
	t.Helper()
	path := shareddata.Path(t, "geonames-cities1000.txt.gz")
	geoNames.once.Do(func() {
		in, err := importer.Open(path)
		if err != nil {
			geoNames.err = err
			return
		}
		defer in.Close()
		r, err := importer.NewGeoNamesCityReader(in, importer.ReaderOptions{})
		if err != nil {
			geoNames.err = err
			return
		}
		geoNames.store = memory.New()
		_, geoNames.err = geoNames.store.Load(t.Context(), search.Large, r, search.LoadOptions{})
	})
	if geoNames.err != nil {
		t.Fatalf("load %s: %v", path, geoNames.err)
	}
	return search.NewService(geoNames.store)
}

func TestReverseNamesTheCityNotItsDistrict(t *testing.T) {
	svc := mustGeoNamesService(t)
	for _, tc := range []struct {
		place    string
		lat, lon float64
		want     string
	}{
		{"Place de la Bastille, 1.5 km from Paris's point", 48.8532, 2.3691, "Paris"},
		{"Montmartre, 3.7 km", 48.8867, 2.3431, "Paris"},
		{"the Eiffel Tower, 4 km", 48.8584, 2.2945, "Paris"},
		{"Westminster Abbey, 1 km from London's point", 51.4994, -0.1273, "London"},
		{"St Paul's Cathedral, in the City of London", 51.5138, -0.0984, "London"},
		{"Camden Town, 4 km", 51.5390, -0.1426, "London"},
		{"the Brandenburg Gate", 52.5163, 13.3777, "Berlin"},
		{"Shibuya crossing", 35.6595, 139.7005, "Tokyo"},
		{"Versailles, 17 km from Paris: its own town", 48.8049, 2.1204, "Versailles"},
		{"Watford, 25 km from London: its own town", 51.6565, -0.3903, "Watford"},
		{"Boulogne-Billancourt, 8 km from Paris: its own town", 48.8352, 2.2409, "Boulogne-Billancourt"},
		{"Brooklyn, a borough of New York City", 40.6782, -73.9442, "New York City"},
		{"the sea off Brighton: the nearest town", 50.80, -0.14, "Brighton"},
	} {
		t.Run(tc.place, func(t *testing.T) {
			res, err := svc.Reverse(t.Context(), search.ReverseRequest{Dataset: search.Large, Point: &search.Point{Lat: tc.lat, Lon: tc.lon}, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Name != tc.want {
				t.Errorf("Reverse(%g,%g) = %v, want %s first", tc.lat, tc.lon, hitLines(res.Hits), tc.want)
			}
		})
	}
}

func hitLines(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, fmt.Sprintf("%s (%s, pop %d, %.1f km)", h.Name, h.CountryCode, h.Population, h.DistanceKm))
	}
	return out
}

func TestReverseRejectsBadRequests(t *testing.T) {
	svc, _ := mustService(t, storetestCity("Paris", 48.85, 2.35, 2_000_000))
	p := &search.Point{Lat: 48.85, Lon: 2.35}
	for _, tc := range []struct {
		name  string
		req   search.ReverseRequest
		field string
	}{
		{"no point", search.ReverseRequest{Limit: 1}, "lat"},
		{"latitude beyond a pole", search.ReverseRequest{Point: &search.Point{Lat: 91}, Limit: 1}, "lat"},
		{"limit 0", search.ReverseRequest{Point: p}, "limit"},
		{"limit above the most", search.ReverseRequest{Point: p, Limit: search.MaxLimit + 1}, "limit"},
		{"negative radius", search.ReverseRequest{Point: p, Limit: 1, RadiusKm: -1}, "radius_km"},
		{"radius above the most", search.ReverseRequest{Point: p, Limit: 1, RadiusKm: search.MaxRadiusKm + 1}, "radius_km"},
		{"unknown country", search.ReverseRequest{Point: p, Limit: 1, Countries: "atlantis"}, "country"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Dataset = search.Large
			_, err := svc.Reverse(t.Context(), tc.req)
			var ie *search.InvalidError
			if !errors.As(err, &ie) || ie.Field != tc.field {
				t.Fatalf("Reverse(%+v) = %v, want an invalid %s", tc.req, err, tc.field)
			}
		})
	}
}

func TestParseLatLon(t *testing.T) {
	for _, tc := range []struct {
		lat, lon string
		field    string // "" when valid
	}{
		{"48.85", "2.35", ""},
		{"-90", "180", ""},
		{"", "2.35", "lat"},
		{"48.85", "", "lon"},
		{"NaN", "2", "lat"},
		{"Inf", "2", "lat"},
		{"1e2", "2", "lat"},
		{"90.5", "2", "lat"},
		{"48", "-180.01", "lon"},
		{"48", "abc", "lon"},
	} {
		p, err := search.ParseLatLon(tc.lat, tc.lon)
		var ie *search.InvalidError
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("ParseLatLon(%q, %q) = %v", tc.lat, tc.lon, err)
		case tc.field != "" && (!errors.As(err, &ie) || ie.Field != tc.field):
			t.Errorf("ParseLatLon(%q, %q) = %v, %v, want an invalid %s", tc.lat, tc.lon, p, err, tc.field)
		}
	}
}

func TestParseID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint32 // 0 when invalid
	}{
		{"2643743", 2643743},
		{"4294967295", 4294967295},
		{"0", 0},
		{"-5", 0},
		{"+5", 0},
		{"1.5", 0},
		{"4294967296", 0},
		{"99999999999", 0},
		{" 7", 0},
		{"", 0},
		{"0x10", 0},
	} {
		got, err := search.ParseID(tc.in)
		if got != tc.want || (tc.want == 0) != errors.Is(err, search.ErrInvalidQuery) {
			t.Errorf("ParseID(%q) = %d, %v, want %d", tc.in, got, err, tc.want)
		}
	}
}

func storetestCity(name string, lat, lon float64, pop int64) search.City {
	return search.City{Name: name, Slug: search.Slug(name), Country: "France", CountryCode: "fr", Population: pop, Lat: lat, Lon: lon, HasLocation: true}
}

func TestLookup(t *testing.T) {
	paris := storetestCity("Paris", 48.85, 2.35, 2_000_000)
	paris.ID = 2988507
	svc, store := mustService(t, paris)
	storetest.MustLoad(t, store, search.Small, paris)
	for _, tc := range []struct {
		name string
		req  search.LookupRequest
		want error // nil: Paris
	}{
		{"by its id, in the small dataset by default", search.LookupRequest{ID: "2988507"}, nil},
		{"in the dataset asked", search.LookupRequest{Dataset: search.Large, ID: "2988507"}, nil},
		{"an id no city has", search.LookupRequest{ID: "42"}, search.ErrNotFound},
		{"an id that is no number", search.LookupRequest{ID: "paris"}, search.ErrInvalidQuery},
		{"id 0", search.LookupRequest{ID: "0"}, search.ErrInvalidQuery},
		{"an unknown dataset", search.LookupRequest{Dataset: "huge", ID: "2988507"}, search.ErrUnknownDataset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hit, err := svc.Lookup(t.Context(), tc.req)
			switch {
			case tc.want == nil && (err != nil || hit.Name != "Paris" || hit.ID != paris.ID):
				t.Errorf("Lookup(%+v) = %+v, %v; want Paris", tc.req, hit, err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("Lookup(%+v) = %v, want %v", tc.req, err, tc.want)
			}
		})
	}
}
