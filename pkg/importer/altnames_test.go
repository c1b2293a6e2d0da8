package importer_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// The fixtures are written for these tests, in GeoNames' formats:
// testdata/okfn-local.csv has five cities with their geonameids, and
// testdata/alternateNamesV2.txt names them in other languages, with
// pseudo-languages, colloquial and short names, a former name and a place
// that no city is.
const (
	localOKFN      = "testdata/okfn-local.csv"
	alternateNames = "testdata/alternateNamesV2.txt"
)

func TestImportAlternateNames(t *testing.T) {
	plain, err := os.ReadFile(alternateNames)
	if err != nil {
		t.Fatal(err)
	}
	gzipped := filepath.Join(t.TempDir(), "alternateNamesV2.txt.gz")
	f, err := os.Create(gzipped)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	zw.Write(plain)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	// GeoNames' zip holds iso-languagecodes.txt beside the names.
	zipped := mustZip(t, "alternateNamesV2.zip", zip.Deflate,
		"iso-languagecodes.txt", "ISO 639-3\tISO 639-2\tISO 639-1\tLanguage Name\ndeu\tger/deu\tde\tGerman\n",
		"alternateNamesV2.txt", string(plain))
	for _, file := range []string{alternateNames, gzipped, zipped} {
		t.Run(filepath.Base(file), func(t *testing.T) {
			store := newRecordingStore(t)
			sum, err := (&importer.Importer{Store: store}).Import(t.Context(), importer.Request{Dataset: search.Small,
				Source: importer.Source{Name: localOKFN}, AlternateNames: importer.Source{Name: file}})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Localized != 5 || sum.AlternateNames.Rows != 18 || sum.AlternateNames.Rejected != 0 || sum.AlternateNames.Skipped != 3 {
				t.Errorf("summary %+v, want 5 cities localized from 18 rows, 3 skipped (post, link, colloquial)", sum)
			}
			if !strings.Contains(sum.String(), "5 with names in other languages (0 alternate names rejected)") {
				t.Errorf("summary line %q does not say how many cities got names", sum)
			}
			want := map[string][]search.LocalName{
				"Munich":   {{Lang: "de", Name: "München"}, {Lang: "it", Name: "Monaco di Baviera"}, {Lang: "ja", Name: "ミュンヘン"}, {Lang: "en", Name: "Munich"}},
				"Florence": {{Lang: "it", Name: "Firenze"}, {Lang: "en", Name: "Florence"}, {Lang: "de", Name: "Florenz"}},
				"Mumbai":   {{Lang: "en", Name: "Bombay", Former: true}, {Lang: "mr", Name: "मुंबई"}, {Lang: "en", Name: "Mumbai"}},
				"Zurich":   {{Lang: "de", Name: "Zürich"}},
				"London":   {{Lang: "fr", Name: "Londres"}},
			}
			wantAlts := map[string][]string{
				"Munich":   {"München", "Monaco di Baviera", "ミュンヘン"},
				"Florence": {"Firenze", "Florenz"},
				"Mumbai":   {"Bombay", "मुंबई"},
				"Zurich":   nil, // Zürich is Zurich's own key
				"London":   {"Londres"},
			}
			for _, c := range store.cities {
				if !slices.Equal(c.LocalNames, want[c.Name]) {
					t.Errorf("%s has local names %+v, want %+v", c.Name, c.LocalNames, want[c.Name])
				}
				if !slices.Equal(c.AltNames, wantAlts[c.Name]) {
					t.Errorf("%s has alternate names %q, want %q", c.Name, c.AltNames, wantAlts[c.Name])
				}
			}
		})
	}
}

// The older alternateNames.txt has no from and to columns.
func TestReadLocalNamesOfTheOldFormat(t *testing.T) {
	f, err := os.Open("testdata/alternateNames.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	names, err := importer.ReadLocalNames(f, importer.ReaderOptions{})
	if err != nil || names.Len() != 1 || names.Stats.Rows != 4 {
		t.Fatalf("ReadLocalNames = %+v, %v; want 4 rows naming 1 place", names, err)
	}
}

// Malformed rows are counted and reported with their line numbers; a
// file with too many of them is refused, naming the first.
func TestReadLocalNamesRejectsMalformedRows(t *testing.T) {
	var b strings.Builder
	for i := range 300 {
		id := strconv.Itoa(i + 1)
		b.WriteString(id + "\t" + id + "\tde\tOrt " + id + "\t\t\t\t\t\t\n")
	}
	b.WriteString("301\tnot-a-number\tde\tX\t\t\t\t\t\t\n") // line 301
	b.WriteString("302\t7\tde\tX\tyes\t\t\t\t\t\n")         // line 302
	b.WriteString("303\t7\tde\n")                           // line 303
	names, err := importer.ReadLocalNames(strings.NewReader(b.String()), importer.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, r := range names.Stats.Rejections {
		lines = append(lines, r.Line)
	}
	if names.Stats.Rejected != 3 || !slices.Equal(lines, []int{301, 302, 303}) || names.Len() != 300 {
		t.Errorf("stats %+v, want lines 301, 302 and 303 rejected and 300 places", names.Stats)
	}
	if !strings.Contains(names.Stats.Rejections[1].Error(), `line 302: isPreferredName "yes" is not 1, 0 or empty`) {
		t.Errorf("rejection %v does not say what is wrong", names.Stats.Rejections[1])
	}

	_, err = importer.ReadLocalNames(strings.NewReader("1\t1\tde\tA\t\t\t\t\t\t\n2\tx\tde\tB\t\t\t\t\t\t\n"), importer.ReaderOptions{})
	if !errors.Is(err, importer.ErrMalformedRow) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("half the rows malformed: err = %v, want ErrMalformedRow naming line 2", err)
	}
	_, err = importer.ReadLocalNames(strings.NewReader("name,country\n"), importer.ReaderOptions{})
	if !errors.Is(err, importer.ErrHeader) {
		t.Errorf("a CSV: err = %v, want ErrHeader", err)
	}
	_, err = (&importer.Importer{Store: newRecordingStore(t)}).Import(t.Context(), importer.Request{Dataset: search.Small,
		Source: importer.Source{Name: localOKFN}, AlternateNames: importer.Source{Name: localOKFN}})
	var ie *importer.InputError
	if !errors.As(err, &ie) || ie.Role != importer.RoleAlternateNames || !strings.Contains(err.Error(), "alternate names file "+localOKFN) {
		t.Errorf("an okfn CSV as alternate names: err = %v, want an InputError naming it", err)
	}
}

// A file that names none of the source's cities is no error, but the
// import says so.
func TestImportWarnsOfAlternateNamesOfNoCity(t *testing.T) {
	other := writeTemp(t, "alternateNamesV2.txt", "1\t42\tde\tNirgendwo\t1\t\t\t\t\t\n")
	sum, err := (&importer.Importer{Store: newRecordingStore(t)}).Import(t.Context(), importer.Request{Dataset: search.Small,
		Source: importer.Source{Name: localOKFN}, AlternateNames: importer.Source{Name: other}})
	if err != nil {
		t.Fatal(err)
	}
	var ie *importer.InputError
	if sum.Localized != 0 || len(sum.Warnings) != 1 || !errors.As(sum.Warnings[0], &ie) || ie.Role != importer.RoleAlternateNames ||
		!errors.Is(ie, importer.ErrUnusedInput) {
		t.Errorf("summary %+v, want one warning about the alternate names", sum)
	}
}

// Whatever the file holds, reading it never panics, every kept name is a
// valid UTF-8 name with a language or a former name, and the counts add up.
func FuzzReadLocalNames(f *testing.F) {
	f.Add([]byte("1\t2867714\tde\tMünchen\t1\t\t\t\t\t\n2\t1275339\ten\tBombay\t\t\t\t1\t\t\n"))
	f.Add([]byte("3\t1\tpost\t80331\t\t\t\t\n4\t1\t\tX\t\t\t\t1\n"))
	f.Add([]byte("5\tx\tde\t\xff\tyes\t\t\t\t\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		names, err := importer.ReadLocalNames(bytes.NewReader(data), importer.ReaderOptions{})
		if err != nil {
			if !errors.Is(err, importer.ErrHeader) && !errors.Is(err, importer.ErrMalformedRow) {
				t.Fatalf("ReadLocalNames: %v", err)
			}
			return
		}
		st := names.Stats
		if st.Rejected+st.Skipped > st.Rows || len(st.Rejections) > st.Rejected || names.Len() > st.Rows {
			t.Fatalf("stats %+v of %d places do not add up", st, names.Len())
		}
		cities, err := search.ReadAll(names.Localize(&search.SliceReader{Cities: []search.City{
			{ID: 1, Name: "A", Slug: "a"}, {ID: 2867714, Name: "Munich", Slug: "munich"}, {ID: 1275339, Name: "Mumbai", Slug: "mumbai"}}}))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cities {
			for _, n := range c.LocalNames {
				if strings.TrimSpace(n.Name) == "" || !utf8.ValidString(n.Name) || (n.Lang == "" && !n.Former) {
					t.Fatalf("%s has the local name %+v", c.Name, n)
				}
			}
		}
	})
}
