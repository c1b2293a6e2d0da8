package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Progress hears how far an import or a download has got. Implementations
// must be cheap; Advance is called every few tens of KB, not per row.
type Progress interface {
	// Advance reports what happened since the previous call: bytes more of
	// the raw file (compressed bytes for gzip) consumed, and rows more read
	// (rejected rows included; always 0 for a download). Over a whole
	// import the bytes add up to the file's size (Input.Size).
	Advance(bytes int64, rows int)
}

// progressStep is how many raw bytes pass between two Advance calls.
const progressStep = 32 << 10

// Options control an import.
type Options struct {
	// Dataset is the dataset to replace.
	Dataset search.Dataset
	// Format is the file's format (see Input.Format to detect it). Empty
	// means the dataset's usual one: the okfn CSV for search.Small, the
	// MaxMind file for search.Large.
	Format Format
	// Strict makes the first malformed row fail the import, leaving the
	// dataset as it was.
	Strict bool
	// Progress, when not nil, hears how far the import has got.
	Progress Progress
	// Phase, when not nil, hears each step the store takes after the last
	// row is read (see search.LoadOptions.Phase).
	Phase func(name string)
	// MaxReported is how many malformed rows Summary keeps;
	// 0 means DefaultMaxReported.
	MaxReported int
	// Source describes the file, kept with the dataset (see
	// search.DatasetStats); ImportFile fills it from the file.
	Source search.Source
}

// Summary describes an import.
type Summary struct {
	Dataset search.Dataset
	// Read is how many rows the file has, the header excluded.
	Read int
	// Imported is how many cities the dataset holds now; 0 when the import
	// failed and the dataset kept its previous content.
	Imported int
	// Rejected is how many rows were malformed and skipped.
	Rejected int
	// Duplicates is how many well-formed rows the store dropped because an
	// earlier row had the same search.Key.
	Duplicates int
	// UnknownCountries is how many rows had a country code with no English
	// name (their Country is the code); UnknownCodes lists the codes.
	UnknownCountries int
	UnknownCodes     []string
	// Rejections are the first Options.MaxReported malformed rows.
	Rejections []RowError
	Duration   time.Duration
}

// String is the one-line report, for example
// "imported 23016 of 23018 rows into small (2 rejected, 0 duplicates) in 0.41s".
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "imported %d of %d rows into %s (%d rejected, %d duplicates", s.Imported, s.Read, s.Dataset, s.Rejected, s.Duplicates)
	if s.UnknownCountries > 0 {
		fmt.Fprintf(&b, ", %d with unknown country codes %s", s.UnknownCountries, strings.Join(s.UnknownCodes, " "))
	}
	fmt.Fprintf(&b, ") in %.2fs", s.Duration.Seconds())
	return b.String()
}

// WriteRejections writes the kept malformed rows to w, one
// "line 17: wrong number of fields (3, want 4)" per line, and how many more
// there were.
func (s Summary) WriteRejections(w io.Writer) error {
	for _, r := range s.Rejections {
		if _, err := fmt.Fprintln(w, r.Error()); err != nil {
			return err
		}
	}
	if more := s.Rejected - len(s.Rejections); more > 0 {
		if _, err := fmt.Fprintf(w, "and %d more rejected rows\n", more); err != nil {
			return err
		}
	}
	return nil
}

// rowReader is what every file format's city reader provides.
type rowReader interface {
	search.CityReader
	Stats() ReadStats
}

// Import reads a dataset file from src and replaces opts.Dataset in store
// with its cities (see search.Store.Load). src may be gzip-compressed or a
// zip archive (see NewInput); progress counts its raw bytes. Pass the *Input
// that Open returns to know the total (Input.Size) before the import
// starts. The summary is filled as far as the import got, even when it
// fails.
func Import(ctx context.Context, store search.Store, src io.Reader, opts Options) (Summary, error) {
	sum, err := importFrom(ctx, store, src, opts)
	if err != nil {
		return sum, fmt.Errorf("import %s: %w", opts.Dataset, err)
	}
	return sum, nil
}

// ImportFile imports the dataset file at path: plain, gzip-compressed or a
// zip archive (see Open); see Import.
func ImportFile(ctx context.Context, store search.Store, path string, opts Options) (Summary, error) {
	in, err := Open(path)
	if err != nil {
		return Summary{Dataset: opts.Dataset}, fmt.Errorf("import %s: %w", opts.Dataset, err)
	}
	defer in.Close()
	if opts.Source == (search.Source{}) {
		opts.Source = search.Source{Name: filepath.Base(path), Size: in.Size()}
	}
	sum, err := importFrom(ctx, store, in, opts)
	if err != nil {
		return sum, fmt.Errorf("import %s from %s: %w", opts.Dataset, path, err)
	}
	return sum, nil
}

func importFrom(ctx context.Context, store search.Store, src io.Reader, opts Options) (Summary, error) {
	start := time.Now()
	sum := Summary{Dataset: opts.Dataset}
	in, ok := src.(*Input)
	if !ok {
		var err error
		if in, err = NewInput(src); err != nil {
			return sum, err
		}
	}
	rr, err := newReader(opts.Dataset, opts.Format, in, ReaderOptions{Strict: opts.Strict, MaxReported: opts.MaxReported})
	if err != nil {
		return sum, err
	}
	var cr search.CityReader = rr
	if opts.Progress != nil {
		cr = &progressReader{rowReader: rr, in: in, p: opts.Progress}
	}
	ls, err := store.Load(ctx, opts.Dataset, cr, search.LoadOptions{Source: opts.Source, Phase: opts.Phase})
	st := rr.Stats()
	sum.Read = st.Rows
	sum.Rejected = st.Rejected
	sum.Rejections = st.Rejections
	sum.UnknownCountries = st.UnknownCountries
	sum.UnknownCodes = st.UnknownCodes
	sum.Duration = time.Since(start)
	if err != nil {
		return sum, err
	}
	sum.Imported = ls.Stored
	sum.Duplicates = ls.Read - ls.Stored
	return sum, nil
}

// newReader picks the city reader of a file format, or of the dataset's
// usual format when f is empty.
func newReader(d search.Dataset, f Format, r io.Reader, opts ReaderOptions) (rowReader, error) {
	if f == "" {
		switch d {
		case search.Small:
			f = FormatOKFN
		case search.Large:
			f = FormatMaxMind
		default:
			_, err := search.ParseDataset(string(d))
			if err == nil {
				err = fmt.Errorf("%w %q: no file format for it", search.ErrUnknownDataset, d)
			}
			return nil, err
		}
	}
	switch f {
	case FormatOKFN:
		return NewOKFNReader(r, opts)
	case FormatMaxMind:
		return NewMaxMindReader(r, opts)
	case FormatGeoNames:
		return NewGeoNamesCityReader(r, opts)
	}
	return nil, fmt.Errorf("%w %q", ErrFormat, f)
}

// progressReader reports to a Progress as rows pass through it.
type progressReader struct {
	rowReader
	in        *Input
	p         Progress
	lastBytes int64
	lastRows  int
}

func (r *progressReader) Read() (search.City, error) {
	c, err := r.rowReader.Read()
	if n := r.in.Consumed(); n-r.lastBytes >= progressStep || errors.Is(err, io.EOF) {
		rows := r.rowReader.Stats().Rows
		if n > r.lastBytes || rows > r.lastRows {
			r.p.Advance(n-r.lastBytes, rows-r.lastRows)
			r.lastBytes, r.lastRows = n, rows
		}
	}
	return c, err
}
