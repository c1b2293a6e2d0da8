package embedded_test

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

func mustOpen(t testing.TB, dir string, opts embedded.Options) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(dir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) search.Store { return mustOpen(t, t.TempDir(), embedded.Options{}) })
}

// A decorator keeps every feature of the store, its typo index included.
func TestStoreWrapped(t *testing.T) {
	storetest.RunWrapped(t, func(t *testing.T) search.Store { return mustOpen(t, t.TempDir(), embedded.Options{}) })
}

// A small scan limit sends most prefixes of the conformance data through the
// lists precomputed at load time.
func TestStorePrecomputed(t *testing.T) {
	storetest.Run(t, func(t *testing.T) search.Store {
		return mustOpen(t, t.TempDir(), embedded.Options{ScanLimit: 2})
	})
}

// A huge scan limit ranks every prefix by scanning its range.
func TestStoreScanned(t *testing.T) {
	storetest.Run(t, func(t *testing.T) search.Store {
		return mustOpen(t, t.TempDir(), embedded.Options{ScanLimit: 1 << 20})
	})
}

// A snapshot that cannot be read does not keep the store from opening:
// searches of that dataset say what is wrong, and a load replaces it.
func TestBrokenSnapshot(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, embedded.Options{ReloadInterval: -1})
	storetest.MustLoad(t, s, search.Small, storetest.City("Paris", "France", "Ile-de-France", 0))
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, "small.cfs"), []byte("CFSNAP\x00\x01 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir, embedded.Options{ReloadInterval: -1})
	defer s.Close()
	_, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Small, Prefix: "par", Limit: 10})
	var de *search.DatasetError
	if !errors.Is(err, search.ErrUnavailable) || !strings.Contains(err.Error(), "corrupt") || !errors.As(err, &de) || de.Dataset != search.Small {
		t.Errorf("search of a broken snapshot: err = %v, want ErrUnavailable saying dataset small is corrupt", err)
	}
	storetest.MustLoad(t, s, search.Small, storetest.City("Parla", "Spain", "Madrid", 0))
	if got := storetest.MustSearch(t, s, search.Small, "par", 10); len(got) != 1 || got[0].Name != "Parla" {
		t.Errorf("after a new load: %+v", got)
	}
}

// The trie walk that typo searches beyond the automaton take visits
// exactly the prefixes of the keys of whole names (main or alternate), in
// depth-first byte order: checked against the sorted prefixes of up to
// seven bytes.
func TestWalkTrie(t *testing.T) {
	s := mustOpen(t, t.TempDir(), embedded.Options{ReloadInterval: -1})
	defer s.Close()
	cities := storetest.ReferenceCities(2000)
	cities = append(cities, storetest.City("Abd", "X", "", 0), storetest.City("Abcz", "X", "", 0), storetest.City("Ab", "X", "", 0))
	storetest.MustLoad(t, s, search.Large, cities...)
	kept, _, err := search.Collect(t.Context(), &search.SliceReader{Cities: cities}) // less duplicates, as stored
	if err != nil {
		t.Fatal(err)
	}
	const depth = 7
	prefixes := map[string]bool{}
	for _, c := range kept {
		for _, k := range search.Keys(&c) {
			for n := 1; n <= len(k.Slug) && n <= depth && !k.Word(); n++ {
				prefixes[k.Slug[:n]] = true
			}
		}
	}
	want := slices.Sorted(maps.Keys(prefixes)) // depth first in byte order
	var got []string
	err = s.WalkTrie(t.Context(), search.Large, func(path []byte) bool {
		got = append(got, string(path))
		return len(path) < depth
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("walked %d nodes, want %d: first difference at %d", len(got), len(want), firstDifference(got, want))
	}
}

func firstDifference(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
