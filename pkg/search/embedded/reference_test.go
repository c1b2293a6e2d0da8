package embedded_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// Search answers exactly as the memory store, the reference, for every
// kind of key (main names, alternate names, later words) and every filter
// (countries, regions, box), whether a prefix is ranked by a scan or from
// the lists precomputed at load time, and whether a filter lets those
// lists answer or sends the query to its whole range.
func TestMatchesMemoryStore(t *testing.T) {
	cities := located(storetest.ReferenceCities(3000))
	ref := memory.New()
	t.Cleanup(func() { ref.Close() })
	storetest.MustLoad(t, ref, search.Large, cities...)
	queries := referenceQueries(cities, 10000)
	for _, scanLimit := range []int{2, embedded.DefaultScanLimit, 1 << 20} {
		t.Run(fmt.Sprint("scan limit ", scanLimit), func(t *testing.T) {
			t.Parallel()
			s := mustOpen(t, t.TempDir(), embedded.Options{ReloadInterval: -1, ScanLimit: scanLimit})
			defer s.Close()
			storetest.MustLoad(t, s, search.Large, cities...)
			// What the queries reached, so that a change to them that
			// stops exercising a kind of key shows in the log.
			var words, alts, full int
			defer func() {
				t.Logf("%d queries: %d found a later word, %d an alternate name, %d as many cities as asked", len(queries), words, alts, full)
			}()
			for _, q := range queries {
				want, err := ref.Search(t.Context(), nil, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.Search(t.Context(), nil, q)
				if err != nil {
					t.Fatalf("%+v: %v", q, err)
				}
				if len(got) == q.Limit {
					full++
				}
				if slices.ContainsFunc(got, func(f search.Found) bool { return f.Key.Offset > 0 }) {
					words++
				}
				if slices.ContainsFunc(got, func(f search.Found) bool { return f.Key.Alt > 0 }) {
					alts++
				}
				if !storetest.SameFound(got, want) {
					t.Fatalf("%s:\n got %s\nwant %s", describeQuery(q), describeFound(got), describeFound(want))
				}
			}
		})
	}
}

// located gives the cities locations, spread so that a box keeps some of
// every prefix's matches, and regions by name or code.
func located(cities []search.City) []search.City {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range cities {
		c := &cities[i]
		if rng.IntN(10) > 0 {
			c.Lat, c.Lon, c.HasLocation = float64(rng.IntN(1800000)-900000)/10000, float64(rng.IntN(3600000)-1800000)/10000, true
		}
		if rng.IntN(2) == 0 {
			c.Subcountry, c.Region = "", c.Subcountry
		}
		c.CountryCode = strings.ToLower(c.Country[:2])
	}
	return cities
}

// referenceQueries returns n queries: prefixes of the cities' keys of
// every kind, with limits, later words on or off, and filters.
func referenceQueries(cities []search.City, n int) []search.Query {
	rng := rand.New(rand.NewPCG(7, 8))
	var out []search.Query
	for len(out) < n {
		c := &cities[rng.IntN(len(cities))]
		keys := search.Keys(c)
		k := keys[rng.IntN(len(keys))]
		if last := keys[len(keys)-1]; last.Word() && rng.IntN(2) == 0 {
			k = last // later words match only where names leave room: ask for them often
		}
		n := 1 + rng.IntN(min(len(k.Slug), 7))
		if k.Word() {
			n = min(len(k.Slug), 3+rng.IntN(8))
		}
		p := strings.TrimRight(k.Slug[:n], "-")
		if p == "" {
			continue
		}
		q := search.Query{Dataset: search.Large, Prefix: p, Limit: []int{1, 3, 10, 17, search.MaxLimit}[rng.IntN(5)], Words: rng.IntN(3) > 0}
		switch rng.IntN(6) {
		case 1:
			q.Countries = []string{c.CountryCode}
		case 2:
			q.Countries = []string{"no", "es"}
		case 3:
			q.Regions = []string{"r1", "r2"}
		case 4, 5:
			lat, lon := float64(rng.IntN(160)-80), float64(rng.IntN(340)-170)
			q.Box = &search.Box{MinLon: lon, MinLat: lat, MaxLon: min(180, lon+float64(10+rng.IntN(100))), MaxLat: min(90, lat+float64(10+rng.IntN(60)))}
		}
		out = append(out, q)
	}
	return out
}

func describeQuery(q search.Query) string {
	s := fmt.Sprintf("%q limit %d words %v", q.Prefix, q.Limit, q.Words)
	if len(q.Countries) > 0 {
		s += fmt.Sprintf(" countries %q", q.Countries)
	}
	if len(q.Regions) > 0 {
		s += fmt.Sprintf(" regions %q", q.Regions)
	}
	if q.Box != nil {
		s += fmt.Sprintf(" box %v", *q.Box)
	}
	return s
}

func describeFound(found []search.Found) []string {
	return slices.Collect(func(yield func(string) bool) {
		for _, f := range found {
			if !yield(fmt.Sprintf("%s/%s/%d via %q alt %d at %d (pop %d)", f.Name, f.Country, f.ID, f.Key.Slug, f.Key.Alt, f.Key.Offset, f.Population)) {
				return
			}
		}
	})
}
