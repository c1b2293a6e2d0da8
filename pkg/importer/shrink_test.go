package importer_test

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// strayQuoteFile writes the okfn file with one line whose quote never
// closes, as `(head -3 FILE; echo '"Bad Town,France,Ile,123'; tail -n +4
// FILE | grep -v '"')` does, keeping only keep of the lines after it (all of
// them when keep < 0). It returns the path and how many rows it holds.
func strayQuoteFile(tb testing.TB, keep int) (string, int) {
	tb.Helper()
	data, err := os.ReadFile(datasetPath(tb, "world-cities.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	out := append(lines[:3:3], `"Bad Town,France,Ile,123`)
	kept := 0
	for _, l := range lines[3:] {
		if kept == keep {
			break
		}
		if !strings.Contains(l, `"`) {
			out = append(out, l)
			kept++
		}
	}
	return mustWriteFile(tb, "bad.csv", []byte(strings.Join(out, "\n")+"\n")), len(out) - 1
}

// okfnRows writes an okfn file of n distinct cities, bad of which are
// malformed.
func okfnRows(tb testing.TB, n, bad int) string {
	tb.Helper()
	var b strings.Builder
	b.WriteString("name,country,subcountry,geonameid\n")
	for i := range n {
		if i < bad {
			b.WriteString("Broken\n")
			continue
		}
		fmt.Fprintf(&b, "Town %d,France,Ile-de-France,%d\n", i, i+1)
	}
	return mustWriteFile(tb, "cities.csv", []byte(b.String()))
}

func mustImport(tb testing.TB, store search.Store, path string, opts importer.Request) importer.Summary {
	tb.Helper()
	sum, err := importFile(tb.Context(), store, path, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return sum
}

// A stray quote in a file cut short must not replace a full dataset: the
// import is refused with both counts, and the old data still answers.
func TestImportRefusesToShrinkADataset(t *testing.T) {
	full := datasetPath(t, "world-cities.csv")
	bad, rows := strayQuoteFile(t, 5)

	store := memory.New()
	before := mustImport(t, store, full, importer.Request{Dataset: search.Small})
	sum, err := importFile(t.Context(), store, bad, importer.Request{Dataset: search.Small})
	if !errors.Is(err, importer.ErrShrink) {
		t.Fatalf("import of %d rows over %d cities: err = %v (summary %v), want ErrShrink", rows, before.Imported, err, sum)
	}
	var se *importer.ShrinkError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a *ShrinkError", err)
	}
	want := importer.ShrinkError{Dataset: search.Small, Current: before.Imported, New: rows - 1, Rows: rows, Rejected: 1}
	if *se != want {
		t.Errorf("ShrinkError = %+v, want %+v", *se, want)
	}
	for _, s := range []string{fmt.Sprint(before.Imported), fmt.Sprintf("with %d", rows-1), fmt.Sprintf("1 of the %d rows were rejected", rows)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err = %q, want it to say %q", err, s)
		}
	}
	if sum.Imported != 0 || sum.Rejected != 1 {
		t.Errorf("summary of the refused import: %+v, want 0 imported, 1 rejected", sum)
	}
	if found := mustSearch(t, store, search.Small, "seoul"); !slices.Contains(found, "Seoul") {
		t.Errorf("after the refused import, seoul finds %q, want the old dataset", found)
	}
	if st, err := store.Stats(t.Context(), search.Small); err != nil || st.Cities != before.Imported {
		t.Errorf("stats after the refused import: %+v, %v; want the old %d cities", st, err, before.Imported)
	}

	sum = mustImport(t, store, bad, importer.Request{Dataset: search.Small, AllowShrink: true})
	if sum.Imported != rows-1 {
		t.Errorf("with AllowShrink: %v, want %d cities", sum, rows-1)
	}
	if st, err := store.Stats(t.Context(), search.Small); err != nil || st.Cities != rows-1 {
		t.Errorf("stats after the allowed import: %+v, %v; want %d cities", st, err, rows-1)
	}
}

func TestImportShrinkRule(t *testing.T) {
	tests := []struct {
		name       string
		current    int // cities imported first; 0 for none
		rows, bad  int
		wantRefuse bool
	}{
		// A first import is held to the rejected rows' rule too (issue 22).
		{"first import of a few rows with a bad one", 0, 3, 1, true},
		{"first import of only bad rows but one", 0, 100, 99, true},
		{"first import with 1% of its rows bad", 0, 100, 1, false},
		{"half the cities", 100, 50, 0, false},
		{"fewer than half the cities", 100, 49, 0, true},
		{"a larger file", 100, 1000, 0, false},
		{"1% of rows rejected", 100, 100, 1, false},
		{"more than 1% of rows rejected", 100, 100, 2, true},
		{"a bigger file with more than 1% rejected", 100, 1000, 11, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			if tt.current > 0 {
				mustImport(t, store, okfnRows(t, tt.current, 0), importer.Request{Dataset: search.Small})
			}
			path := okfnRows(t, tt.rows, tt.bad)
			_, err := importFile(t.Context(), store, path, importer.Request{Dataset: search.Small})
			if refused := errors.Is(err, importer.ErrShrink); refused != tt.wantRefuse || (err != nil && !refused) {
				t.Fatalf("err = %v, want refused %v", err, tt.wantRefuse)
			}
			if !tt.wantRefuse {
				return
			}
			st, err := store.Stats(t.Context(), search.Small)
			if tt.current == 0 && !errors.Is(err, search.ErrEmptyDataset) {
				t.Errorf("after the refused first import: %+v, %v; want the dataset still empty", st, err)
			}
			if tt.current > 0 && (err != nil || st.Cities != tt.current) {
				t.Errorf("after the refused import: %+v, %v; want %d cities", st, err, tt.current)
			}
			if _, err := importFile(t.Context(), store, path, importer.Request{Dataset: search.Small, AllowShrink: true}); err != nil {
				t.Errorf("with AllowShrink: %v", err)
			}
		})
	}
}

// A stray quote alone costs its one row: the rest of the file replaces
// the dataset as usual.
func TestImportAcceptsOneStrayQuote(t *testing.T) {
	store := memory.New()
	before := mustImport(t, store, datasetPath(t, "world-cities.csv"), importer.Request{Dataset: search.Small})
	bad, rows := strayQuoteFile(t, -1)
	sum := mustImport(t, store, bad, importer.Request{Dataset: search.Small})
	if sum.Read != rows || sum.Rejected != 1 || sum.Imported < before.Imported/2 {
		t.Errorf("summary %v, want %d rows read and 1 rejected", sum, rows)
	}
	if len(sum.Rejections) != 1 || sum.Rejections[0].Line != 4 {
		t.Errorf("rejections %v, want line 4", sum.Rejections)
	}
}
