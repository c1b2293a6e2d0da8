// Package storetest is the conformance suite of the search.Store contract:
// every backend's test calls Run, so all backends are held to the same
// behaviour, with the in-memory store as the reference ranking. Wrap is a
// decorator around a store that keeps every feature of it, for tests that
// make a store fail or count what it is asked; RunWrapped holds it to the
// whole suite.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// Opener returns a new, empty store for one subtest; the suite closes it.
type Opener func(t *testing.T) search.Store

// Option tunes the suite for one backend.
type Option func(*config)

type config struct {
	referenceCities  int      // 0: 2,000
	referenceQueries int      // 0: all
	pending          []string // see Pending
}

// Pending skips the named subtests, for a store on its way to passing
// them; it must not stay. With "matches alternate names" pending, the
// reference cities have none either.
func Pending(subtests ...string) Option {
	return func(c *config) { c.pending = append(c.pending, subtests...) }
}

func (c *config) mainNamesOnly() bool { return slices.Contains(c.pending, "matches alternate names") }

// SmallReference makes "matches the reference store" load only cities of
// the reference cities (2,000) and check only queries of its queries (about
// 1,500), spread evenly over them. It is for a stand-in server that reads
// every document for every query (FerretDB), where the whole set takes
// minutes; a real backend runs them all.
func SmallReference(cities, queries int) Option {
	return func(c *config) { c.referenceCities, c.referenceQueries = cities, queries }
}

// Run runs every conformance subtest against stores made by open, in
// parallel: each subtest opens a store of its own.
func Run(t *testing.T, open Opener, opts ...Option) {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	for _, st := range []struct {
		name string
		test func(*testing.T, Opener)
	}{
		{"unloaded dataset is empty", testUnloaded},
		{"stats describe the loaded dataset", testStats},
		{"check can refuse a load", testCheck},
		{"load reports its phases", testPhases},
		{"invalid queries are rejected", testInvalid},
		{"appends after what dst holds", testAppend},
		{"ranks without population", testRankNoPopulation},
		{"ranks by population with exact boost", testRankPopulation},
		{"keeps every field", testFields},
		{"drops duplicates keeping the most populous", testDuplicates},
		{"load replaces the dataset", testReplace},
		{"failed load keeps the old dataset", testFailedLoad},
		{"searches during a load see old or new", testConcurrentLoad},
		{"matches the reference store", func(t *testing.T, open Opener) { testReference(t, open, c) }},
		{"filters by country", testCountries},
		{"finds typos", testTypos},
		{"the Service ranks its answers by Score", testScore},
		{"finds the typos of the reference store", testTypoFinder},
		{"matches alternate names", testAltNames},
		{"finds typos in alternate names", testAltNameTypos},
		{"matches later words", testWords},
		{"leaves out later words only past Lines", testLines},
		{"filters by region", testRegions},
		{"filters by box", testBox},
		{"filters by population", testPopulated},
		{"keeps local names", testLocalNames},
		{"looks up cities by id", testLookup},
		{"finds the cities around a point", testNearby},
		{"names the city a point is in before its districts", testNearbyRule},
		{"numbers each content of a dataset", testVersions},
	} {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			if slices.Contains(c.pending, st.name) {
				t.Skip("pending: the store does not do this yet")
			}
			st.test(t, open)
		})
	}
}

// City builds a test city with its slug.
func City(name, country, subcountry string, population int64) search.City {
	return search.City{Name: name, Slug: search.Slug(name), Country: country, Subcountry: subcountry, Population: population}
}

// loadBatch is how many cities MustLoad hands over per batch: few, so
// that every store shows it reads all the batches of a reader.
const loadBatch = 7

// MustLoad loads cities into dataset d, a few per batch, or fails the test.
func MustLoad(t testing.TB, s search.Store, d search.Dataset, cities ...search.City) search.LoadStats {
	t.Helper()
	stats, err := s.Load(context.Background(), d, &search.SliceReader{Cities: cities, Batch: loadBatch}, search.LoadOptions{})
	if err != nil {
		t.Fatalf("load %d cities into %s: %v", len(cities), d, err)
	}
	return stats
}

// MustSearch runs a query or fails the test.
func MustSearch(t testing.TB, s search.Store, d search.Dataset, prefix string, limit int) []search.Found {
	t.Helper()
	got, err := s.Search(context.Background(), nil, search.Query{Dataset: d, Prefix: prefix, Limit: limit})
	if err != nil {
		t.Fatalf("search %s %q limit %d: %v", d, prefix, limit, err)
	}
	return got
}

func openStore(t *testing.T, open Opener) search.Store {
	t.Helper()
	s := open(t)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func names(found []search.Found) []string {
	out := make([]string, len(found))
	for i, c := range found {
		out[i] = c.Name
		if c.Subcountry != "" || c.Region != "" {
			out[i] += " (" + c.Country + "/" + c.Subcountry + c.Region + ")"
		}
		if c.Key.Alt > 0 {
			out[i] += " as " + c.KeyName(c.Key)
		}
	}
	return out
}

// SameFound reports whether two answers of Search hold the same cities,
// found through the same keys, in the same order.
func SameFound(a, b []search.Found) bool {
	return slices.EqualFunc(a, b, func(x, y search.Found) bool { return x.Key == y.Key && x.City.Equal(&y.City) })
}

func testUnloaded(t *testing.T, open Opener) {
	s := openStore(t, open)
	for _, d := range search.Datasets {
		_, err := s.Search(t.Context(), nil, search.Query{Dataset: d, Prefix: "ist", Limit: 10})
		if !errors.Is(err, search.ErrEmptyDataset) {
			t.Errorf("search %s before any load: err = %v, want ErrEmptyDataset", d, err)
		}
		var de *search.DatasetError
		if errors.As(err, &de) && de.Dataset != d {
			t.Errorf("search %s before any load: the error names dataset %s", d, de.Dataset)
		}
		if _, err := s.Stats(t.Context(), d); !errors.Is(err, search.ErrEmptyDataset) {
			t.Errorf("stats of %s before any load: err = %v, want ErrEmptyDataset", d, err)
		}
	}
	if _, err := s.Stats(t.Context(), "huge"); !errors.Is(err, search.ErrUnknownDataset) {
		t.Errorf("stats of an unknown dataset: err = %v, want ErrUnknownDataset", err)
	}
}

func testStats(t *testing.T, open Opener) {
	s := openStore(t, open)
	src := search.Source{Name: "world-cities.csv", Size: 1329857}
	before := time.Now().Add(-time.Second) // a server's clock may differ a little
	cities := []search.City{City("Paris", "France", "Ile-de-France", 0), City("Parma", "Italy", "Emilia-Romagna", 0),
		City("Paris", "France", "Ile-de-France", 0)}
	if _, err := s.Load(t.Context(), search.Small, &search.SliceReader{Cities: cities}, search.LoadOptions{Source: src}); err != nil {
		t.Fatal(err)
	}
	after := time.Now().Add(time.Second)
	got, err := s.Stats(t.Context(), search.Small)
	if err != nil {
		t.Fatal(err)
	}
	if got.Cities != 2 || got.Source != src {
		t.Errorf("stats = %+v, want 2 cities from %+v", got, src)
	}
	if got.Imported.Before(before) || got.Imported.After(after) {
		t.Errorf("imported at %v, want between %v and %v", got.Imported, before, after)
	}
	if _, err := s.Stats(t.Context(), search.Large); !errors.Is(err, search.ErrEmptyDataset) {
		t.Errorf("stats of the other dataset: err = %v, want ErrEmptyDataset", err)
	}
	MustLoad(t, s, search.Small, City("Parla", "Spain", "Madrid", 0))
	if got, err := s.Stats(t.Context(), search.Small); err != nil || got.Cities != 1 || got.Source != (search.Source{}) {
		t.Errorf("after a second load without a source: %+v, %v; want 1 city and no source", got, err)
	}
}

func testPhases(t *testing.T, open Opener) {
	s := openStore(t, open)
	var phases []string
	opts := search.LoadOptions{Phase: func(p string) { phases = append(phases, p) }}
	if _, err := s.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{City("Paris", "France", "", 0)}}, opts); err != nil {
		t.Fatal(err)
	}
	order := []string{search.PhaseSorting, search.PhaseIndexing, search.PhaseWriting, search.PhaseSwapping}
	next := 0
	for _, p := range phases {
		i := slices.Index(order[next:], p)
		if i < 0 {
			t.Fatalf("phases %q: %q is unknown, repeated or out of order", phases, p)
		}
		next += i + 1
	}
	if len(phases) == 0 || phases[len(phases)-1] != search.PhaseSwapping {
		t.Errorf("phases %q, want them to end with %q", phases, search.PhaseSwapping)
	}
}

func testCheck(t *testing.T, open Opener) {
	s := openStore(t, open)
	var prevs []search.DatasetStats
	var nexts []search.LoadStats
	record := func(prev search.DatasetStats, next search.LoadStats) error {
		prevs, nexts = append(prevs, prev), append(nexts, next)
		return nil
	}
	first := []search.City{City("Paris", "France", "Ile-de-France", 0), City("Parma", "Italy", "Emilia-Romagna", 0)}
	if _, err := s.Load(t.Context(), search.Small, &search.SliceReader{Cities: first}, search.LoadOptions{Check: record}); err != nil {
		t.Fatal(err)
	}
	if len(prevs) != 1 || prevs[0].Cities != 0 || nexts[0] != (search.LoadStats{Read: 2, Stored: 2}) {
		t.Fatalf("check of the first load saw %+v and %+v, want an empty dataset and 2 read, 2 stored", prevs, nexts)
	}
	refuse := errors.New("too few cities")
	check := func(prev search.DatasetStats, next search.LoadStats) error {
		if prev.Cities != 2 || next.Stored != 1 {
			return fmt.Errorf("check saw %+v and %+v, want 2 cities and 1 stored", prev, next)
		}
		return refuse
	}
	_, err := s.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{City("Parla", "Spain", "Madrid", 0)}},
		search.LoadOptions{Check: check})
	if !errors.Is(err, refuse) {
		t.Errorf("load refused by its check: err = %v, want %v", err, refuse)
	}
	if got := names(MustSearch(t, s, search.Small, "par", 10)); !slices.Equal(got, []string{"Paris (France/Ile-de-France)", "Parma (Italy/Emilia-Romagna)"}) {
		t.Errorf("after a refused load: %q, want the old dataset", got)
	}
	if st, err := s.Stats(t.Context(), search.Small); err != nil || st.Cities != 2 {
		t.Errorf("stats after a refused load: %+v, %v; want the old 2 cities", st, err)
	}
}

func testInvalid(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Small, City("Paris", "France", "Ile-de-France", 0))
	for _, tc := range []struct {
		name string
		q    search.Query
		want error
	}{
		{"unknown dataset", search.Query{Dataset: "huge", Prefix: "par", Limit: 10}, search.ErrUnknownDataset},
		{"empty prefix", search.Query{Dataset: search.Small, Prefix: "", Limit: 10}, search.ErrInvalidQuery},
		{"zero limit", search.Query{Dataset: search.Small, Prefix: "par", Limit: 0}, search.ErrInvalidQuery},
		{"limit over max", search.Query{Dataset: search.Small, Prefix: "par", Limit: search.MaxLimit + 1}, search.ErrInvalidQuery},
		{"negative lines", search.Query{Dataset: search.Small, Prefix: "par", Limit: 10, Lines: -1}, search.ErrInvalidQuery},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Search(t.Context(), nil, tc.q)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := s.Load(t.Context(), "huge", &search.SliceReader{}, search.LoadOptions{}); !errors.Is(err, search.ErrUnknownDataset) {
		t.Errorf("load into unknown dataset: err = %v, want ErrUnknownDataset", err)
	}
}

// testAppend holds Search to append: the answer comes after what dst
// holds, which stays as it was, in a slice reused from search to search,
// and an error leaves dst as it was.
func testAppend(t *testing.T, open Opener) {
	s := openStore(t, open)
	cities := ReferenceCities(500)
	MustLoad(t, s, search.Large, cities...)
	head := search.Found{City: City("Head", "Nowhere", "", 0)}
	var buf []search.Found
	for _, p := range []string{"san", "a", "ta", "qqq", "ber"} {
		for _, limit := range []int{1, 10, search.MaxLimit} {
			q := search.Query{Dataset: search.Large, Prefix: p, Limit: limit, Words: true}
			want, err := s.Search(t.Context(), nil, q)
			if err != nil {
				t.Fatal(err)
			}
			dst := slices.Grow(append(buf[:0], head), limit) // room for the answer: in place
			got, err := s.Search(t.Context(), dst, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1+len(want) || got[0].Name != "Head" || !SameFound(got[1:], want) {
				t.Errorf("%q limit %d: got %q after the head, want %q", p, limit, names(got[1:]), names(want))
			}
			buf = got // the next answer overwrites this one
		}
	}
	dst := []search.Found{head}
	got, err := s.Search(t.Context(), dst, search.Query{Dataset: search.Large, Prefix: "", Limit: 10})
	if !errors.Is(err, search.ErrInvalidQuery) || len(got) != 1 || got[0].Name != "Head" {
		t.Errorf("invalid query: %q, %v; want the head alone and ErrInvalidQuery", names(got), err)
	}
}

func testRankNoPopulation(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Small,
		City("Istres", "France", "Provence-Alpes-Côte d'Azur", 0),
		City("Istra", "Russia", "MO", 0),
		City("Istaravshan", "Tajikistan", "Viloyati Sughd", 0),
		City("İstanbul", "Turkey", "Istanbul", 0),
		City("Istok", "Kosovo", "Pec", 0),
		City("İstinye", "Türkiye", "Istanbul", 0),
		City("São Paulo", "Brazil", "Sao Paulo", 0),
		City("Sao Paulo de Olivenca", "Brazil", "Amazonas", 0),
		City("Xi'an", "China", "Shaanxi", 0),
		City("Paris", "France", "Ile-de-France", 0),
		City("Paris", "United States", "Texas", 0),
	)
	for _, tc := range []struct {
		prefix string
		limit  int
		want   []string
	}{
		// Shorter slug first, then alphabetical: istinye (7) before istanbul (8).
		{"ist", 10, []string{"Istok (Kosovo/Pec)", "Istra (Russia/MO)", "Istres (France/Provence-Alpes-Côte d'Azur)",
			"İstinye (Türkiye/Istanbul)", "İstanbul (Turkey/Istanbul)", "Istaravshan (Tajikistan/Viloyati Sughd)"}},
		{"ist", 2, []string{"Istok (Kosovo/Pec)", "Istra (Russia/MO)"}},
		{"istanbul", 10, []string{"İstanbul (Turkey/Istanbul)"}},
		{"sao-p", 10, []string{"São Paulo (Brazil/Sao Paulo)", "Sao Paulo de Olivenca (Brazil/Amazonas)"}},
		{"xian", 10, []string{"Xi'an (China/Shaanxi)"}},
		{"paris", 10, []string{"Paris (France/Ile-de-France)", "Paris (United States/Texas)"}},
		{"zzz", 10, []string{}},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.prefix, tc.limit), func(t *testing.T) {
			if got := names(MustSearch(t, s, search.Small, tc.prefix, tc.limit)); !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func testRankPopulation(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Large,
		City("Paris", "France", "A8", 2138551),
		City("Par", "United Kingdom", "C6", 1600),
		City("Parma", "Italy", "05", 175895),
		City("Paraná", "Argentina", "08", 0),
		City("Bath", "United Kingdom", "K2", 88859),
		City("Bathinda", "India", "23", 285813),
		City("Bathurst", "Australia", "02", 0),
		City("Bat", "Nowhere", "00", 10),
		City("Batam", "Indonesia", "17", 1164352),
	)
	for _, tc := range []struct {
		prefix string
		want   []string
	}{
		{"par", []string{"Paris (France/A8)", "Parma (Italy/05)", "Par (United Kingdom/C6)", "Paraná (Argentina/08)"}},
		{"bath", []string{"Bath (United Kingdom/K2)", "Bathinda (India/23)", "Bathurst (Australia/02)"}},
		{"bat", []string{"Batam (Indonesia/17)", "Bathinda (India/23)", "Bath (United Kingdom/K2)", "Bat (Nowhere/00)", "Bathurst (Australia/02)"}},
	} {
		t.Run(tc.prefix, func(t *testing.T) {
			if got := names(MustSearch(t, s, search.Large, tc.prefix, 10)); !slices.Equal(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func testFields(t *testing.T, open Opener) {
	s := openStore(t, open)
	want := []search.City{
		{ID: 745044, Name: "İstanbul", Slug: "istanbul", Country: "Turkey", Subcountry: "Istanbul"},
		{Name: "Zürich", Slug: "zurich", Country: "Switzerland", CountryCode: "ch", Region: "25",
			Population: 341730, Lat: 47.3666667, Lon: 8.55, HasLocation: true},
		{Name: "Quito", Slug: "quito", Country: "Ecuador", CountryCode: "ec", Region: "18",
			Population: 1399814, Lat: -0.2166667, Lon: -78.5, HasLocation: true},
	}
	MustLoad(t, s, search.Large, want...)
	for _, w := range want {
		got := MustSearch(t, s, search.Large, w.Slug, 10)
		if len(got) == 1 && w.ID == 0 && got[0].ID >= search.DerivedIDBase {
			w.ID = got[0].ID // a city without an id gets a derived one (see testLookup)
		}
		if len(got) != 1 || !got[0].City.Equal(&w) {
			t.Errorf("search %q:\n got %+v\nwant %+v", w.Slug, got, w)
		}
	}
}

func testDuplicates(t *testing.T, open Opener) {
	s := openStore(t, open)
	stats := MustLoad(t, s, search.Large,
		City("Springfield", "United States", "IL", 0),
		City("Springfield", "United States", "IL", 116250),
		City("Springfield", "United States", "IL", 0),
		City("Springfield", "United States", "MO", 159498),
		City("Springfield", "Australia", "QLD", 0),
	)
	if stats.Read != 5 || stats.Stored != 3 {
		t.Errorf("stats = %+v, want 5 read, 3 stored", stats)
	}
	got := MustSearch(t, s, search.Large, "springfield", 10)
	want := []string{"Springfield (United States/MO)", "Springfield (United States/IL)", "Springfield (Australia/QLD)"}
	if !slices.Equal(names(got), want) {
		t.Fatalf("got %q, want %q", names(got), want)
	}
	if got[1].Population != 116250 {
		t.Errorf("kept the IL duplicate with population %d, want the one with 116250", got[1].Population)
	}
}

func testReplace(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Small, City("Paris", "France", "Ile-de-France", 0), City("Parma", "Italy", "Emilia-Romagna", 0))
	MustLoad(t, s, search.Small, City("Parla", "Spain", "Madrid", 0))
	if got := names(MustSearch(t, s, search.Small, "par", 10)); !slices.Equal(got, []string{"Parla (Spain/Madrid)"}) {
		t.Errorf("after reload: %q, want only Parla", got)
	}
	// Datasets are independent.
	MustLoad(t, s, search.Large, City("Paris", "France", "A8", 2138551))
	if got := names(MustSearch(t, s, search.Small, "par", 10)); !slices.Equal(got, []string{"Parla (Spain/Madrid)"}) {
		t.Errorf("small after loading large: %q", got)
	}
}

// failingReader yields some cities, then fails.
type failingReader struct {
	cities []search.City
	err    error
}

func (r *failingReader) ReadBatch(dst []search.City) ([]search.City, error) {
	if len(r.cities) == 0 {
		return dst, r.err
	}
	dst = append(dst, r.cities...)
	r.cities = nil
	return dst, nil
}

func testFailedLoad(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Small, City("Paris", "France", "Ile-de-France", 0))
	broken := errors.New("disk on fire")
	canceled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		r    search.CityReader
		want error
	}{
		{"reader error", t.Context(), &failingReader{cities: []search.City{City("Parla", "Spain", "Madrid", 0)}, err: broken}, broken},
		{"canceled", canceled, &search.SliceReader{Cities: []search.City{City("Parla", "Spain", "Madrid", 0)}}, context.Canceled},
		{"no cities", t.Context(), &search.SliceReader{}, search.ErrNoCities},
		{"city without name", t.Context(), &search.SliceReader{Cities: []search.City{City("Parla", "Spain", "Madrid", 0), {Slug: "x"}}}, search.ErrInvalidCity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Load(tc.ctx, search.Small, tc.r, search.LoadOptions{}); !errors.Is(err, tc.want) {
				t.Errorf("load: err = %v, want %v", err, tc.want)
			}
			if got := names(MustSearch(t, s, search.Small, "par", 10)); !slices.Equal(got, []string{"Paris (France/Ile-de-France)"}) {
				t.Errorf("after failed load: %q, want the old Paris", got)
			}
		})
	}
}

func testConcurrentLoad(t *testing.T, open Opener) {
	s := openStore(t, open)
	gen := func(country string) []search.City {
		out := make([]search.City, 300)
		for i := range out {
			out[i] = City(fmt.Sprintf("Sample %03d", i), country, "", int64(i))
		}
		return out
	}
	MustLoad(t, s, search.Small, gen("A")...)
	ctx, stop := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				got, err := s.Search(ctx, nil, search.Query{Dataset: search.Small, Prefix: "sample", Limit: 50})
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				if len(got) != 50 {
					errs <- fmt.Errorf("got %d cities during a load, want 50", len(got))
					return
				}
				for _, c := range got[1:] {
					if c.Country != got[0].Country {
						errs <- fmt.Errorf("mixed datasets in one answer: %s and %s", got[0].Country, c.Country)
						return
					}
				}
			}
		})
	}
	for i := range 3 {
		MustLoad(t, s, search.Small, gen(string(rune('B'+i)))...)
	}
	stop()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := MustSearch(t, s, search.Small, "sample", 1); got[0].Country != "D" {
		t.Errorf("after the loads: country %q, want D", got[0].Country)
	}
}

// Syllables make names that share many prefixes, so that some prefixes have
// far more matches than a store may want to scan.
var syllables = []string{"san", "ta", "ma", "ri", "a", "ber", "lin", "new", " ", "-", "o", "ca", "sta", "kar", "é", "ø", "'", "z"}

// altSyllables make alternate names, in several scripts.
var altSyllables = []string{"san", "ta", "ber", "new", " ", "Мос", "ква", "сан", "東", "京", "é", "'", "kar"}

// ReferenceCities returns n deterministic cities with populations (some
// unknown), alternate names (a third of them), many shared prefixes and
// some duplicates.
func ReferenceCities(n int) []search.City {
	rng := rand.New(rand.NewPCG(1, 2))
	countries := []string{"Chile", "Spain", "Norway", "Iran, Islamic Republic of"}
	word := func(parts []string) string {
		var b strings.Builder
		for k := 1 + rng.IntN(4); k > 0; k-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		return strings.TrimSpace(b.String())
	}
	out := make([]search.City, 0, n)
	for len(out) < n {
		name := word(syllables)
		if search.Slug(name) == "" {
			continue
		}
		var pop int64
		if rng.IntN(3) > 0 {
			pop = int64(rng.IntN(5)) * int64(rng.IntN(100000))
		}
		c := City(name, countries[rng.IntN(len(countries))], fmt.Sprintf("R%d", rng.IntN(3)), pop)
		c.ID = uint32(len(out) + 1)
		if rng.IntN(3) == 0 {
			for k := 1 + rng.IntN(2); k > 0; k-- {
				c.AltNames = append(c.AltNames, word(altSyllables))
			}
		}
		out = append(out, c)
		if rng.IntN(20) == 0 { // a duplicate listing of the same place
			d := c
			d.ID, d.Population = 0, 0
			out = append(out, d)
		}
	}
	return out
}

func testReference(t *testing.T, open Opener, c config) {
	sample := c.referenceQueries
	n := 2000
	if c.referenceCities > 0 {
		n = c.referenceCities
	}
	s := openStore(t, open)
	ref := memory.New()
	defer ref.Close()
	cities := ReferenceCities(n)
	if c.mainNamesOnly() {
		for i := range cities {
			cities[i].AltNames = nil
		}
	}
	MustLoad(t, ref, search.Large, cities...)
	if got, want := MustLoad(t, s, search.Large, cities...), MustLoad(t, ref, search.Large, cities...); got != want {
		t.Errorf("load stats = %+v, reference %+v", got, want)
	}
	prefixes := map[string]bool{}
	for _, c := range cities[:100] {
		for n := 1; n <= len(c.Slug) && n <= 6; n++ {
			if p := strings.TrimRight(c.Slug[:n], "-"); p != "" {
				prefixes[p] = true
			}
		}
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for p := range prefixes {
			if !yield(p) {
				return
			}
		}
	})
	var queries []search.Query
	for _, p := range keys {
		for _, q := range []search.Query{
			{Limit: 1}, {Limit: 10}, {Limit: search.MaxLimit},
			{Limit: 10, Countries: []string{"cl"}}, {Limit: search.MaxLimit, Countries: []string{"no", "es"}},
			{Limit: 10, Populated: true}, {Limit: 10, Countries: []string{"cl"}, Populated: true},
		} {
			q.Dataset, q.Prefix = search.Large, p
			queries = append(queries, q)
		}
	}
	if sample > 0 && sample < len(queries) {
		step := float64(len(queries)) / float64(sample)
		picked := make([]search.Query, sample)
		for i := range picked {
			picked[i] = queries[int(float64(i)*step)]
		}
		queries = picked
	}
	for _, q := range queries {
		want, err := ref.Search(t.Context(), nil, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Search(t.Context(), nil, q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		if !SameFound(got, want) {
			t.Errorf("prefix %q limit %d countries %q populated %t:\n got %q\nwant %q", q.Prefix, q.Limit, q.Countries, q.Populated, names(got), names(want))
		}
	}
}

// CountryCity builds a test city with its slug and country code.
func CountryCity(name, country, code string, population int64) search.City {
	c := City(name, country, "", population)
	c.CountryCode = code
	return c
}

func testCountries(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Large,
		CountryCity("Santiago", "Chile", "cl", 4837295),
		CountryCity("San Bernardo", "Chile", "cl", 262990),
		CountryCity("Santa Cruz", "Chile", "cl", 0),
		CountryCity("Santo Domingo", "Dominican Republic", "do", 2201941),
		CountryCity("Sanaa", "Yemen", "ye", 1937451),
		CountryCity("San Juan", "Argentina", "ar", 447048),
		CountryCity("Salta", "Argentina", "ar", 512686),
	)
	for _, tc := range []struct {
		countries []string
		want      []string
	}{
		{nil, []string{"Santiago", "Santo Domingo", "Sanaa", "San Juan", "San Bernardo", "Santa Cruz"}},
		{[]string{"cl"}, []string{"Santiago", "San Bernardo", "Santa Cruz"}},
		{[]string{"ar", "ye"}, []string{"Sanaa", "San Juan"}},
		{[]string{"fr"}, []string{}},
	} {
		t.Run(strings.Join(tc.countries, ","), func(t *testing.T) {
			got, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: "san", Limit: 10, Countries: tc.countries})
			if err != nil {
				t.Fatal(err)
			}
			var gotNames []string
			for _, c := range got {
				gotNames = append(gotNames, c.Name)
			}
			if !slices.Equal(gotNames, tc.want) && !(len(gotNames) == 0 && len(tc.want) == 0) {
				t.Errorf("got %q, want %q", gotNames, tc.want)
			}
		})
	}
	if _, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: "san", Limit: 10, Countries: []string{"Chile"}}); !errors.Is(err, search.ErrInvalidQuery) {
		t.Errorf("a country that is not a code: err = %v, want ErrInvalidQuery", err)
	}
}

// skipWithoutTypos skips a test of typo matching on a store where the
// Service finds none (see search.Service.FindsTypos).
func skipWithoutTypos(t *testing.T, s search.Store) {
	t.Helper()
	if !search.NewService(s).FindsTypos() {
		t.Skip("the Service finds no typo matches in this store")
	}
}

func testTypos(t *testing.T, open Opener) {
	s := openStore(t, open)
	skipWithoutTypos(t, s)
	MustLoad(t, s, search.Large,
		CountryCity("Zürich", "Switzerland", "ch", 341730),
		CountryCity("Zug", "Switzerland", "ch", 23435),
		CountryCity("Zuera", "Spain", "es", 6000),
		CountryCity("Zurita", "Spain", "es", 0),
		CountryCity("Paris", "France", "fr", 2138551),
		CountryCity("Parisot", "France", "fr", 0),
		CountryCity("Pari", "Brazil", "br", 0),
		CountryCity("Paros", "Greece", "gr", 13715),
		CountryCity("Baris", "Turkey", "tr", 0),
		CountryCity("San Francisco", "United States", "us", 864816),
		CountryCity("San Fernando", "Chile", "cl", 49519),
		CountryCity("Palermo", "Italy", "it", 668405),
	)
	svc := search.NewService(s)
	for _, tc := range []struct {
		name      string
		prefix    string
		fuzzy     bool
		countries []string
		want      []string
	}{
		{"transposed letters", "zuirch", true, nil, []string{"Zürich"}},
		{"one edit on a large place ranks by its score, before a prefix match of a small one", "paros", true, nil, []string{"Paris", "Paros", "Parisot"}},
		{"no typos once a prefix match is a place of search.TypedRightScore", "paris", true, nil, []string{"Paris", "Parisot"}},
		{"typos off", "paris", false, nil, []string{"Paris", "Parisot"}},
		{"no typos below five letters", "pars", true, nil, nil},
		{"two edits from nine letters on", "san-fransisko", true, nil, []string{"San Francisco"}},
		{"two edits from seven letters on", "palmero", true, nil, []string{"Palermo"}},
		{"two edits are too many below seven letters", "zuirhc", true, nil, nil},
		{"country filter keeps a typo match", "zuriat", true, []string{"es"}, []string{"Zurita"}},
		{"country filter drops a typo match", "zuirch", true, []string{"es"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotNames := mustFindNames(t, svc, search.Request{Dataset: search.Large, Text: tc.prefix, Limit: 10, Fuzzy: tc.fuzzy, Countries: strings.Join(tc.countries, ",")})
			if !slices.Equal(gotNames, tc.want) {
				t.Errorf("%q: got %q, want %q", tc.prefix, gotNames, tc.want)
			}
		})
	}
}

// typoQueries returns n deterministic misspellings of prefixes of the
// cities' slugs: from 5 to 14 letters, with one or two random edits.
func typoQueries(cities []search.City, n int) []string {
	rng := rand.New(rand.NewPCG(3, 4))
	const letters = "abcdefghijklmnorstuz-"
	out := make([]string, 0, n)
	for len(out) < n {
		slug := cities[rng.IntN(len(cities))].Slug
		if len(slug) < 5 {
			continue
		}
		q := []byte(slug[:5+rng.IntN(min(len(slug), 14)-4)])
		for range 1 + rng.IntN(2) {
			i := rng.IntN(len(q))
			switch rng.IntN(4) {
			case 0:
				q[i] = letters[rng.IntN(len(letters))]
			case 1:
				q = slices.Insert(q, i, letters[rng.IntN(len(letters))])
			case 2:
				q = slices.Delete(q, i, i+1)
			default:
				if i+1 < len(q) {
					q[i], q[i+1] = q[i+1], q[i]
				}
			}
		}
		if p := search.Slug(string(q)); len(p) >= 5 {
			out = append(out, p)
		}
	}
	return out
}

// testTypoFinder holds a store's typo search to the reference store's
// (the memory store's walk of its trie, see search.WalkTypos): same
// cities, same order, same corrections.
func testTypoFinder(t *testing.T, open Opener) {
	s := openStore(t, open)
	finder, ok := s.(search.TypoFinder)
	if !ok {
		t.Skip("the store finds no typos")
	}
	ref := memory.New()
	defer ref.Close()
	cities := ReferenceCities(2000)
	MustLoad(t, s, search.Large, cities...)
	MustLoad(t, ref, search.Large, cities...)
	for i, p := range typoQueries(cities, 600) {
		q := search.Query{Dataset: search.Large, Prefix: p, Limit: []int{1, 10, search.MaxLimit}[i%3]}
		if i%5 == 0 {
			q.Countries = []string{"cl", "es"}
		}
		q.Populated = i%4 == 1 // as the Service asks when prefix matches are weak

		for edits := 1; edits <= 2; edits++ {
			want, err := ref.FindTypos(t.Context(), q, edits)
			if err != nil {
				t.Fatal(err)
			}
			got, err := finder.FindTypos(t.Context(), q, edits)
			if err != nil {
				t.Fatalf("%+v, %d edits: %v", q, edits, err)
			}
			if !slices.EqualFunc(got, want, sameTypo) {
				t.Fatalf("%q limit %d countries %q populated %t, %d edits:\n got %v\nwant %v", p, q.Limit, q.Countries, q.Populated, edits, typoNames(got), typoNames(want))
			}
		}
	}
}

func sameTypo(a, b search.Typo) bool {
	return a.Edits == b.Edits && a.Corrected == b.Corrected && a.Key == b.Key && a.City.Equal(&b.City)
}

func typoNames(typos []search.Typo) []string {
	out := make([]string, len(typos))
	for i, t := range typos {
		out[i] = fmt.Sprintf("%s (%s, %d via %s, key %q)", t.City.Name, t.City.Country, t.Edits, t.Corrected, t.Key.Slug)
	}
	return out
}

// altCities are places with alternate names in several scripts, and
// places whose main name another city has as an alternate name.
func altCities() []search.City {
	with := func(c search.City, alts ...string) search.City {
		c.AltNames = alts
		return c
	}
	return []search.City{
		with(CountryCity("Köln", "Germany", "de", 963395), "Cologne", "Colonia", "Kelne", "Кёльн", "ケルン", "Koeln"),
		CountryCity("Cologne", "Italy", "it", 7000),
		CountryCity("Colonia del Sacramento", "Uruguay", "uy", 21714),
		with(CountryCity("Moscow", "Russia", "ru", 10381222), "Moskva", "Москва", "Moscou"),
		with(CountryCity("Tokyo", "Japan", "jp", 8336599), "東京", "Tōkyō"),
		with(CountryCity("New York City", "United States", "us", 8175133), "NYC", "Nueva York"),
		with(CountryCity("Delhi", "India", "in", 10927986), "New Delhi", "Dilli"),
		with(CountryCity("Beijing", "China", "cn", 7480601), "Peking", "北京"),
		CountryCity("Pekin", "United States", "us", 34094),
	}
}

func testAltNames(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Large, altCities()...)
	for _, tc := range []struct {
		name      string
		prefix    string
		countries []string
		want      []string
	}{
		{"an alternate name finds its city, boosted when whole", "cologne", nil,
			[]string{"Köln as Cologne", "Cologne"}},
		{"the main name still finds it", "koln", nil, []string{"Köln"}},
		{"a city comes once, through its best name", "colo", nil,
			[]string{"Köln as Cologne", "Colonia del Sacramento", "Cologne"}},
		{"a name in another script has a key of its own", search.AltKey("Москва"), nil, []string{"Moscow as Москва"}},
		{"its transliteration in Latin letters is another name", "moskva", nil, []string{"Moscow as Moskva"}},
		{"a CJK name", search.AltKey("東京"), nil, []string{"Tokyo as 東京"}},
		{"Latin letters never reach a name in another script", "dong", nil, nil},
		{"an alternate name weighs less than the main name", "new", nil,
			[]string{"New York City", "Delhi as New Delhi"}},
		{"a whole alternate name outweighs a small town's whole main name", "peking", nil,
			[]string{"Beijing as Peking"}},
		{"a prefix of a whole alternate name", "pek", nil, []string{"Beijing as Peking", "Pekin"}},
		{"the country filter applies to the city", "colo", []string{"it", "uy"},
			[]string{"Colonia del Sacramento", "Cologne"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: tc.prefix, Limit: 10, Countries: tc.countries})
			if err != nil {
				t.Fatal(err)
			}
			if n := names(got); !slices.Equal(n, tc.want) {
				t.Errorf("%q: got %q, want %q", tc.prefix, n, tc.want)
			}
		})
	}
	// Alternate names come back with their city.
	got := MustSearch(t, s, search.Large, "koln", 1)
	if want := altCities()[0].AltNames; len(got) != 1 || !slices.Equal(got[0].AltNames, want) {
		t.Errorf("Köln's alternate names: %+v, want %q", got, want)
	}
}

func testAltNameTypos(t *testing.T, open Opener) {
	s := openStore(t, open)
	skipWithoutTypos(t, s)
	MustLoad(t, s, search.Large, altCities()...)
	svc := search.NewService(s)
	for _, tc := range []struct {
		text string
		want []string
	}{
		// Missing o: "cologne" within one edit, Köln through it first.
		{"colgne", []string{"Köln as Cologne", "Cologne"}},
		{"mosvka", []string{"Moscow as Moskva"}},
		// Typos stay within a script: one edit from "-moskva" (Москва),
		// none from a Latin name.
		{"Москвп", []string{"Moscow as Москва"}},
		{"dongjing", nil},
	} {
		t.Run(tc.text, func(t *testing.T) {
			res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: tc.text, Limit: 10, Fuzzy: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res.Hits {
				n := h.Name
				if h.Matched != nil {
					n += " as " + h.Matched.Name
				}
				got = append(got, n)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("%q: got %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}

func testWords(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Large,
		CountryCity("New York City", "United States", "us", 8175133),
		CountryCity("York", "United Kingdom", "gb", 153717),
		CountryCity("Yorkton", "Canada", "ca", 15669),
		CountryCity("São Paulo", "Brazil", "br", 10021295),
		CountryCity("Kuala Lumpur", "Malaysia", "my", 1453975),
		CountryCity("Paulo Afonso", "Brazil", "br", 85350),
	)
	for _, tc := range []struct {
		prefix string
		words  bool
		want   []string // name@offset of the key
	}{
		// Matches from the start of a name come first, then later words.
		{"york", true, []string{"York@0", "Yorkton@0", "New York City@4"}},
		{"york", false, []string{"York@0", "Yorkton@0"}},
		{"paulo", true, []string{"Paulo Afonso@0", "São Paulo@4"}},
		{"lumpur", true, []string{"Kuala Lumpur@6"}},
		{"city", true, []string{"New York City@9"}},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.prefix, tc.words), func(t *testing.T) {
			got, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: tc.prefix, Limit: 10, Words: tc.words})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range got {
				names = append(names, fmt.Sprintf("%s@%d", f.Name, f.Key.Offset))
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("got %q, want %q", names, tc.want)
			}
		})
	}
}

func testLines(t *testing.T, open Opener) {
	s := openStore(t, open)
	inRegion := func(name, region string, pop int64) search.City {
		c := CountryCity(name, "United Kingdom", "gb", pop)
		c.Subcountry, c.Region = "England", region
		return c
	}
	MustLoad(t, s, search.Large,
		inRegion("York", "Q5", 153717),
		inRegion("York", "H9", 2000), // reads as the York above
		inRegion("Yorkley", "E6", 1500),
		CountryCity("Yorkton", "Canada", "ca", 15669),
		CountryCity("New York City", "United States", "us", 8175133),
		CountryCity("East York", "Canada", "ca", 115365),
	)
	for _, tc := range []struct {
		name   string
		prefix string
		lines  int
		// cut is whether the store may leave out the later words: the
		// starts of names hold lines groups.
		cut bool
	}{
		{"four starts that read as three, three wanted", "york", 3, true},
		{"four starts that read as three, four wanted", "york", 4, false},
		{"one start, one wanted", "yorkt", 1, true},
		{"no start", "city", 1, false},
		{"lines 0", "york", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := search.Query{Dataset: search.Large, Prefix: tc.prefix, Limit: 10, Words: true}
			all, err := s.Search(t.Context(), nil, q)
			if err != nil {
				t.Fatal(err)
			}
			q.Lines = tc.lines
			got, err := s.Search(t.Context(), nil, q)
			if err != nil {
				t.Fatal(err)
			}
			starts := slices.IndexFunc(all, func(f search.Found) bool { return f.Key.Word() })
			if starts < 0 {
				starts = len(all)
			}
			mayCut := tc.cut && len(got) == starts && slices.EqualFunc(got, all[:starts], sameFound)
			if !mayCut && !slices.EqualFunc(got, all, sameFound) {
				t.Errorf("with Lines %d got %d matches, want the %d without it (or the %d starts of names: %v)", tc.lines, len(got), len(all), starts, tc.cut)
			}
			if search.LinesApart(all[:starts], max(tc.lines, 1)) != tc.cut && tc.lines > 0 {
				t.Errorf("LinesApart(%d starts, %d) = %v, want %v", starts, tc.lines, !tc.cut, tc.cut)
			}
		})
	}
}

// sameFound reports whether a and b are the same city through the same key.
func sameFound(a, b search.Found) bool {
	return a.City.Key() == b.City.Key() && a.ID == b.ID && a.Key == b.Key
}

func testRegions(t *testing.T, open Opener) {
	s := openStore(t, open)
	withRegion := func(name, subcountry, region string, pop int64) search.City {
		c := CountryCity(name, "United States", "us", pop)
		c.Subcountry, c.Region = subcountry, region
		return c
	}
	MustLoad(t, s, search.Large,
		withRegion("Springfield", "Illinois", "", 116250),
		withRegion("Springfield", "", "MO", 159498),
		withRegion("Springfield", "Massachusetts", "", 153060),
		withRegion("Springdale", "", "IL", 1000),
	)
	for _, tc := range []struct {
		regions []string
		want    []string
	}{
		{[]string{"il", "illinois"}, []string{"Springfield (United States/Illinois)", "Springdale (United States/IL)"}},
		{[]string{"mo"}, []string{"Springfield (United States/MO)"}},
		{[]string{"ohio"}, nil},
	} {
		t.Run(strings.Join(tc.regions, ","), func(t *testing.T) {
			got, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: "spring", Limit: 10, Regions: tc.regions})
			if err != nil {
				t.Fatal(err)
			}
			if n := names(got); !slices.Equal(n, tc.want) && len(n)+len(tc.want) > 0 {
				t.Errorf("got %q, want %q", n, tc.want)
			}
		})
	}
}

func testBox(t *testing.T, open Opener) {
	s := openStore(t, open)
	at := func(name string, pop int64, lat, lon float64) search.City {
		c := CountryCity(name, "Chile", "cl", pop)
		c.Lat, c.Lon, c.HasLocation = lat, lon, true
		return c
	}
	MustLoad(t, s, search.Large,
		at("Santiago", 4837295, -33.45694, -70.64827),
		at("San Bernardo", 262990, -33.59217, -70.6996),
		at("San Antonio", 85000, -33.59473, -71.60746),
		at("Santa Cruz", 0, -34.63881, -71.36382),
		CountryCity("San Nowhere", "Chile", "cl", 10), // no location
	)
	box := &search.Box{MinLon: -71, MinLat: -34, MaxLon: -70, MaxLat: -33}
	for _, tc := range []struct {
		name      string
		box       *search.Box
		countries []string
		want      []string
	}{
		{"inside the box", box, nil, []string{"Santiago", "San Bernardo"}},
		{"the box and a country", box, []string{"ar"}, nil},
		{"no box", nil, nil, []string{"Santiago", "San Bernardo", "San Antonio", "San Nowhere", "Santa Cruz"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: "san", Limit: 10, Box: tc.box, Countries: tc.countries})
			if err != nil {
				t.Fatal(err)
			}
			if n := foundNames(got); !slices.Equal(n, tc.want) {
				t.Errorf("got %q, want %q", n, tc.want)
			}
		})
	}
}

// foundNames returns the names of the cities found, nil for none (see
// cityNames for cities).
func foundNames(found []search.Found) []string {
	var out []string
	for _, f := range found {
		out = append(out, f.Name)
	}
	return out
}

func testPopulated(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Large,
		CountryCity("Santiago", "Chile", "cl", 4837295),
		CountryCity("Santa Cruz", "Chile", "cl", 0),
		CountryCity("San Antonio", "Chile", "cl", 85000),
		CountryCity("Sants", "Spain", "es", 0),
		CountryCity("Santa Ana", "Spain", "es", 120),
	)
	for _, tc := range []struct {
		name      string
		countries []string
		want      []string
	}{
		{"populated only", nil, []string{"Santiago", "San Antonio", "Santa Ana"}},
		{"and a country", []string{"cl"}, []string{"Santiago", "San Antonio"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: "san", Limit: 10, Countries: tc.countries, Populated: true})
			if err != nil {
				t.Fatal(err)
			}
			if n := foundNames(got); !slices.Equal(n, tc.want) {
				t.Errorf("got %q, want %q", n, tc.want)
			}
		})
	}
	finder, ok := s.(search.TypoFinder)
	if !ok {
		return
	}
	// "santa" is one edit from "santi", "san-a" and "sants": Sants has
	// no known population.
	for _, tc := range []struct {
		populated bool
		want      []string
	}{
		{false, []string{"Santiago", "San Antonio", "Sants"}},
		{true, []string{"Santiago", "San Antonio"}},
	} {
		typos, err := finder.FindTypos(t.Context(), search.Query{Dataset: search.Large, Prefix: "santa", Limit: 10, Populated: tc.populated}, 1)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ty := range typos {
			got = append(got, ty.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("typos of santa, populated %t: got %q, want %q", tc.populated, got, tc.want)
		}
	}
}

// mustFindNames returns the names of the cities svc finds for req, or
// fails the test.
func mustFindNames(t *testing.T, svc *search.Service, req search.Request) []string {
	t.Helper()
	res, err := svc.Find(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range res.Hits {
		names = append(names, h.Name)
	}
	return names
}

// Known returns c with alternate names: names, then made-up ones up to n
// in all, which no query of the suite reaches. How many a city has is how
// well known it is (see search.Score).
func Known(c search.City, n int, names ...string) search.City {
	c.AltNames = append([]string(nil), names...)
	for i := len(names); i < n; i++ {
		c.AltNames = append(c.AltNames, fmt.Sprintf("Qq %s %d", c.Name, i))
	}
	return c
}

// scoreCities are the cities of testScore: namesakes of every size, with
// the numbers of alternate names GeoNames gives them.
func scoreCities() []search.City {
	return []search.City{
		Known(CountryCity("Firenze", "Italy", "it", 371517), 75, "Florence", "Florenz"),
		Known(CountryCity("Florence", "United States", "us", 39319), 16),
		Known(CountryCity("Genève", "Switzerland", "ch", 183981), 48, "Geneva", "Genf"),
		Known(CountryCity("Geneva", "United States", "us", 21495), 4),
		Known(CountryCity("Köln", "Germany", "de", 963395), 80, "Cologne"),
		Known(CountryCity("Cologne", "Italy", "it", 7000), 3),
		Known(CountryCity("Glazov", "Russia", "ru", 100676), 20, "Glasow"),
		Known(CountryCity("Glasgow", "United Kingdom", "gb", 610268), 55),
		Known(CountryCity("Shanghai", "China", "cn", 14608512), 100, "Sangaj"),
		Known(CountryCity("San Diego", "United States", "us", 1394928), 40),
		Known(CountryCity("San Antonio", "United States", "us", 1469845), 40),
		Known(CountryCity("Santiago", "Chile", "cl", 4837295), 60),
		Known(CountryCity("Seoul", "South Korea", "kr", 10349312), 88, "Sol"),
		Known(CountryCity("Solāpur", "India", "in", 951558), 20, "Sholapur"),
		Known(CountryCity("Chicago", "United States", "us", 2695598), 59),
		Known(CountryCity("Srīkākulam", "India", "in", 118299), 3, "Chicacole"),
		Known(CountryCity("Van", "Türkiye", "tr", 371713), 27),
		Known(CountryCity("Vancouver", "Canada", "ca", 1837969), 54),
		Known(CountryCity("Bath", "United Kingdom", "gb", 88859), 20),
		Known(CountryCity("Bathinda", "India", "in", 285813), 10),
	}
}

func testScore(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Large, scoreCities()...)
	svc := search.NewService(s)
	for _, tc := range []struct {
		name  string
		text  string
		typos bool // the case needs typo matches
		want  []string
	}{
		{"a well-known alternate name typed whole counts as the name", "florence", false, []string{"Firenze", "Florence"}},
		{"an exonym beats namesakes in another country", "geneva", false, []string{"Genève", "Geneva"}},
		{"an exonym beats a village that bears it", "cologne", false, []string{"Köln", "Cologne"}},
		{"a mere prefix of an alternate name counts little", "san", false, []string{"Santiago", "San Antonio", "San Diego", "Shanghai"}},
		{"a short alternate name typed whole counts little", "sol", false, []string{"Solāpur", "Seoul"}},
		{"a short prefix does not promote a small whole name", "van", false, []string{"Vancouver", "Van"}},
		{"four letters do: the whole name beats a city three times larger", "bath", false, []string{"Bath", "Bathinda"}},
		{"a trailing space ends a word", "san ", false, []string{"San Antonio", "San Diego", "Santiago", "Shanghai"}},
		{"spaces inside do not", " san", false, []string{"Santiago", "San Antonio", "San Diego", "Shanghai"}},
		{"one edit on a large city beats a prefix of an obscure name", "chicaco", true, []string{"Chicago", "Srīkākulam"}},
		{"one edit on a large city beats a lesser-known alternate name typed whole", "glasow", true, []string{"Glasgow", "Glazov"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.typos {
				skipWithoutTypos(t, s)
			}
			gotNames := mustFindNames(t, svc, search.Request{Dataset: search.Large, Text: tc.text, Limit: 10, Fuzzy: true})
			if !slices.Equal(gotNames, tc.want) {
				t.Errorf("%q: got %q, want %q", tc.text, gotNames, tc.want)
			}
		})
	}
}
