package embedded_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// FindTypos answers exactly as search.WalkTypos, the walk it replaces, on a
// real dataset with the alternate names of GeoNames: thousands of
// misspelled prefixes of real names, main and alternate, with every limit,
// with and without a country filter and with and without keeping only
// cities of known population (the walk then leaves out the nodes without
// any: most of MaxMind's are hamlets of none), within one edit, and one in
// five within two (the walk for two edits is the slow one).
func TestFindTyposAgreesWithWalk(t *testing.T) {
	cities := readEnriched(t, shareddata.Path(t, "worldcitiespop-100k.txt.gz"), shareddata.Path(t, "geonames-cities1000.txt.gz"))
	s := mustOpen(t, t.TempDir(), embedded.Options{ReloadInterval: -1})
	defer s.Close()
	if _, err := s.Load(t.Context(), search.Large, &search.SliceReader{Cities: cities}, search.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.AwaitWalkAids(t.Context(), search.Large); err != nil || !ok {
		t.Fatalf("no nodes of known population (%v)", err)
	}
	n := 3000
	if testing.Short() {
		n = 300
	}
	rng := rand.New(rand.NewPCG(13, 7))
	queries := misspellings(rng, cities, n)
	type check struct {
		q     search.Query
		edits int
	}
	var checks []check
	for i, p := range queries {
		q := search.Query{Dataset: search.Large, Prefix: p, Limit: []int{1, 10, search.MaxLimit}[i%3]}
		switch i % 4 {
		case 1:
			q.Countries = []string{cities[rng.IntN(len(cities))].CountryCode}
		case 2:
			q.Countries = []string{cities[rng.IntN(len(cities))].CountryCode, "fr"}
		}
		q.Populated = i%7 < 3
		checks = append(checks, check{q, 1})
		if i%5 == 0 {
			checks = append(checks, check{q, 2})
		}
	}
	// Two workers: the walk is slow under the race detector.
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(checks); i += 2 {
				q, edits := checks[i].q, checks[i].edits
				want, err := search.WalkTypos(t.Context(), s, s.WalkTrie, q, edits)
				if err != nil {
					t.Error(err)
					return
				}
				got, err := s.FindTypos(t.Context(), q, edits)
				if err != nil {
					t.Errorf("%+v, %d edits: %v", q, edits, err)
					return
				}
				if !slices.EqualFunc(got, want, sameTypo) {
					t.Errorf("%q limit %d countries %q populated %t, %d edits:\n got %v\nwant %v", q.Prefix, q.Limit, q.Countries, q.Populated, edits, describe(got), describe(want))
					return
				}
			}
		})
	}
	wg.Wait()
}

// misspellings returns n folded prefixes of the cities' slugs (one in
// three of an alternate name's, for the cities that have some), of four
// letters or more, each with one or two random insertions, deletions,
// substitutions or transpositions.
func misspellings(rng *rand.Rand, cities []search.City, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		c := &cities[rng.IntN(len(cities))]
		slug := c.Slug
		if len(c.AltNames) > 0 && rng.IntN(3) == 0 {
			slug = search.Slug(c.AltNames[rng.IntN(len(c.AltNames))])
		}
		if len(slug) < 4 {
			continue
		}
		q := embedded.Misspell(rng, []byte(slug[:4+rng.IntN(min(len(slug), 20)-3)]))
		if p := search.Slug(string(q)); search.MaxEdits(p) > 0 {
			out = append(out, p)
		}
	}
	return out
}

func sameTypo(a, b search.Typo) bool {
	return a.Edits == b.Edits && a.Corrected == b.Corrected && a.Key == b.Key && a.City.Equal(&b.City)
}

func describe(typos []search.Typo) []string {
	out := make([]string, len(typos))
	for i, t := range typos {
		out[i] = fmt.Sprintf("%s (%s %s, %d via %s)", t.City.Slug, t.City.CountryCode, t.City.Region, t.Edits, t.Corrected)
	}
	return out
}

// Queries longer than the automaton holds, and datasets whose keys the trie
// cannot hold, take the Service's walk: the same answers still.
func TestFindTyposBeyondTheTrie(t *testing.T) {
	long := strings.Repeat("llanfair", 9) // 72 letters
	cities := append(storetest.ReferenceCities(300),
		storetest.City(long+"gwyngyll", "United Kingdom", "Wales", 3000),
		storetest.City(long[:70]+"x", "United Kingdom", "Wales", 0))
	odd := storetest.City("Odd", "X", "", 0)
	odd.Slug = "oddone_x" // not a folded slug: no trie for this dataset
	for _, tc := range []struct {
		name   string
		cities []search.City
		query  string
	}{
		{"a query of 70 bytes", cities, long[:35] + "x" + long[36:70]},
		{"a key outside the slug alphabet", append(slices.Clone(cities), odd), "oddonw"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustOpen(t, t.TempDir(), embedded.Options{ReloadInterval: -1})
			defer s.Close()
			storetest.MustLoad(t, s, search.Large, tc.cities...)
			q := search.Query{Dataset: search.Large, Prefix: tc.query, Limit: 10}
			for edits := 1; edits <= 2; edits++ {
				want, err := search.WalkTypos(t.Context(), s, s.WalkTrie, q, edits)
				if err != nil {
					t.Fatal(err)
				}
				got, err := s.FindTypos(t.Context(), q, edits)
				if err != nil {
					t.Fatal(err)
				}
				if len(want) == 0 || !slices.EqualFunc(got, want, sameTypo) {
					t.Errorf("%d edits: got %v, want %v (not empty)", edits, describe(got), describe(want))
				}
			}
		})
	}
}
