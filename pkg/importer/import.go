package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

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
	// Format is the file's format. Empty means the one that the file's
	// first line shows (see Input.Format) when the dataset takes files of
	// it (see DatasetFormats), else the dataset's usual one, whose reader
	// then says what is wrong with the first line.
	Format Format
	// Strict makes the first malformed row fail the import, leaving the
	// dataset as it was.
	Strict bool
	// Progress, when not nil, hears how far the import has got.
	Progress Progress
	// Phase, when not nil, hears each step the store takes after the last
	// row is read (see search.LoadOptions.Phase), and PhaseRegionNames
	// before the first when the import reads the region names of a GeoNames
	// dump (see Subcountries), followed by "" when it starts reading rows.
	Phase func(name string)
	// MaxReported is how many malformed rows Summary keeps;
	// 0 means DefaultMaxReported.
	MaxReported int
	// Source describes the file, kept with the dataset (see
	// search.DatasetStats); ImportFile fills it from the file.
	Source search.Source
	// AllowShrink lets the import replace a dataset that it would shrink
	// sharply (see ShrinkError). Without it such an import fails with an
	// error matching ErrShrink and the dataset keeps its content.
	AllowShrink bool
	// Enrich, when not nil, completes the okfn or MaxMind rows with the
	// GeoNames places they match (see Gazetteer.Enrich); a GeoNames file
	// needs nothing from it and is imported as it is.
	Enrich *Gazetteer
	// Subcountries, when not nil, name the regions of the cities of a
	// GeoNames dump or a MaxMind file, which give codes (see RegionNames):
	// a city whose region has a name gets it as Subcountry, and keeps the
	// code as Region. A GeoNames dump's codes are named by reading them
	// before the rows, which ImportFile does and Import cannot (it reads
	// its file once); a MaxMind file's are named only with Enrich, whose
	// places tell what they stand for, as the import holds back the rows
	// of one country at a time (the file is sorted by country) to learn
	// its codes (see Summary.Regions). okfn rows name their regions
	// themselves.
	Subcountries *Subcountries
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
	// Skipped is how many rows were not cities (see ReadStats.Skipped).
	Skipped int
	// Duplicates is how many well-formed rows the store dropped because an
	// earlier row had the same search.Key.
	Duplicates int
	// UnknownCountries is how many rows had a country code with no English
	// name (their Country is the code); UnknownCodes lists the codes.
	UnknownCountries int
	UnknownCodes     []string
	// Enriched is how many rows Options.Enrich completed.
	Enriched int
	// Format is the format the file was read in.
	Format Format
	// Regions is how many first-level divisions Options.Subcountries named
	// (see RegionNames); 0 when they named none, or were not used.
	Regions int
	// Named is how many of the rows that reached the store (duplicates
	// included) got their region's name from Options.Subcountries.
	Named int
	// Rejections are the first Options.MaxReported malformed rows.
	Rejections []RowError
	Duration   time.Duration
}

// String is the one-line report, with thousands separators, for example
// "imported 23,016 of 23,018 rows into small (2 rejected, 0 duplicates) in 0.41s".
func (s Summary) String() string {
	var b strings.Builder
	p := message.NewPrinter(language.English)
	p.Fprintf(&b, "imported %d of %d rows into %s (%d rejected, %d duplicates", s.Imported, s.Read, s.Dataset, s.Rejected, s.Duplicates)
	if s.Skipped > 0 {
		p.Fprintf(&b, ", %d not populated places skipped", s.Skipped)
	}
	if s.Enriched > 0 {
		p.Fprintf(&b, ", %d enriched from GeoNames", s.Enriched)
	}
	if s.Named > 0 {
		p.Fprintf(&b, ", %d with region names", s.Named)
	}
	if s.UnknownCountries > 0 {
		p.Fprintf(&b, ", %d with unknown country codes %s", s.UnknownCountries, strings.Join(s.UnknownCodes, " "))
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
		if _, err := message.NewPrinter(language.English).Fprintf(w, "and %d more rejected rows\n", more); err != nil {
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
	sum, err := importFrom(ctx, store, src, "", opts)
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
	sum, err := importFrom(ctx, store, in, path, opts)
	if err != nil {
		return sum, fmt.Errorf("import %s from %s: %w", opts.Dataset, path, err)
	}
	return sum, nil
}

// importFrom imports src, the file at path when path is not "" (it may be
// read once more to name its regions).
func importFrom(ctx context.Context, store search.Store, src io.Reader, path string, opts Options) (Summary, error) {
	start := time.Now()
	sum := Summary{Dataset: opts.Dataset}
	in, ok := src.(*Input)
	if !ok {
		var err error
		if in, err = NewInput(src); err != nil {
			return sum, err
		}
	}
	format, err := fileFormat(opts.Dataset, opts.Format, in)
	if err != nil {
		return sum, err
	}
	sum.Format = format
	pl := defaultPipeline(in)
	if opts.Enrich != nil && format != FormatGeoNames {
		pl.enrich, pl.enriched = opts.Enrich, new(atomic.Int64)
	}
	regions, err := importRegions(format, path, opts)
	if err != nil {
		return sum, err
	}
	if regions != nil {
		sum.Regions = regions.Len()
		if format == FormatMaxMind {
			pl.regions = regions
		}
	}
	rr, err := newImportReader(format, in, ReaderOptions{Strict: opts.Strict, MaxReported: opts.MaxReported}, pl)
	if err != nil {
		return sum, err
	}
	defer rr.Close()
	var cr search.CityReader = rr
	if opts.Progress != nil {
		cr = &progressReader{importReader: rr, p: opts.Progress}
	}
	var er *EnrichedReader
	if pl.enrich != nil {
		// The workers completed the cities with a location already.
		er = pl.enrich.enrich(cr, false)
		cr = er
	}
	var named *regionReader
	if regions != nil {
		named = &regionReader{r: cr, names: regions, learn: format == FormatMaxMind}
		cr = named
	}
	lopts := search.LoadOptions{Source: opts.Source, Phase: opts.Phase}
	if !opts.AllowShrink {
		lopts.Check = func(prev search.DatasetStats, next search.LoadStats) error {
			return checkShrink(opts.Dataset, prev, next, rr.Stats())
		}
	}
	ls, err := store.Load(ctx, opts.Dataset, cr, lopts)
	st := rr.Stats()
	sum.Read = st.Rows
	sum.Rejected = st.Rejected
	sum.Skipped = st.Skipped
	sum.Rejections = st.Rejections
	sum.UnknownCountries = st.UnknownCountries
	sum.UnknownCodes = st.UnknownCodes
	if er != nil {
		sum.Enriched = er.Enriched() + int(pl.enriched.Load())
	}
	if named != nil {
		sum.Named = named.named
	}
	sum.Duration = time.Since(start)
	if err != nil {
		return sum, err
	}
	sum.Imported = ls.Stored
	sum.Duplicates = ls.Read - ls.Stored
	return sum, nil
}

// importRegions returns the names of the regions of the cities of a file
// of format f at path (see Options.Subcountries), or nil.
func importRegions(f Format, path string, opts Options) (*RegionNames, error) {
	switch {
	case opts.Subcountries == nil:
	case f == FormatGeoNames && path != "":
		if opts.Phase != nil {
			opts.Phase(PhaseRegionNames)
			defer opts.Phase("")
		}
		return OpenRegionNames(path, opts.Subcountries)
	case f == FormatMaxMind && opts.Enrich != nil:
		return opts.Enrich.RegionNames(opts.Subcountries), nil
	}
	return nil, nil
}

// DatasetFormats are the formats of the files each dataset is imported
// from, its usual one first.
var DatasetFormats = map[search.Dataset][]Format{
	search.Small: {FormatOKFN},
	search.Large: {FormatMaxMind, FormatGeoNames},
}

// fileFormat is the format to read dataset d's file in with (see
// Options.Format).
func fileFormat(d search.Dataset, f Format, in *Input) (Format, error) {
	if f != "" {
		return f, nil
	}
	formats, ok := DatasetFormats[d]
	if !ok {
		_, err := search.ParseDataset(string(d))
		if err == nil {
			err = fmt.Errorf("%w %q: no file format for it", search.ErrUnknownDataset, d)
		}
		return "", err
	}
	if got, err := in.Format(); err == nil && slices.Contains(formats, got) {
		return got, nil
	}
	return formats[0], nil
}

// importReader is how an import reads its file: the rows of a file format,
// parsed in parallel (see parallelReader).
type importReader interface {
	rowReader
	// Consumed is how far into the raw file the rows returned so far lie.
	Consumed() int64
	// Close stops the reading.
	Close()
}

// importFormats are the formats an import reads: how to check a file's
// start and return its lines, how to name the format in read errors, and a
// parser of its lines.
var importFormats = map[Format]struct {
	lines  func(io.Reader) (*lineReader, error)
	what   string
	parser func() rowParser[search.City]
}{
	FormatOKFN:     {okfnLines, "okfn csv", func() rowParser[search.City] { return newOKFNParser() }},
	FormatMaxMind:  {maxmindLines, "MaxMind file", func() rowParser[search.City] { return newMaxMindParser() }},
	FormatGeoNames: {geonamesLines, "GeoNames file", func() rowParser[search.City] { return newGeoNamesCityParser() }},
}

// newImportReader returns the reader of file format f over r.
func newImportReader(f Format, r io.Reader, opts ReaderOptions, pl pipeline) (importReader, error) {
	format, ok := importFormats[f]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrFormat, f)
	}
	lines, err := format.lines(r)
	if err != nil {
		return nil, err
	}
	parser := format.parser
	if pl.enrich != nil {
		parser = func() rowParser[search.City] {
			return &locatedEnricher{rowParser: format.parser(), g: pl.enrich, n: pl.enriched, regions: pl.regions}
		}
	}
	return newParallelReader(lines, opts, format.what, pl, parser), nil
}

// progressReader reports to a Progress as rows pass through it.
type progressReader struct {
	importReader
	p         Progress
	lastBytes int64
	lastRows  int
}

func (r *progressReader) Read() (search.City, error) {
	c, err := r.importReader.Read()
	if n := r.Consumed(); n-r.lastBytes >= progressStep || errors.Is(err, io.EOF) {
		rows := r.Stats().Rows
		if n > r.lastBytes || rows > r.lastRows {
			r.p.Advance(n-r.lastBytes, rows-r.lastRows)
			r.lastBytes, r.lastRows = n, rows
		}
	}
	return c, err
}
