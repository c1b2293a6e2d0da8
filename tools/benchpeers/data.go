package main

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cityfinder/cityfinder/internal/benchenv"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// The files that the harness writes into the work directory and every peer
// reads: the cities to index and the queries to time.
const (
	citiesFile  = "cities.tsv"  // slug, population; in descending population
	queriesFile = "queries.tsv" // set, slug, text, edits, misspelt slug
	resultFile  = "result.json" // what a peer's worker writes back
)

// The query sets, named as in queries.tsv and result.json.
const (
	setPrefix = "prefix" // 2,000 uniform prefixes and the six heavy ones
	setOne    = "one"    // 500 slugs of 5–6 letters with one random edit
	setTwo    = "two"    // 500 slugs of 7+ letters with two random edits
)

var setNames = []string{setPrefix, setOne, setTwo}

// heavyPrefixes are tools/benchtable's: tens of thousands of matches each
// on the full-size set, added to the uniform prefixes (2,006 in all).
var heavyPrefixes = []string{"san", "new", "ber", "sta", "kar", "mar"}

// query is one line of queries.tsv.
type query struct {
	set   string
	slug  string // as cityfinder's Service.Find is asked (tools/benchtable)
	text  string // the slug's words separated by spaces: as a person types it
	edits int    // search.MaxEdits of the whole text
	of    string // the slug that a misspelling misspells; "" for a prefix
}

// workload is what the report needs besides the peers' results: what each
// misspelling misspells, and the size of the set.
type workload struct {
	rows, cities int
	queries      []query
	misspelt     map[string][]string // set → the slugs its queries misspell
}

// prepare reads every row of file as cityfinder's MaxMind importer does,
// keeps one city per search.Key as a store does, samples the query sets
// from the rows exactly as tools/benchtable and BenchmarkQuerySets do
// (benchenv.SampleQueries), and writes cities.tsv and queries.tsv into dir.
func prepare(file, dir string) (workload, error) {
	in, err := importer.Open(file)
	if err != nil {
		return workload{}, err
	}
	defer in.Close()
	r, err := importer.NewMaxMindReader(in, importer.ReaderOptions{})
	if err != nil {
		return workload{}, fmt.Errorf("read %s: %w", file, err)
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		return workload{}, fmt.Errorf("read %s: %w", file, err)
	}
	w := workload{rows: len(cities), misspelt: map[string][]string{}}
	sets := benchenv.SampleQueries(cities)
	add := func(set string, slugs, of []string) {
		for i, s := range slugs {
			q := query{set: set, slug: s, text: strings.ReplaceAll(s, "-", " "), edits: search.MaxEdits(s)}
			if of != nil {
				q.of = of[i]
			}
			w.queries = append(w.queries, q)
		}
	}
	add(setPrefix, append(slices.Clone(sets.Uniform), heavyPrefixes...), nil)
	add(setOne, sets.TypoOne, sets.TypoOneOf)
	add(setTwo, sets.TypoTwo, sets.TypoTwoOf)
	w.misspelt[setOne], w.misspelt[setTwo] = sets.TypoOneOf, sets.TypoTwoOf

	slices.SortFunc(cities, func(a, b search.City) int { return search.BySlug(&a, &b) })
	cities = search.KeepFirst(cities, func(a, b *search.City) bool { return a.Slug == b.Slug }, (*search.City).Key)
	w.cities = len(cities)
	// Descending population: the order in which FlexSearch, which cannot
	// sort by a field, is given them, so that its ties go to the larger.
	slices.SortStableFunc(cities, func(a, b search.City) int { return cmp.Compare(b.Population, a.Population) })
	if err := writeLines(filepath.Join(dir, citiesFile), len(cities), func(i int) string {
		return cities[i].Slug + "\t" + strconv.FormatInt(cities[i].Population, 10)
	}); err != nil {
		return workload{}, err
	}
	return w, writeLines(filepath.Join(dir, queriesFile), len(w.queries), func(i int) string {
		q := w.queries[i]
		return q.set + "\t" + q.slug + "\t" + q.text + "\t" + strconv.Itoa(q.edits) + "\t" + q.of
	})
}

func writeLines(path string, n int, line func(i int) string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		bw.WriteString(line(i))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// city is one line of cities.tsv as a Go peer indexes it.
type city struct {
	slug       string
	text       string // the slug's words separated by spaces
	population int64
}

// readInput reads cities.tsv and queries.tsv back from dir, for a worker.
func readInput(dir string) ([]city, []query, error) {
	var cities []city
	err := readLines(filepath.Join(dir, citiesFile), func(f []string) error {
		pop, err := strconv.ParseInt(f[1], 10, 64)
		cities = append(cities, city{slug: f[0], text: strings.ReplaceAll(f[0], "-", " "), population: pop})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var queries []query
	err = readLines(filepath.Join(dir, queriesFile), func(f []string) error {
		edits, err := strconv.Atoi(f[3])
		queries = append(queries, query{set: f[0], slug: f[1], text: f[2], edits: edits, of: f[4]})
		return err
	})
	return cities, queries, err
}

func readLines(path string, fn func(fields []string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := fn(strings.Split(sc.Text(), "\t")); err != nil {
			return fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
		}
	}
	return sc.Err()
}

// wordEdits is the edit budget of one word of a query for the peers that
// take one per word: cityfinder's (search.MaxEdits), one from 5 letters,
// two from 7.
func wordEdits(word string) int {
	switch n := len(word); {
	case n >= 7:
		return 2
	case n >= 5:
		return 1
	}
	return 0
}
