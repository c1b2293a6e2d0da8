package storetest

import (
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// testVersions holds a search.Versioned store to its contract: every Load
// gives the dataset a new number, and only that dataset; a failed Load
// keeps the number; Close changes them all.
func testVersions(t *testing.T, open Opener) {
	s := openStore(t, open)
	vs, ok := s.(search.Versioned)
	if !ok {
		t.Skip("the store does not number its contents")
	}
	seen := map[uint64]bool{}
	next := func(what string, d search.Dataset) uint64 {
		t.Helper()
		v := vs.Version(d)
		if v == 0 || seen[v] {
			t.Fatalf("%s: version of %s = %d, want a number not seen before (seen %v)", what, d, v, seen)
		}
		seen[v] = true
		return v
	}
	if v := vs.Version(search.Small); v != 0 {
		t.Errorf("never loaded: version %d, want 0", v)
	}
	MustLoad(t, s, search.Small, City("Paris", "France", "Ile-de-France", 0))
	next("first load", search.Small)
	MustLoad(t, s, search.Small, City("Parla", "Spain", "Madrid", 0))
	small := next("second load", search.Small)
	MustLoad(t, s, search.Large, City("Paris", "France", "A8", 2138551))
	large := next("load of another dataset", search.Large)
	if v := vs.Version(search.Small); v != small {
		t.Errorf("after loading large, small's version went from %d to %d", small, v)
	}
	if _, err := s.Load(t.Context(), search.Small, &search.SliceReader{}, search.LoadOptions{}); err == nil {
		t.Fatal("a load of no cities succeeded")
	}
	if v := vs.Version(search.Small); v != small {
		t.Errorf("after a failed load, small's version went from %d to %d", small, v)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for d, was := range map[search.Dataset]uint64{search.Small: small, search.Large: large} {
		if v := vs.Version(d); v == was {
			t.Errorf("after Close, %s keeps version %d", d, v)
		}
	}
}
