package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// placeCities are testCities with two more located cities near Paris.
func placeCities() []search.City {
	return append(testCities(),
		search.City{ID: 2988506, Name: "Paris 04", Slug: "paris-04", Country: "France", CountryCode: "fr", Subcountry: "Île-de-France",
			Population: 28000, Lat: 48.8534, Lon: 2.3565, HasLocation: true},
		search.City{ID: 2977824, Name: "Saint-Denis", Slug: "saint-denis", Country: "France", CountryCode: "fr", Subcountry: "Île-de-France",
			Population: 106785, Lat: 48.93564, Lon: 2.35387, HasLocation: true},
	)
}

// withPopulation is parisJSON as placeCities has it, with a population.
func parisWithPopulation() search.City {
	c := testCities()[5]
	c.Population = 2138551
	return c
}

const (
	paris04JSON    = `{"name":"Paris 04","label":"Paris 04","slug":"paris-04","country":"France","country_code":"fr","subcountry":"Île-de-France","population":28000,"lat":48.8534,"lon":2.3565,"id":2988506}`
	saintDenisJSON = `{"name":"Saint-Denis","label":"Saint-Denis","slug":"saint-denis","country":"France","country_code":"fr","subcountry":"Île-de-France","population":106785,"lat":48.93564,"lon":2.35387,"id":2977824}`
	bigParisJSON   = `{"name":"Paris","label":"Paris","slug":"paris","country":"France","country_code":"fr","subcountry":"Île-de-France","population":2138551,"lat":48.85341,"lon":2.3488,"id":2988507}`
)

// withDistance adds distance_km to a city's wire form.
func withDistance(cityJSON, km string) string {
	return strings.TrimSuffix(cityJSON, "}") + `,"distance_km":` + km + "}"
}

func placesHandler(t *testing.T, opts ...server.Option) http.Handler {
	cities := placeCities()
	cities[5] = parisWithPopulation()
	return server.New(mustService(t, cities), opts...)
}

func TestCityByID(t *testing.T) {
	h := placesHandler(t)
	for _, tc := range []struct {
		name, target string
		status       int
		body         string
	}{
		{"a city by its id", "/cities/2988507", 200, bigParisJSON},
		{"the dataset said", "/cities/555980?dataset=small", 200, istraJSON},
		{"an id no city has", "/cities/42", 404, `{"message":"No city has this id in this dataset"}`},
		{"id 0", "/cities/0", 400, `{"message":"Invalid id \"0\": use a positive whole number up to 4294967295"}`},
		{"a negative id", "/cities/-5", 400, `{"message":"Invalid id \"-5\": use a positive whole number up to 4294967295"}`},
		{"an id that is no number", "/cities/paris", 400, `{"message":"Invalid id \"paris\": use a positive whole number up to 4294967295"}`},
		{"an id beyond 32 bits", "/cities/4294967296", 400, `{"message":"Invalid id \"4294967296\": use a positive whole number up to 4294967295"}`},
		{"an unknown dataset", "/cities/2988507?dataset=huge", 400, `{"message":"Unknown dataset \"huge\": use small or large"}`},
		{"a dataset never imported", "/cities/2988507?dataset=large", 503, `{"message":"This dataset is not available yet"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertJSON(t, do(t, h, http.MethodGet, tc.target), tc.status, tc.body)
		})
	}
}

func TestReverse(t *testing.T) {
	h := placesHandler(t)
	for _, tc := range []struct {
		name, target string
		status       int
		body         string
	}{
		{"inside Paris, by Paris 04: Paris first", "/reverse?lat=48.8544&lon=2.36&limit=2", 200,
			"[" + withDistance(bigParisJSON, "0.8") + "," + withDistance(paris04JSON, "0.3") + "]"},
		{"in Saint-Denis", "/reverse?lat=48.93&lon=2.355&limit=1", 200, "[" + withDistance(saintDenisJSON, "0.6") + "]"},
		{"within a radius", "/reverse?lat=48.93&lon=2.355&radius_km=1", 200, "[" + withDistance(saintDenisJSON, "0.6") + "]"},
		{"nothing near", "/reverse?lat=-60&lon=-100", 200, "[]"},
		{"a country with no city near", "/reverse?lat=48.93&lon=2.355&country=de", 200, "[]"},
		{"no lat", "/reverse?lon=2.35", 400, `{"message":"Missing lat: give lat and lon in decimal degrees"}`},
		{"no lon", "/reverse?lat=48.85", 400, `{"message":"Missing lon: give lat and lon in decimal degrees"}`},
		{"a lat that is no number", "/reverse?lat=NaN&lon=2", 400, `{"message":"Invalid lat \"NaN\": use decimal degrees from -90 to 90"}`},
		{"an infinite lon", "/reverse?lat=48&lon=Inf", 400, `{"message":"Invalid lon \"Inf\": use decimal degrees from -180 to 180"}`},
		{"a lat beyond a pole", "/reverse?lat=90.5&lon=2", 400, `{"message":"Invalid lat \"90.5\": use decimal degrees from -90 to 90"}`},
		{"a bad limit", "/reverse?lat=48&lon=2&limit=ten", 400, `{"message":"Invalid limit \"ten\": use a whole number from 1 to 100"}`},
		{"a limit too high", "/reverse?lat=48&lon=2&limit=101", 400, `{"message":"Invalid limit 101: use a whole number from 1 to 100"}`},
		{"a radius of 0", "/reverse?lat=48&lon=2&radius_km=0", 400, `{"message":"Invalid radius_km \"0\": use a number of kilometres above 0 and at most 500"}`},
		{"a radius too far", "/reverse?lat=48&lon=2&radius_km=501", 400, `{"message":"Invalid radius_km \"501\": use a number of kilometres above 0 and at most 500"}`},
		{"an unknown country", "/reverse?lat=48&lon=2&country=atlantis", 400, `{"message":"Unknown country \"atlantis\": use ISO codes such as cl, or English names"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assertJSON(t, do(t, h, http.MethodGet, tc.target), tc.status, tc.body)
		})
	}
}

func TestReverseIsRateLimitedLikeSearch(t *testing.T) {
	h := placesHandler(t, server.WithSearchMiddleware(rejectAll(t, nil)))
	if rec := do(t, h, http.MethodGet, "/reverse?lat=48.85&lon=2.35"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("/reverse through a limiter that refuses everything: %d, want 429", rec.Code)
	}
	if rec := do(t, h, http.MethodGet, "/cities/2988507"); rec.Code != http.StatusOK {
		t.Errorf("/cities/{id} through the same: %d, want 200 (a stored city is shown again, never refused)", rec.Code)
	}
}

func TestPlacesRoutes(t *testing.T) {
	h := placesHandler(t)
	for _, target := range []string{"/cities/2988507", "/reverse?lat=48&lon=2"} {
		rec := do(t, h, http.MethodPost, target)
		if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD, OPTIONS" {
			t.Errorf("POST %s: %d, Allow %q; want 405 and GET, HEAD, OPTIONS", target, rec.Code, rec.Header().Get("Allow"))
		}
	}
	if rec := do(t, h, http.MethodGet, "/cities/2988507/x"); rec.Code != http.StatusNotFound {
		t.Errorf("GET a path under a city: %d, want 404", rec.Code)
	}
	rec := do(t, h, http.MethodGet, "/reverse?lat=48.8544&lon=2.36&limit=1&format=geojson")
	want := `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[2.3488,48.85341]},"properties":` +
		withDistance(bigParisJSON, "0.8") + `}]}`
	if rec.Code != http.StatusOK || rec.Body.String() != want {
		t.Errorf("reverse as GeoJSON: %d %s\nwant %s", rec.Code, rec.Body, want)
	}
}
