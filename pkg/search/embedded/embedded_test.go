package embedded_test

import (
	"errors"
	"os"
	"path/filepath"
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
	if !errors.Is(err, search.ErrUnavailable) || !strings.Contains(err.Error(), "cityfinder import --dataset small") {
		t.Errorf("search of a broken snapshot: err = %v, want ErrUnavailable naming the import", err)
	}
	storetest.MustLoad(t, s, search.Small, storetest.City("Parla", "Spain", "Madrid", 0))
	if got := storetest.MustSearch(t, s, search.Small, "par", 10); len(got) != 1 || got[0].Name != "Parla" {
		t.Errorf("after a new load: %+v", got)
	}
}
