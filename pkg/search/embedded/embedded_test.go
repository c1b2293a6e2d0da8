package embedded_test

import (
	"errors"
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
	_, err := s.Search(t.Context(), search.Query{Dataset: search.Small, Prefix: "par", Limit: 10})
	var de *search.DatasetError
	if !errors.Is(err, search.ErrUnavailable) || !strings.Contains(err.Error(), "corrupt") || !errors.As(err, &de) || de.Dataset != search.Small {
		t.Errorf("search of a broken snapshot: err = %v, want ErrUnavailable saying dataset small is corrupt", err)
	}
	storetest.MustLoad(t, s, search.Small, storetest.City("Parla", "Spain", "Madrid", 0))
	if got := storetest.MustSearch(t, s, search.Small, "par", 10); len(got) != 1 || got[0].Name != "Parla" {
		t.Errorf("after a new load: %+v", got)
	}
}

// Extensions lists exactly the bytes that follow each prefix in some key
// of a whole name (main or alternate): checked against a brute-force scan
// for every prefix of up to six bytes.
func TestExtensions(t *testing.T) {
	s := mustOpen(t, t.TempDir(), embedded.Options{ReloadInterval: -1})
	defer s.Close()
	cities := storetest.ReferenceCities(2000)
	cities = append(cities, storetest.City("Abd", "X", "", 0), storetest.City("Abcz", "X", "", 0), storetest.City("Ab", "X", "", 0))
	storetest.MustLoad(t, s, search.Large, cities...)
	kept, _, err := search.Collect(t.Context(), &search.SliceReader{Cities: cities}) // less duplicates, as stored
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[byte]bool{}
	for _, c := range kept {
		for _, k := range search.Keys(&c) {
			for n := 0; n < len(k.Slug) && n <= 6 && !k.Word(); n++ {
				p := k.Slug[:n]
				if want[p] == nil {
					want[p] = map[byte]bool{}
				}
				want[p][k.Slug[n]] = true
			}
		}
	}
	for p, next := range want {
		got, err := s.Extensions(t.Context(), search.Large, p)
		if err != nil {
			t.Fatal(err)
		}
		var wantBytes []byte
		for b := range next {
			wantBytes = append(wantBytes, b)
		}
		slices.Sort(wantBytes)
		if !slices.Equal(got, wantBytes) {
			t.Errorf("Extensions(%q) = %q, want %q", p, got, wantBytes)
		}
	}
	if got, _ := s.Extensions(t.Context(), search.Large, "qqqqqq"); len(got) != 0 {
		t.Errorf("Extensions of a missing prefix = %q", got)
	}
}
