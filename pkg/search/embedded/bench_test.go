package embedded_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

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
// length up to search.MaxQueryRunes, in the shapes that cost the most:
// one long word, many short words that name no place, a real place
// followed by words that do not qualify it, and letters that start no
// name. Issue 22 bounds each at a p99 of 2 ms on the full-size large
// dataset (CITYFINDER_BENCH_STORE or CITYFINDER_BENCH_MAXMIND).
func BenchmarkFindLength(b *testing.B) {
	s := benchmarkStore(b)
	defer s.Close()
	svc := search.NewService(s)
	for _, shape := range []struct{ name, text string }{
		{"word", strings.Repeat("sanfrancisco", 9)},
		{"words", strings.Repeat("ab ", 34)},
		{"place-and-words", "paris " + strings.Repeat("atlantis ", 11)},
		{"misspelled-words", strings.Repeat("chigaco ", 13)},
		{"no-name", strings.Repeat("qxz", 34)},
	} {
		for _, n := range []int{10, 25, 50, 75, search.MaxQueryRunes} {
			text := strings.TrimSpace(shape.text[:min(n, len(shape.text))])
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				req := search.Request{Dataset: search.Large, Text: text, Limit: search.DefaultLimit, Fuzzy: true}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := svc.Find(b.Context(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
