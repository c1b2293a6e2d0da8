package storetest

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// placeCities are n cities around Paris, within a degree or so, some with
// a source id and some without (which get derived ids), some listed twice,
// a few without a location, and two by the antimeridian.
func placeCities(n int) []search.City {
	rng := rand.New(rand.NewPCG(3, 4))
	countries := [][2]string{{"France", "fr"}, {"Belgium", "be"}, {"Spain", "es"}}
	out := make([]search.City, 0, n+n/10+2)
	keys := map[search.Key]bool{} // one place a key, but for the copies
	for len(out) < n {
		name := ""
		for k := 1 + rng.IntN(3); k > 0; k-- {
			name += syllables[rng.IntN(len(syllables))]
		}
		if search.Slug(name) == "" {
			continue
		}
		co := countries[rng.IntN(len(countries))]
		c := CountryCity(name, co[0], co[1], 0)
		c.Region = fmt.Sprintf("R%d", rng.IntN(3))
		if rng.IntN(4) > 0 {
			c.Population = int64(rng.IntN(50)) * int64(rng.IntN(100000))
		}
		if rng.IntN(2) == 0 {
			c.ID = uint32(1000 + len(out))
		}
		if rng.IntN(20) > 0 {
			// five decimals, as the sources give them (and stores keep)
			c.Lat = math.Round((48+2*rng.Float64())*1e5) / 1e5
			c.Lon = math.Round((1.5+2*rng.Float64())*1e5) / 1e5
			c.HasLocation = true
		}
		if keys[c.Key()] {
			continue // which of two places of one key a store keeps is not the point here
		}
		keys[c.Key()] = true
		out = append(out, c)
		if rng.IntN(10) == 0 { // the same place listed again
			out = append(out, c)
		}
	}
	east := CountryCity("Eastmost", "Fiji", "fj", 5000)
	east.Lat, east.Lon, east.HasLocation = -17, 179.95, true
	west := CountryCity("Westmost", "Fiji", "fj", 5000)
	west.Lat, west.Lon, west.HasLocation = -17, -179.95, true
	return append(out, east, west)
}

// referenceIDs returns every id of the dataset ref holds: those of the
// cities found by their whole slugs.
func referenceIDs(t *testing.T, ref search.Store, cities []search.City) []uint32 {
	t.Helper()
	seen := map[uint32]search.City{}
	for _, c := range cities {
		for _, f := range MustSearch(t, ref, search.Large, c.Slug, search.MaxLimit) {
			if f.Slug != c.Slug {
				continue
			}
			if other, dup := seen[f.ID]; dup && !other.Equal(&f.City) {
				t.Fatalf("id %d is both %+v and %+v", f.ID, other, f.City)
			}
			seen[f.ID] = f.City
		}
	}
	return slices.Sorted(func(yield func(uint32) bool) {
		for id := range seen {
			if !yield(id) {
				return
			}
		}
	})
}

func testLookup(t *testing.T, open Opener) {
	s := openStore(t, open)
	if _, err := s.Lookup(t.Context(), search.Large, 1); !errors.Is(err, search.ErrEmptyDataset) {
		t.Errorf("lookup in an unloaded dataset: %v, want ErrEmptyDataset", err)
	}
	if _, err := s.Lookup(t.Context(), "medium", 1); !errors.Is(err, search.ErrUnknownDataset) {
		t.Errorf("lookup in an unknown dataset: %v, want ErrUnknownDataset", err)
	}
	cities := placeCities(150)
	ref := memory.New()
	defer ref.Close()
	MustLoad(t, ref, search.Large, cities...)
	MustLoad(t, s, search.Large, cities...)
	ids := referenceIDs(t, ref, cities)
	derived := 0
	for _, id := range ids {
		if id == 0 {
			t.Fatal("a city has no id")
		}
		if id >= search.DerivedIDBase {
			derived++
		}
		want, err := ref.Lookup(t.Context(), search.Large, id)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Lookup(t.Context(), search.Large, id)
		if err != nil {
			t.Fatalf("lookup %d: %v", id, err)
		}
		if got.ID != id || !got.Equal(&want) {
			t.Errorf("lookup %d = %+v, want %+v", id, got, want)
		}
	}
	if derived == 0 || derived == len(ids) {
		t.Fatalf("%d derived ids of %d: the cities should mix both kinds", derived, len(ids))
	}
	for _, id := range []uint32{0, 999, search.DerivedIDBase - 1, search.MaxID} {
		if _, err := s.Lookup(t.Context(), search.Large, id); !errors.Is(err, search.ErrNotFound) {
			t.Errorf("lookup %d: %v, want ErrNotFound", id, err)
		}
	}
	// The same file imported again gives every city the same id.
	MustLoad(t, s, search.Large, cities...)
	for _, id := range ids[len(ids)-20:] { // derived ones among them
		want, _ := ref.Lookup(t.Context(), search.Large, id)
		if got, err := s.Lookup(t.Context(), search.Large, id); err != nil || !got.Equal(&want) {
			t.Errorf("lookup %d after the same import again = %+v, %v; want %+v", id, got, err, want)
		}
	}
}

func testNearby(t *testing.T, open Opener) {
	s := openStore(t, open)
	q := search.NearQuery{Dataset: search.Large, Point: search.Point{Lat: 49, Lon: 2.5}, RadiusKm: 50, Limit: 10}
	if _, err := s.Nearby(t.Context(), nil, q); !errors.Is(err, search.ErrEmptyDataset) {
		t.Errorf("nearby in an unloaded dataset: %v, want ErrEmptyDataset", err)
	}
	for _, bad := range []search.NearQuery{
		{Dataset: search.Large, Point: q.Point, RadiusKm: 50, Limit: 0},
		{Dataset: search.Large, Point: q.Point, RadiusKm: 0, Limit: 10},
		{Dataset: search.Large, Point: search.Point{Lat: 95}, RadiusKm: 50, Limit: 10},
		{Dataset: search.Large, Point: q.Point, RadiusKm: 50, Limit: 10, Countries: []string{"FR"}},
	} {
		if _, err := s.Nearby(t.Context(), nil, bad); !errors.Is(err, search.ErrInvalidQuery) {
			t.Errorf("nearby %+v: %v, want ErrInvalidQuery", bad, err)
		}
	}
	cities := placeCities(400)
	ref := memory.New()
	defer ref.Close()
	MustLoad(t, ref, search.Large, cities...)
	MustLoad(t, s, search.Large, cities...)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 24 {
		q := search.NearQuery{
			Dataset: search.Large, Point: search.Point{Lat: 47.5 + 3*rng.Float64(), Lon: 1 + 3*rng.Float64()},
			RadiusKm: []float64{3, 30, 100, search.MaxRadiusKm}[i%4], Limit: []int{1, 10, search.MaxLimit}[i%3],
		}
		if i%5 == 0 {
			q.Countries = []string{"be", "es"}
		}
		want, err := ref.Nearby(t.Context(), nil, q)
		if err != nil {
			t.Fatal(err)
		}
		dst := []search.City{{Name: "kept"}}
		got, err := s.Nearby(t.Context(), dst, q)
		if err != nil {
			t.Fatalf("nearby %+v: %v", q, err)
		}
		if len(got) == 0 || got[0].Name != "kept" {
			t.Fatalf("nearby did not append to dst: %v", got)
		}
		if got = got[1:]; !slices.EqualFunc(got, want, func(a, b search.City) bool { return a.Equal(&b) }) {
			t.Errorf("nearby %+v:\n got %v\nwant %v", q, cityNames(got), cityNames(want))
		}
		for _, c := range got {
			if d := search.DistanceKm(q.Point, search.Point{Lat: c.Lat, Lon: c.Lon}); !c.HasLocation || d > q.RadiusKm {
				t.Errorf("nearby %+v gave %s, %.1f km away", q, c.Name, d)
			}
		}
	}
	across := search.NearQuery{Dataset: search.Large, Point: search.Point{Lat: -17, Lon: 180}, RadiusKm: 20, Limit: 10}
	got, err := s.Nearby(t.Context(), nil, across)
	if err != nil {
		t.Fatal(err)
	}
	if names := cityNames(got); len(names) != 2 || !slices.Contains(names, "Eastmost") || !slices.Contains(names, "Westmost") {
		t.Errorf("nearby the antimeridian = %v, want Eastmost and Westmost", names)
	}
	far := search.NearQuery{Dataset: search.Large, Point: search.Point{Lat: -60, Lon: -100}, RadiusKm: search.MaxRadiusKm, Limit: 10}
	if got, err := s.Nearby(t.Context(), nil, far); err != nil || len(got) != 0 {
		t.Errorf("nearby the middle of the ocean = %v, %v, want nothing", cityNames(got), err)
	}
}

// testNearbyRule holds the stores to the reverse rule: a point inside a
// city's disc gives that city before a district nearer the point.
func testNearbyRule(t *testing.T, open Opener) {
	s := openStore(t, open)
	city := func(name string, lat, lon float64, pop int64) search.City {
		c := CountryCity(name, "France", "fr", pop)
		c.Lat, c.Lon, c.HasLocation = lat, lon, true
		return c
	}
	MustLoad(t, s, search.Large,
		city("Paris", 48.85341, 2.3488, 2_138_551),
		city("Paris 04 Hotel-de-Ville", 48.8534, 2.3565, 28_000), // 0.5 km east
		city("Saint-Denis", 48.93564, 2.35387, 106_785),          // 9 km north, outside Paris's disc
		city("Nowhere", 48.86, 2.36, 0),
	)
	for _, tc := range []struct {
		lat, lon float64
		want     []string
	}{
		{48.8544, 2.3600, []string{"Paris", "Paris 04 Hotel-de-Ville", "Nowhere", "Saint-Denis"}},
		{48.9300, 2.3550, []string{"Saint-Denis", "Paris", "Nowhere", "Paris 04 Hotel-de-Ville"}},
	} {
		got, err := s.Nearby(t.Context(), nil, search.NearQuery{Dataset: search.Large, Point: search.Point{Lat: tc.lat, Lon: tc.lon}, RadiusKm: 30, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if names := cityNames(got); !slices.Equal(names, tc.want) {
			t.Errorf("nearby %g,%g = %v, want %v", tc.lat, tc.lon, names, tc.want)
		}
	}
}

func cityNames(cities []search.City) []string {
	out := make([]string, len(cities))
	for i := range cities {
		out[i] = cities[i].Name
	}
	return out
}
