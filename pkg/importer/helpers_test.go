package importer_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// datasetPath is the path of a file of the shared datasets.
func datasetPath(tb testing.TB, name string) string {
	tb.Helper()
	return shareddata.Path(tb, name)
}

type rowReader interface {
	search.CityReader
	Stats() importer.ReadStats
}

// newReader returns the reader of dataset d's usual format over r.
func newReader(d search.Dataset, r io.Reader, opts importer.ReaderOptions) (rowReader, error) {
	if d == search.Small {
		return newFormatReader(importer.FormatOKFN, r, opts)
	}
	return newFormatReader(importer.FormatMaxMind, r, opts)
}

// newFormatReader returns the city reader of format f over r.
func newFormatReader(f importer.Format, r io.Reader, opts importer.ReaderOptions) (rowReader, error) {
	switch f {
	case importer.FormatOKFN:
		return importer.NewOKFNReader(r, opts)
	case importer.FormatMaxMind:
		return importer.NewMaxMindReader(r, opts)
	}
	return importer.NewGeoNamesCityReader(r, opts)
}

// mustReadFile reads every city of a dataset file, gzip or not.
func mustReadFile(tb testing.TB, d search.Dataset, path string, opts importer.ReaderOptions) ([]search.City, importer.ReadStats) {
	tb.Helper()
	f := importer.FormatMaxMind
	if d == search.Small {
		f = importer.FormatOKFN
	}
	return mustReadFormat(tb, f, path, opts)
}

// mustReadFormat reads every city of a file of format f, gzip or not.
func mustReadFormat(tb testing.TB, f importer.Format, path string, opts importer.ReaderOptions) ([]search.City, importer.ReadStats) {
	tb.Helper()
	in, err := importer.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	r, err := newFormatReader(f, in, opts)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return cities, r.Stats()
}

// mustReadString reads every city of a dataset file held in a string.
func mustReadString(tb testing.TB, d search.Dataset, data string) ([]search.City, importer.ReadStats) {
	tb.Helper()
	r, err := newReader(d, stringsReader(data), importer.ReaderOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		tb.Fatal(err)
	}
	return cities, r.Stats()
}

func stringsReader(s string) io.Reader { return &onceReader{s: s} }

// onceReader hands out its string a few bytes at a time, as a slow pipe
// would, so that buffering bugs show.
type onceReader struct{ s string }

func (r *onceReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 7)], r.s)
	r.s = r.s[n:]
	return n, nil
}

// findCity returns the first city named name.
func findCity(tb testing.TB, cities []search.City, name string) search.City {
	tb.Helper()
	return findFirst(tb, cities, fmt.Sprintf("city named %q", name), func(c *search.City) bool { return c.Name == name })
}

// findFirst returns the first of items that match accepts; what describes
// the item sought.
func findFirst[T any](tb testing.TB, items []T, what string, match func(*T) bool) T {
	tb.Helper()
	for i := range items {
		if match(&items[i]) {
			return items[i]
		}
	}
	tb.Fatalf("no %s among %d", what, len(items))
	var zero T
	return zero
}

func names(cities []search.City) []string {
	out := make([]string, len(cities))
	for i, c := range cities {
		out[i] = c.Name
	}
	return out
}

func lines(errs []importer.RowError) []int {
	out := make([]int, len(errs))
	for i, e := range errs {
		out[i] = e.Line
	}
	return out
}

// mustRowError checks that err is a malformed-row error at line.
func mustRowError(tb testing.TB, err error, line int) {
	tb.Helper()
	if !errors.Is(err, importer.ErrMalformedRow) {
		tb.Fatalf("err = %v, want one wrapping ErrMalformedRow", err)
	}
	var re *importer.RowError
	if !errors.As(err, &re) {
		tb.Fatalf("err = %v, want a *RowError inside", err)
	}
	if re.Line != line {
		tb.Fatalf("malformed row at line %d, want %d (err %v)", re.Line, line, err)
	}
}

// importFile imports the file at path with req, its Source set to path.
func importFile(ctx context.Context, store search.Store, path string, req importer.Request) (importer.Summary, error) {
	req.Source = importer.Source{Name: path}
	return (&importer.Importer{Store: store}).Import(ctx, req)
}

// importStream imports what r reads with req, its Source set to r.
func importStream(ctx context.Context, store search.Store, r io.Reader, req importer.Request) (importer.Summary, error) {
	req.Source = importer.Source{Reader: r}
	return (&importer.Importer{Store: store}).Import(ctx, req)
}

// following hands p every stage of an import.
func following(p importer.Progress) func(importer.Stage) importer.Progress {
	return func(importer.Stage) importer.Progress { return p }
}
