package importer_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// collector is a store that keeps what a load hands it, as read, and
// what search.Collect (the memory store's rule) makes of it.
type collector struct {
	search.Store
	received []search.City
	kept     []search.City
}

func (c *collector) Load(ctx context.Context, _ search.Dataset, r search.CityReader, _ search.LoadOptions) (search.LoadStats, error) {
	var err error
	if c.received, err = search.ReadAll(r); err != nil {
		return search.LoadStats{}, err
	}
	var st search.LoadStats
	c.kept, st, err = search.Collect(ctx, &search.SliceReader{Cities: slices.Clone(c.received)})
	return st, err
}

// writeDuplicates writes a GeoNames dump of n rows drawn from few places,
// so that most rows share a search.Key with others: the same name or
// another of the same slug, population, id and location drawn at random,
// ties included.
func writeDuplicates(t *testing.T, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed))
	names := [][]string{{"Saint-Denis", "Saint Denis", "SAINT DENIS"}, {"Köln", "Koln"}, {"Paris"}, {"Lyon", "LYON"}}
	var b strings.Builder
	for range n {
		variants := names[rng.IntN(len(names))]
		name := variants[rng.IntN(len(variants))]
		pop := []int{0, 100, 5000, 5000, 1_000_000}[rng.IntN(5)]
		fmt.Fprintf(&b, "%d\t%s\t%s\t\t%.4f\t%.4f\tP\tPPL\t%s\t\t%s\t\t\t\t%d\t\t\tEurope/Paris\t2020-01-01\n",
			1+rng.IntN(3), name, name, 40+rng.Float64(), 2+rng.Float64(), []string{"FR", "DE"}[rng.IntN(2)], []string{"11", "22"}[rng.IntN(2)], pop)
	}
	return mustWriteFile(t, "cities1000.txt", []byte(b.String()))
}

// An import merges duplicates as they arrive, and keeps the very city that
// the store would have kept of all the rows (search.BySlug's best, the
// first read of equals): the store receives only the first city of each
// Key and those that outrank every earlier one, not a city a row. So it
// does when the rows wait for their region names, which the region names
// file here gives by id.
func TestImportMergesDuplicatesAsTheyArrive(t *testing.T) {
	regions := mustWriteFile(t, "world-cities.csv", []byte("name,country,subcountry,geonameid\n"+
		"Paris,France,Île-de-France,1\nRennes,France,Bretagne,2\nKöln,Germany,Nordrhein-Westfalen,3\n"))
	subcountries := map[uint32]string{1: "Île-de-France", 2: "Bretagne", 3: "Nordrhein-Westfalen"}
	for _, named := range []bool{false, true} {
		for seed := range uint64(4) {
			t.Run(fmt.Sprintf("seed %d, region names %t", seed, named), func(t *testing.T) {
				path := writeDuplicates(t, 3000, seed)
				rows, _ := mustReadFormat(t, importer.FormatGeoNames, path, importer.ReaderOptions{Strict: true})
				req := importer.Request{Dataset: search.Large}
				if named {
					req.RegionNames = importer.Source{Name: regions}
					for i := range rows {
						rows[i].Subcountry = subcountries[rows[i].ID]
					}
				}
				want, _, err := search.Collect(t.Context(), &search.SliceReader{Cities: rows})
				if err != nil {
					t.Fatal(err)
				}
				store := &collector{}
				sum := mustImport(t, store, path, req)
				if !slices.EqualFunc(store.kept, want, func(a, b search.City) bool { return a.Equal(&b) }) {
					t.Errorf("kept %d cities:\n%+v\nwant %d:\n%+v", len(store.kept), store.kept, len(want), want)
				}
				// Of ~190 rows of a Key in random order, a few each outrank
				// every earlier one (about ln 190 ≈ 5 of them).
				if len(store.received) > 10*len(want) {
					t.Errorf("the store received %d cities of %d rows for %d distinct ones, want only the first of each Key and those that outrank it", len(store.received), len(rows), len(want))
				}
				if sum.Imported != len(want) || sum.Duplicates != len(rows)-len(want) {
					t.Errorf("summary %d imported, %d duplicates; want %d and %d", sum.Imported, sum.Duplicates, len(want), len(rows)-len(want))
				}
			})
		}
	}
}

// An import reads at most Request.MaxRows rows of its file, and of its
// GeoNames dump: one more fails it with ErrTooManyRows, and the dataset
// keeps its content.
func TestImportRowLimit(t *testing.T) {
	store := memory.New()
	csv := datasetPath(t, "world-cities.csv")
	mustImport(t, store, csv, importer.Request{Dataset: search.Small})
	before := mustSearch(t, store, search.Small, "lon")
	geonames := importer.Source{Name: writeDuplicates(t, 3000, 1)}
	for _, tc := range []struct {
		name string
		req  importer.Request
	}{
		{"the file", importer.Request{Dataset: search.Small, MaxRows: 1000, AllowShrink: true}},
		{"the GeoNames dump", importer.Request{Dataset: search.Small, MaxRows: 2999, AllowShrink: true, GeoNames: geonames}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := importFile(t.Context(), store, csv, tc.req)
			if !errors.Is(err, importer.ErrTooManyRows) || !strings.Contains(err.Error(), fmt.Sprintf("more than %s rows", thousands(tc.req.MaxRows))) {
				t.Errorf("err = %v, want ErrTooManyRows saying the limit", err)
			}
			if got := mustSearch(t, store, search.Small, "lon"); !slices.Equal(got, before) {
				t.Errorf("after the failed import, lon finds %q, want %q", got, before)
			}
		})
	}
	// A file of exactly MaxRows rows is read.
	if _, err := importFile(t.Context(), store, geonames.Name, importer.Request{Dataset: search.Large, MaxRows: 3000}); err != nil {
		t.Errorf("a file of MaxRows rows: %v", err)
	}
}

// The rows of an okfn CSV wait for the last before they are enriched (a
// join by name depends on every row): identical ones are merged as they
// are read, and the import keeps what it kept before, with the same
// counts. Here every row of the shared file comes twice, a few thrice.
func TestImportMergesIdenticalRowsBeforeEnriching(t *testing.T) {
	g := mustGazetteer(t)
	data, err := os.ReadFile(datasetPath(t, "world-cities.csv"))
	if err != nil {
		t.Fatal(err)
	}
	header, body, _ := strings.Cut(string(data), "\n")
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	path := mustWriteFile(t, "world-cities.csv", []byte(header+"\n"+body+body+strings.Join(lines[:500], "\n")+"\n"))
	rows, _ := mustReadFile(t, search.Small, path, importer.ReaderOptions{})

	er := g.Enrich(&search.SliceReader{Cities: rows})
	enriched, err := search.ReadAll(er)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := search.Collect(t.Context(), &search.SliceReader{Cities: enriched})
	if err != nil {
		t.Fatal(err)
	}
	store := &collector{}
	sum := mustImport(t, store, path, importer.Request{Dataset: search.Small, GeoNames: importer.Source{Name: datasetPath(t, "geonames-cities1000.txt.gz")}})
	if !slices.EqualFunc(store.kept, want, func(a, b search.City) bool { return a.Equal(&b) }) {
		t.Errorf("kept %d cities, want %d, or other ones", len(store.kept), len(want))
	}
	if len(store.received) > len(lines) {
		t.Errorf("the store received %d cities of %d rows, %d distinct at most", len(store.received), len(rows), len(lines))
	}
	if sum.EnrichedByID != er.EnrichedByID() || sum.EnrichedByName != er.EnrichedByName() || sum.Duplicates != len(rows)-len(want) {
		t.Errorf("summary %d by id, %d by name, %d duplicates; want %d, %d and %d",
			sum.EnrichedByID, sum.EnrichedByName, sum.Duplicates, er.EnrichedByID(), er.EnrichedByName(), len(rows)-len(want))
	}
}

// An import gives MaxMind's cities, which have no id, their derived ids as
// it merges duplicates (search.DerivedIDs), in one table with the Keys: the
// ids are those that search.LoadReader would derive, those of Keys whose
// hashes meet in the derived range included, and a duplicate that outranks
// the first of its Key gets the same id. The 100k sample holds a few such
// meetings, and its first rows come again here with more people.
func TestImportDerivesTheIDsOfLoadReader(t *testing.T) {
	data := mustLoadPath(t, datasetPath(t, "worldcitiespop-100k.txt.gz"))
	header, body, _ := strings.Cut(string(data), "\n")
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	var again strings.Builder
	for _, l := range lines[:2000] {
		f := strings.Split(l, ",")
		f[4] = "9999999" // the population: outranks the first
		again.WriteString(strings.Join(f, ",") + "\n")
	}
	path := mustWriteFile(t, "worldcitiespop.txt", []byte(header+"\n"+body+again.String()))
	rows, _ := mustReadFormat(t, importer.FormatMaxMind, path, importer.ReaderOptions{})
	want, _, err := search.Collect(t.Context(), &search.SliceReader{Cities: rows})
	if err != nil {
		t.Fatal(err)
	}
	displaced := 0
	for i := range want {
		if want[i].ID != search.DerivedIDBase+uint32(search.KeyHash(&want[i])%search.DerivedIDBase) {
			displaced++
		}
	}
	if displaced == 0 {
		t.Fatal("no Keys of the sample meet in the derived range: the test proves less than it says")
	}
	store := &collector{}
	mustImport(t, store, path, importer.Request{Dataset: search.Large})
	if !slices.EqualFunc(store.kept, want, func(a, b search.City) bool { return a.Equal(&b) }) {
		t.Errorf("kept %d cities, want %d, or other ones (or with other ids)", len(store.kept), len(want))
	}
}
