package search_test

import (
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

func city(name, country string, population int64) search.City {
	return search.City{Name: name, Slug: search.Slug(name), Country: country, Population: population}
}

func cityNames(cities []search.City) []string {
	out := make([]string, len(cities))
	for i, c := range cities {
		out[i] = c.Name
	}
	return out
}

// A LoadReader hands over every batch of its reader in order, appending
// after what dst holds, and ends with io.EOF.
func TestLoadReaderReadsEveryBatch(t *testing.T) {
	cities := []search.City{city("Paris", "France", 1), city("Lyon", "France", 2), city("Nice", "France", 3),
		city("Metz", "France", 4), city("Caen", "France", 5)}
	for _, tc := range []struct{ batch, calls int }{{0, 1}, {1, 5}, {2, 3}, {5, 1}, {9, 1}} {
		lr := search.NewLoadReader(&search.SliceReader{Cities: cities, Batch: tc.batch})
		got := []search.City{city("Kept", "Nowhere", 0)}
		calls := 0
		for {
			var err error
			got, err = lr.ReadBatch(t.Context(), got)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("batches of %d: %v", tc.batch, err)
			}
			calls++
		}
		want := append([]string{"Kept"}, cityNames(cities)...)
		if !slices.Equal(cityNames(got), want) || lr.Count() != len(cities) || calls != tc.calls {
			t.Errorf("batches of %d: %q in %d batches, count %d; want %q in %d, %d",
				tc.batch, cityNames(got), calls, lr.Count(), want, tc.calls, len(cities))
		}
	}
}

// Of two cities with the same Key, Collect (every store's rule) keeps the
// one that BySlug puts first, the more populous, in whichever order they
// come.
func TestCollectKeepsTheCityBySlugPutsFirst(t *testing.T) {
	big, small := city("Paris", "France", 2_000_000), city("Paris", "France", 100)
	if search.BySlug(&big, &small) >= 0 {
		t.Fatalf("BySlug does not put the more populous Paris first")
	}
	for _, in := range [][]search.City{{big, small}, {small, big}} {
		got, stats, err := search.Collect(t.Context(), &search.SliceReader{Cities: in, Batch: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Population != big.Population || stats != (search.LoadStats{Read: 2, Stored: 1}) {
			t.Errorf("from %v: kept %+v (%+v), want the Paris of %d", in, got, stats, big.Population)
		}
	}
}
