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

// A lazy store reads a dataset's snapshot only when it is first used: a
// load of one dataset never reads the other, nor the one it replaces; a
// search of it reads it then.
func TestLazyReadsOnlyWhatIsUsed(t *testing.T) {
	dir := t.TempDir()
	s := mustOpen(t, dir, embedded.Options{ReloadInterval: -1})
	storetest.MustLoad(t, s, search.Small, storetest.City("Paris", "France", "", 0))
	storetest.MustLoad(t, s, search.Large, storetest.City("Lyon", "France", "", 0))
	s.Close()

	s = mustOpen(t, dir, embedded.Options{ReloadInterval: -1, Lazy: true})
	defer s.Close()
	if s.Holds(search.Small) || s.Holds(search.Large) {
		t.Fatal("a lazy store read snapshots at Open")
	}
	storetest.MustLoad(t, s, search.Small, storetest.City("Parla", "Spain", "", 0))
	if s.Holds(search.Small) || s.Holds(search.Large) {
		t.Errorf("a lazy load read snapshots (small %v, large %v)", s.Holds(search.Small), s.Holds(search.Large))
	}
	if got := storetest.MustSearch(t, s, search.Small, "par", 10); len(got) != 1 || got[0].Name != "Parla" {
		t.Errorf("search after the lazy load = %+v, want the new Parla", got)
	}
	if !s.Holds(search.Small) || s.Holds(search.Large) {
		t.Errorf("after a search of small: holds small %v, large %v; want only small", s.Holds(search.Small), s.Holds(search.Large))
	}
	if st, err := s.Stats(t.Context(), search.Large); err != nil || st.Cities != 1 || !s.Holds(search.Large) {
		t.Errorf("Stats(large) = %+v, %v; want 1 city, read on demand", st, err)
	}
}

// A snapshot whose bytes were damaged says, at every use, that the dataset
// is corrupt and how to recover; never that it is empty.
func TestCorruptSnapshotSaysHowToRecover(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		dir := t.TempDir()
		s := mustOpen(t, dir, embedded.Options{ReloadInterval: -1})
		storetest.MustLoad(t, s, search.Small, storetest.City("Paris", "France", "", 0), storetest.City("Parma", "Italy", "", 0))
		s.Close()
		path := filepath.Join(dir, "small"+embedded.FileExt)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)-1] ^= 0xff // a flipped bit: the checksum no longer matches
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}

		s = mustOpen(t, dir, embedded.Options{ReloadInterval: -1, Lazy: lazy})
		defer s.Close()
		_, searchErr := s.Search(t.Context(), nil, search.Query{Dataset: search.Small, Prefix: "par", Limit: 10})
		walkErr := s.WalkTrie(t.Context(), search.Small, func([]byte) bool { return true })
		for what, err := range map[string]error{"search": searchErr, "walk": walkErr} {
			var de *search.DatasetError
			if !errors.Is(err, search.ErrCorrupt) || !errors.Is(err, search.ErrUnavailable) || errors.Is(err, search.ErrEmptyDataset) ||
				!errors.As(err, &de) || de.Dataset != search.Small {
				t.Errorf("lazy %v, %s: err = %v, want ErrCorrupt and ErrUnavailable of dataset small, not ErrEmptyDataset", lazy, what, err)
				continue
			}
			// The CLI adds how to recover (see cmd/cityfinder's explain).
			for _, want := range []string{"dataset small", "corrupt", "checksum mismatch"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("lazy %v, %s: err = %q, want it to say %q", lazy, what, err, want)
				}
			}
		}
	}
}
