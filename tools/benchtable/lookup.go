package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// heavyPrefixes have tens of thousands of matches each in the large dataset.
var heavyPrefixes = benchenv.HeavyPrefixes

// bareRead is the floor for any importer: encoding/csv reading every row.
// It returns the data rows and the best time of three runs.
func bareRead(path string) (int, time.Duration, error) {
	var best time.Duration
	rows := 0
	for range 3 {
		f, err := os.Open(path)
		if err != nil {
			return 0, 0, err
		}
		start := time.Now()
		r := csv.NewReader(f)
		n := 0
		for {
			_, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				f.Close()
				return 0, 0, err
			}
			n++
		}
		d := time.Since(start)
		f.Close()
		rows = n - 1 // the header
		if best == 0 || d < best {
			best = d
		}
	}
	return rows, best, nil
}

type prefixSet struct {
	sampled []string // 2,000 prefixes of 3–6 letters of real slugs
	typoOne []string // 500 real slugs of 5–6 letters with one random edit each
	typoTwo []string // 500 real slugs of 7 letters or more with two random edits each
	typed   []benchenv.TypedQuery
	fresh   []benchenv.TypedQuery // a typed log too long to replay (see freshLog)
	slugs   []string              // every slug, sorted: the baseline's index
	// recall holds the misspellings whose recall is measured, one and two
	// edits of uniformly drawn slugs, then of cities drawn by population
	// (see benchenv.Queries).
	recall [4]misspellings
}

// misspellings are misspelled texts and the slugs they misspell.
type misspellings struct{ texts, of []string }

func (p prefixSet) all() []string { return append(slices.Clone(p.sampled), heavyPrefixes...) }

// samplePrefixes reads every city of the imported file and samples the
// query sets from them (see benchenv.SampleQueries).
func samplePrefixes(storeDir string) (prefixSet, error) {
	path, err := datasetPathFromStore(storeDir)
	if err != nil {
		return prefixSet{}, err
	}
	in, err := importer.Open(path)
	if err != nil {
		return prefixSet{}, err
	}
	defer in.Close()
	r, err := importer.NewMaxMindReader(in, importer.ReaderOptions{})
	if err != nil {
		return prefixSet{}, err
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		return prefixSet{}, err
	}
	q := benchenv.SampleQueries(cities)
	return prefixSet{sampled: q.Uniform, typoOne: q.TypoOne, typoTwo: q.TypoTwo, typed: q.Typed, fresh: freshLog(cities), slugs: q.Slugs,
		recall: [4]misspellings{{q.TypoOne, q.TypoOneOf}, {q.TypoTwo, q.TypoTwoOf}, {q.TypoOneByPop, q.TypoOneByPopOf}, {q.TypoTwoByPop, q.TypoTwoByPopOf}}}, nil
}

// datasetPathFromStore finds the generated file beside the store directory.
func datasetPathFromStore(storeDir string) (string, error) {
	path := strings.TrimSuffix(storeDir, "store") + "worldcitiespop.txt"
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("dataset beside the store: %w", err)
	}
	return path, nil
}

type lookupResult struct {
	median, p99, heavyMax             time.Duration
	baseMedian, baseP99, baseHeavyMax time.Duration
	queries                           int
	appendMedian, appendP99           time.Duration // into a reused slice
	typoOne, typoTwo                  setTimes
	finds                             findResults // Service.Find: plain, biased, boxed, qualified
	places                            placesResult
	typed                             typedResult
	// The top-10 lookup timed as Find is (see coldLookups), on the
	// prefixes and on the typed log: the baselines of issue 26's rows.
	coldPrefixes, coldTyped setTimes
	// recall is the percentage of each of prefixSet.recall's sets whose
	// misspelled slug is among Service.Find's top 10; -1 for an empty set.
	recall [4]float64
}

// typedResult times Service.Find on the typed log (see benchenv.TypedLog).
type typedResult struct {
	setTimes
	misspelled, filled int // queries typed with a typo; answers with typo matches
}

// setTimes are the median and p99 of the times of one query set.
type setTimes struct {
	median, p99 time.Duration
	queries     int
}

var sink int

// measureLookups times a top-10 Search of every prefix and the baseline: a
// sort.Search over all slugs in memory taking the first 10 (alphabetical, no
// ranking). Each prefix's time is the best of three passes of 20 calls.
func measureLookups(ctx context.Context, storeDir string, set prefixSet) (lookupResult, error) {
	store, err := embedded.Open(storeDir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		return lookupResult{}, err
	}
	defer store.Close()
	var buf [10]string
	baseline := func(p string) error {
		out := buf[:0]
		for j := sort.SearchStrings(set.slugs, p); j < len(set.slugs) && len(out) < 10 && strings.HasPrefix(set.slugs[j], p); j++ {
			out = append(out, set.slugs[j])
		}
		sink += len(out)
		return nil
	}
	all := set.all()
	got, err := timeSearch(ctx, store, all)
	if err != nil {
		return lookupResult{}, err
	}
	base, _ := timeBest(all, 3, 20, baseline)
	reused := make([]search.Found, 0, 10)
	appended, err := timeBest(all, 3, 20, func(p string) error {
		var err error
		reused, err = store.Search(ctx, reused[:0], search.Query{Dataset: search.Large, Prefix: p, Limit: 10})
		sink += len(reused)
		return err
	})
	if err != nil {
		return lookupResult{}, err
	}
	svc := search.NewService(store)
	find := func(p string) error {
		res, err := svc.Find(ctx, search.Request{Dataset: search.Large, Text: p, Limit: 10, Fuzzy: true})
		sink += len(res.Hits)
		return err
	}
	res := lookupResult{
		median: percentile(got, 50), p99: percentile(got, 99), heavyMax: slices.Max(got[len(set.sampled):]),
		baseMedian: percentile(base, 50), baseP99: percentile(base, 99), baseHeavyMax: slices.Max(base[len(set.sampled):]),
		queries:      len(all),
		appendMedian: percentile(appended, 50), appendP99: percentile(appended, 99),
	}
	for _, t := range []struct {
		queries []string
		res     *setTimes
	}{{set.typoOne, &res.typoOne}, {set.typoTwo, &res.typoTwo}} {
		times, err := timeRounds(len(t.queries), 3, func(i int) error { return find(t.queries[i]) })
		if err != nil {
			return lookupResult{}, err
		}
		*t.res = newSetTimes(times)
	}
	for i, m := range set.recall {
		if res.recall[i], err = recall(ctx, svc, m); err != nil {
			return lookupResult{}, err
		}
	}
	typedTexts := make([]string, len(set.typed))
	for i, q := range set.typed {
		typedTexts[i] = q.Text
	}
	if res.coldPrefixes, err = coldLookups(ctx, store, all); err != nil {
		return lookupResult{}, err
	}
	if res.coldTyped, err = coldLookups(ctx, store, typedTexts); err != nil {
		return lookupResult{}, err
	}
	if res.typed, err = measureTyped(ctx, svc, set.typed); err != nil {
		return lookupResult{}, err
	}
	if res.finds, err = measureFinds(ctx, svc, all); err != nil {
		return lookupResult{}, err
	}
	if res.places, err = measurePlaces(ctx, svc, set.sampled); err != nil {
		return lookupResult{}, err
	}
	runtime.KeepAlive(sink) // the results were used
	return res, nil
}

// recall returns the percentage of the misspellings m whose misspelled
// slug is among the hits of Service.Find with its defaults (limit 10,
// typos on), or -1 when m is empty.
func recall(ctx context.Context, svc *search.Service, m misspellings) (float64, error) {
	if len(m.texts) == 0 {
		return -1, nil
	}
	found := 0
	for i, text := range m.texts {
		res, err := svc.Find(ctx, search.Request{Dataset: search.Large, Text: text, Limit: 10, Fuzzy: true})
		if err != nil {
			return 0, err
		}
		if slices.ContainsFunc(res.Hits, func(h search.Hit) bool { return h.Slug == m.of[i] }) {
			found++
		}
	}
	return 100 * float64(found) / float64(len(m.texts)), nil
}

// measureTyped times Service.Find with its defaults on the typed log,
// each query once per round over three rounds (see timeRounds), and
// counts the answers that hold typo matches.
func measureTyped(ctx context.Context, svc *search.Service, log []benchenv.TypedQuery) (typedResult, error) {
	var r typedResult
	filled := 0 // over the three rounds
	times, err := timeRounds(len(log), 3, func(i int) error {
		res, err := svc.Find(ctx, search.Request{Dataset: search.Large, Text: log[i].Text, Limit: 10, Fuzzy: true})
		if slices.ContainsFunc(res.Hits, func(h search.Hit) bool { return h.Edits > 0 }) {
			filled++
		}
		return err
	})
	if err != nil {
		return r, err
	}
	for _, q := range log {
		if q.Misspelled {
			r.misspelled++
		}
	}
	r.setTimes, r.filled = newSetTimes(times), filled/3
	return r, nil
}

func newSetTimes(times []time.Duration) setTimes {
	return setTimes{median: percentile(times, 50), p99: percentile(times, 99), queries: len(times)}
}

// coldLookups times the store's top-10 lookup of each text's slug once per
// round over three rounds, as Service.Find is timed (see timeRounds), so
// that Find's rows compare it with a lookup timed the same way rather than
// with one repeated 20 times in a row, hot in the CPU's caches (timeBest).
func coldLookups(ctx context.Context, store *embedded.Store, texts []string) (setTimes, error) {
	times, err := timeRounds(len(texts), 3, func(i int) error {
		cities, err := store.Search(ctx, nil, search.Query{Dataset: search.Large, Prefix: search.Slug(texts[i]), Limit: 10})
		sink += len(cities)
		return err
	})
	return newSetTimes(times), err
}

// timeSearch times a top-10 Search of every prefix in store: the best of
// three passes of 20 calls each (see timeBest).
func timeSearch(ctx context.Context, store *embedded.Store, prefixes []string) ([]time.Duration, error) {
	return timeBest(prefixes, 3, 20, func(p string) error {
		cities, err := store.Search(ctx, nil, search.Query{Dataset: search.Large, Prefix: p, Limit: 10})
		sink += len(cities)
		return err
	})
}

// timeBest times fn on every prefix: the best of passes runs of reps
// calls each, per call.
func timeBest(prefixes []string, passes, reps int, fn func(p string) error) ([]time.Duration, error) {
	best := make([]time.Duration, len(prefixes))
	for range passes {
		for i, p := range prefixes {
			start := time.Now()
			for range reps {
				if err := fn(p); err != nil {
					return nil, err
				}
			}
			if d := time.Since(start) / time.Duration(reps); best[i] == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	return best, nil
}

// timeRounds times fn once per query (0..n-1) in each of rounds passes
// over all the queries, and keeps each query's best time: no query runs
// twice in a row, so none finds in the CPU's caches what its previous run
// left there, as none would in a server that answers many different queries.
func timeRounds(n, rounds int, fn func(i int) error) ([]time.Duration, error) {
	best := make([]time.Duration, n)
	for range rounds {
		for i := range n {
			start := time.Now()
			if err := fn(i); err != nil {
				return nil, err
			}
			if d := time.Since(start); best[i] == 0 || d < best[i] {
				best[i] = d
			}
		}
	}
	return best, nil
}

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

type allocResult struct {
	heavy, light testing.BenchmarkResult
}

// measureAllocs runs the lookup and the /search handler as Go benchmarks
// for a heavy prefix (ranked at import) and a light one (ranked by a scan).
func measureAllocs(storeDir string) (lookup, handler allocResult, err error) {
	store, err := embedded.Open(storeDir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		return lookup, handler, err
	}
	defer store.Close()
	bench := func(prefix string) testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			q := search.Query{Dataset: search.Large, Prefix: prefix, Limit: 10}
			for b.Loop() {
				if _, err := store.Search(b.Context(), nil, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	h := server.New(search.NewService(store))
	benchHTTP := func(q string) testing.BenchmarkResult {
		return testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			req := httptest.NewRequest("GET", "/search?dataset=large&q="+q, nil)
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
	lookup = allocResult{heavy: bench("san"), light: bench("zuri")}
	handler = allocResult{heavy: benchHTTP("san"), light: benchHTTP("zuri")}
	return lookup, handler, nil
}
