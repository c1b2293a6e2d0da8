package embedded_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

var (
	benchOnce   sync.Once
	benchCities []search.City
)

// benchmarkCities reads the MaxMind file named by $CITYFINDER_BENCH_MAXMIND
// (the full-size generated file, for example), or the 100k look-alike.
func benchmarkCities(b *testing.B) []search.City {
	b.Helper()
	path := os.Getenv("CITYFINDER_BENCH_MAXMIND")
	if path == "" {
		path = shareddata.Path(b, "worldcitiespop-100k.txt.gz")
	}
	benchOnce.Do(func() { benchCities = readMaxMind(b, path) })
	return benchCities
}

// readMaxMind reads every city of a MaxMind file.
func readMaxMind(tb testing.TB, path string) []search.City {
	return readEnriched(tb, path, "")
}

// readEnriched reads every city of a MaxMind file, enriched with the
// GeoNames dump at geonames (population, location and alternate names)
// unless it is "".
func readEnriched(tb testing.TB, path, geonames string) []search.City {
	tb.Helper()
	in, err := importer.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	var r search.CityReader
	r, err = importer.NewMaxMindReader(in, importer.ReaderOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	if geonames != "" {
		g, err := importer.OpenGazetteer(geonames)
		if err != nil {
			tb.Fatal(err)
		}
		r = g.Enrich(r)
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return cities
}

// BenchmarkLoad is the store's share of an import: sort, dedupe, rank the
// heavy prefixes and write the snapshot.
func BenchmarkLoad(b *testing.B) {
	cities := benchmarkCities(b)
	s := mustOpen(b, b.TempDir(), embedded.Options{ReloadInterval: -1})
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Load(b.Context(), search.Large, &search.SliceReader{Cities: cities}, search.LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(cities)*b.N)/b.Elapsed().Seconds(), "cities/s")
}

// BenchmarkImport is `cityfinder import --dataset large` in process: read,
// decode and fold the file, then Load.
func BenchmarkImport(b *testing.B) {
	path := os.Getenv("CITYFINDER_BENCH_MAXMIND")
	if path == "" {
		path = shareddata.Path(b, "worldcitiespop-100k.txt.gz")
	}
	s := mustOpen(b, b.TempDir(), embedded.Options{ReloadInterval: -1})
	defer s.Close()
	rows := 0
	for b.Loop() {
		sum, err := (&importer.Importer{Store: s}).Import(b.Context(), importer.Request{Dataset: search.Large, Source: importer.Source{Name: path}})
		if err != nil {
			b.Fatal(err)
		}
		rows += sum.Read
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// benchmarkStore opens the store in $CITYFINDER_BENCH_STORE (for example
// the one `make bench` imports), or loads the benchmark cities into a new one.
func benchmarkStore(b *testing.B) *embedded.Store {
	b.Helper()
	if dir := os.Getenv("CITYFINDER_BENCH_STORE"); dir != "" {
		return mustOpen(b, dir, embedded.Options{ReloadInterval: -1})
	}
	s := mustOpen(b, b.TempDir(), embedded.Options{ReloadInterval: -1})
	if _, err := s.Load(b.Context(), search.Large, &search.SliceReader{Cities: benchmarkCities(b)}, search.LoadOptions{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkSearch is a top-10 lookup: "san" is ranked at import, the
// others by a binary search and a short scan.
func BenchmarkSearch(b *testing.B) {
	s := benchmarkStore(b)
	defer s.Close()
	for _, prefix := range []string{"san", "zuri", "bathi", "qqqq"} {
		b.Run(prefix, func(b *testing.B) {
			q := search.Query{Dataset: search.Large, Prefix: prefix, Limit: 10}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Search(b.Context(), nil, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFind is a top-10 answer of the Service, as /search asks it
// with typos on, for queries whose prefix matches fill the answer: the
// Service's hot path, appending the store's answers into reused memory.
func BenchmarkFind(b *testing.B) {
	s := benchmarkStore(b)
	defer s.Close()
	svc := search.NewService(s)
	for _, text := range []string{"san", "zuri", "bathi"} {
		b.Run(text, func(b *testing.B) {
			req := search.Request{Dataset: search.Large, Text: text, Limit: 10, Fuzzy: true}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.Find(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTypoSearch is a top-10 lookup with typo matches on.
func BenchmarkTypoSearch(b *testing.B) {
	s := benchmarkStore(b)
	defer s.Close()
	svc := search.NewService(s)
	for _, prefix := range []string{"zuirch", "sna-francisco", "sna-fransisco", "bathinad", "kaarchi"} {
		b.Run(prefix, func(b *testing.B) {
			req := search.Request{Dataset: search.Large, Text: prefix, Limit: 10, Fuzzy: true}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := svc.Find(b.Context(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFindLength is Service.Find with typos on for queries of every
// length up to search.MaxQueryRunes: for each length, queries in the
// shapes that cost the most (one long word, short words that name
// nothing, a place followed by words that do not qualify it, misspelled
// words, letters that start no name) and names of places one after the
// other, each cut to that length. Each iteration runs them all; p50-ns
// and p99-ns are over the queries, each timed at its best iteration. Issue 22 bounds the p99 at 2 ms on the
// full-size large dataset (CITYFINDER_BENCH_STORE or
// CITYFINDER_BENCH_MAXMIND).
func BenchmarkFindLength(b *testing.B) {
	s := benchmarkStore(b)
	defer s.Close()
	svc := search.NewService(s)
	shapes := []string{
		strings.Repeat("sanfrancisco", 9),
		strings.Repeat("ab ", 34),
		"paris " + strings.Repeat("atlantis ", 11),
		strings.Repeat("chigaco ", 13),
		strings.Repeat("qxz", 34),
	}
	names := strings.Fields("london paris tokyo springfield san jose new york rio de janeiro cambridge " +
		"kingston portland richmond victoria hamilton perth newcastle valencia cordoba alexandria athens " +
		"dublin manchester toledo birmingham columbus charleston halifax wellington salem aurora durham")
	rng := rand.New(rand.NewPCG(22, 7))
	for _, n := range []int{10, 25, 50, 75, search.MaxQueryRunes} {
		var texts []string
		for _, shape := range shapes {
			for cut := max(search.MinQueryLetters, n-5); cut <= n; cut++ {
				texts = append(texts, strings.TrimSpace(shape[:min(cut, len(shape))]))
			}
		}
		for range 40 {
			text := names[rng.IntN(len(names))]
			for len(text) < n {
				text += " " + names[rng.IntN(len(names))]
			}
			texts = append(texts, strings.TrimSpace(text[:n-rng.IntN(5)]))
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			times := make([]time.Duration, len(texts))
			b.ReportAllocs()
			for b.Loop() {
				for i, text := range texts {
					start := time.Now()
					if _, err := svc.Find(b.Context(), search.Request{Dataset: search.Large, Text: text, Limit: search.DefaultLimit, Fuzzy: true}); err != nil {
						b.Fatal(err)
					}
					if d := time.Since(start); times[i] == 0 || d < times[i] { // the best of the iterations, as tools/benchtable times
						times[i] = d
					}
				}
			}
			for i, d := range times {
				if d > 2*time.Millisecond {
					b.Logf("SLOW %q %v", texts[i], d)
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(times[len(times)-1].Nanoseconds()), "max-ns")
		})
	}
}

// BenchmarkQuerySets times the query sets of `make bench` (see
// benchenv.SampleQueries) with Service.Find as /search asks it (typos on,
// limit 10), and the uniform prefixes and the typed log with the store's
// own top-10 lookup too: issue 26 holds Find on exact prefixes within 2×
// the lookup at p50 and 3× at p99, and biased Find (benchtable's row 7)
// within 2 ms at p99 and on the heavy prefixes. Each iteration runs every
// query once; p50-ns, p99-ns and max-ns are over the queries, each timed
// at its best iteration (use -benchtime 3x). typo-filled is the share of answers with
// typo matches, misspelled that of the typed log's queries typed with a
// typo, found that of misspelled slugs whose city is in the top 10: of
// slugs drawn uniformly (recall: mostly hamlets of no known population)
// and of cities drawn by population (recall-by-population: the places
// people look for, as the typed log draws them).
func BenchmarkQuerySets(b *testing.B) {
	s := benchmarkStore(b)
	defer s.Close()
	svc := search.NewService(s)
	sets := benchenv.SampleQueries(benchmarkCities(b))
	var typed []string
	misspelled := 0
	for _, q := range sets.Typed {
		typed = append(typed, q.Text)
		if q.Misspelled {
			misspelled++
		}
	}
	find := func(text string) (search.Result, error) {
		return svc.Find(b.Context(), search.Request{Dataset: search.Large, Text: text, Limit: 10, Fuzzy: true})
	}
	findText := func(_ int, text string) error { _, err := find(text); return err }
	lookup := func(_ int, text string) error {
		_, err := s.Search(b.Context(), nil, search.Query{Dataset: search.Large, Prefix: search.Slug(text), Limit: 10})
		return err
	}
	// Biased as benchtable's row 7 asks: the i-th prefix from the
	// (i%4)-th of benchenv.NearPoints, each heavy prefix from all four.
	var heavy []string
	for _, p := range benchenv.HeavyPrefixes {
		for range benchenv.NearPoints {
			heavy = append(heavy, p)
		}
	}
	biased := func(i int, text string) error {
		near := benchenv.NearPoints[i%len(benchenv.NearPoints)]
		_, err := svc.Find(b.Context(), search.Request{Dataset: search.Large, Text: text, Limit: 10, Fuzzy: true,
			Near: &near, BiasScale: search.DefaultBiasScale})
		return err
	}
	for _, set := range []struct {
		name    string
		texts   []string
		measure func(i int, text string) error
	}{
		{"uniform/lookup", sets.Uniform, lookup},
		{"uniform/find", sets.Uniform, findText},
		{"typed/lookup", typed, lookup},
		{"typed/find", typed, findText},
		{"one-edit/find", sets.TypoOne, findText},
		{"two-edit/find", sets.TypoTwo, findText},
		{"biased/find", sets.Uniform, biased},
		{"biased-heavy/find", heavy, biased},
	} {
		b.Run(set.name, func(b *testing.B) {
			if len(set.texts) == 0 {
				b.Skip("no queries: the dataset has no populations to draw the typed log by")
			}
			times := make([]time.Duration, len(set.texts))
			for b.Loop() {
				for i, text := range set.texts {
					start := time.Now()
					if err := set.measure(i, text); err != nil {
						b.Fatal(err)
					}
					if d := time.Since(start); times[i] == 0 || d < times[i] {
						times[i] = d
					}
				}
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(times[len(times)-1].Nanoseconds()), "max-ns")
		})
	}
	// share is the percentage of the answers to texts that some hit of
	// makes what the test asks: hit(i, h) for the i-th text.
	share := func(b *testing.B, texts []string, hit func(i int, h search.Hit) bool) float64 {
		if len(texts) == 0 {
			b.Skip("no queries")
		}
		n := 0
		for b.Loop() {
			n = 0
			for i, text := range texts {
				res, err := find(text)
				if err != nil {
					b.Fatal(err)
				}
				if slices.ContainsFunc(res.Hits, func(h search.Hit) bool { return hit(i, h) }) {
					n++
				}
			}
		}
		return 100 * float64(n) / float64(len(texts))
	}
	typo := func(_ int, h search.Hit) bool { return h.Edits > 0 }
	b.Run("uniform/typo-fill", func(b *testing.B) { b.ReportMetric(share(b, sets.Uniform, typo), "%typo-filled") })
	b.Run("typed/typo-fill", func(b *testing.B) {
		b.ReportMetric(share(b, typed, typo), "%typo-filled")
		b.ReportMetric(100*float64(misspelled)/float64(len(typed)), "%misspelled")
		b.ReportMetric(float64(len(typed)), "queries")
	})
	for _, set := range []struct {
		name      string
		texts, of []string
	}{
		{"one-edit/recall", sets.TypoOne, sets.TypoOneOf},
		{"two-edit/recall", sets.TypoTwo, sets.TypoTwoOf},
		{"one-edit/recall-by-population", sets.TypoOneByPop, sets.TypoOneByPopOf},
		{"two-edit/recall-by-population", sets.TypoTwoByPop, sets.TypoTwoByPopOf},
	} {
		b.Run(set.name, func(b *testing.B) {
			b.ReportMetric(share(b, set.texts, func(i int, h search.Hit) bool { return h.Slug == set.of[i] }), "%found")
		})
	}
}
