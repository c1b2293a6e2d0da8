package importer

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
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
	// import the bytes add up to the file's size (Input.Size, and
	// Stage.Size).
	Advance(bytes int64, rows int)
}

// progressStep is how many raw bytes pass between two Advance calls.
const progressStep = 32 << 10

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
	// Duplicates is how many well-formed rows were dropped because another
	// row had the same search.Key: the import drops those it can as they
	// arrive, the store the rest (see search.KeepFirst).
	Duplicates int
	// UnknownCountries is how many rows had a country code with no English
	// name (their Country is the code); UnknownCodes lists the codes.
	UnknownCountries int
	UnknownCodes     []string
	// Enriched is how many rows Request.GeoNames completed: EnrichedByID
	// matched by their geonameid, EnrichedByName joined by name (see
	// Gazetteer.Enrich).
	Enriched, EnrichedByID, EnrichedByName int
	// Format is the format the file was read in.
	Format Format
	// Regions is how many first-level divisions Request.RegionNames named
	// (see RegionNames); 0 when they named none, or were not used.
	Regions int
	// Named is how many of the cities handed to the store got their
	// region's name from Request.RegionNames: duplicates included, but for
	// those of a GeoNames dump merged before their regions were named.
	Named int
	// Localized is how many of the rows that reached the store (duplicates
	// included) got names in other languages from Request.AlternateNames;
	// AlternateNames counts that file's rows, its malformed ones with
	// their line numbers.
	Localized      int
	AlternateNames ReadStats
	// Rejections are the first Request.MaxReported malformed rows.
	Rejections []RowError
	// GeoNamesRejected is how many rows of Request.GeoNames were malformed
	// and skipped (few enough not to fail the import: see MaxRejected);
	// GeoNamesRejections are the first DefaultMaxReported of them.
	GeoNamesRejected   int
	GeoNamesRejections []RowError
	// Warnings are what the import could not do of what the request asked,
	// without failing: each an *InputError (see Request.RegionNames).
	Warnings []error
	// Duration is how long the import took, from the opened source (after
	// any download) to the replaced dataset.
	Duration time.Duration
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
		p.Fprintf(&b, ", %d enriched from GeoNames (%d by id, %d by name)", s.Enriched, s.EnrichedByID, s.EnrichedByName)
	}
	if s.Named > 0 {
		p.Fprintf(&b, ", %d with region names", s.Named)
	}
	if s.AlternateNames.Rows > 0 {
		p.Fprintf(&b, ", %d with names in other languages (%d alternate names rejected)", s.Localized, s.AlternateNames.Rejected)
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
	return writeRejections(w, s.Rejected, s.Rejections)
}

// WriteGeoNamesRejections writes the kept malformed rows of
// Request.GeoNames to w as WriteRejections writes the source's.
func (s Summary) WriteGeoNamesRejections(w io.Writer) error {
	return writeRejections(w, s.GeoNamesRejected, s.GeoNamesRejections)
}

// writeRejections writes the first of rejected malformed rows to w.
func writeRejections(w io.Writer, rejected int, first []RowError) error {
	for _, r := range first {
		if _, err := fmt.Fprintln(w, r.Error()); err != nil {
			return err
		}
	}
	if more := rejected - len(first); more > 0 {
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

// DatasetFormats are the formats of the files each dataset is imported
// from, its usual one first.
var DatasetFormats = map[search.Dataset][]Format{
	search.Small: {FormatOKFN},
	search.Large: {FormatMaxMind, FormatGeoNames},
}

// fileFormat is the format to read dataset d's file in with (see
// Request.Format).
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
	return newParallelReader(lines, opts, format.what, pl, format.parser), nil
}

// progressReader reports to a Progress as rows pass through it.
type progressReader struct {
	importReader
	p         Progress
	lastBytes int64
	lastRows  int
}

// ReadBatch appends the next batch of cities to dst (see
// search.CityReader), and tells the Progress when the batch ends
// progressStep bytes or more past the last report, or the file ends.
func (r *progressReader) ReadBatch(dst []search.City) ([]search.City, error) {
	dst, err := r.importReader.ReadBatch(dst)
	if n := r.Consumed(); n-r.lastBytes >= progressStep || errors.Is(err, io.EOF) {
		rows := r.Stats().Rows
		if n > r.lastBytes || rows > r.lastRows {
			r.p.Advance(n-r.lastBytes, rows-r.lastRows)
			r.lastBytes, r.lastRows = n, rows
		}
	}
	return dst, err
}
