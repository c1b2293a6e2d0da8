// Package importer streams the city datasets (the okfn world-cities CSV,
// MaxMind's world cities file and the GeoNames dump) from a file into a
// search.Store, optionally completing them with the population, location
// and other names of GeoNames places (see Gazetteer).
//
// An Importer does the whole job from a Request: it finds or downloads the
// source (a path, "-" for standard input, an http(s) URL or a reader),
// tells its compression and format from its first bytes, reads only the
// inputs that format uses, each once, and loads the rows (see
// Importer.Import).
//
// # Reading
//
// Each format has a reader that reads a file line by line on the caller's
// goroutine (NewOKFNReader, NewMaxMindReader, NewGeoNamesReader). An import
// reads the same lines in parallel: one goroutine cuts them, a worker per
// CPU parses them, and the rows come back in file order, so that line
// numbers, rejections and strict reads are the same either way. Then one
// stage enriches them (see Gazetteer.Enrich) and one names their regions.
//
// # Encoding
//
// okfn and GeoNames files are UTF-8; a row with bytes that are not UTF-8 is
// malformed. MaxMind files are ISO-8859-1 (Latin-1), but some copies were
// re-encoded to UTF-8, sometimes only in part, so the encoding is decided per
// field: a field that is valid UTF-8 and holds a byte >= 0x80 is taken as
// UTF-8, any other field as Latin-1. Pure-ASCII fields read the same either
// way and are used as they are. The rule misreads only Latin-1 text that
// happens to form valid UTF-8 sequences (such as "Ã©"), which real place
// names practically never do.
//
// # Malformed rows
//
// Rows that cannot become a city (a wrong number of fields, an empty name,
// bad bytes, an unparsable number, unbalanced quotes in the okfn CSV, a line
// longer than MaxLine or a field longer than MaxField) are skipped, counted
// and the first few kept with their physical line number, unless the import
// is strict, in which case the first one ends it with an error wrapping
// ErrMalformedRow. Messages quote at most about 200 bytes of a bad input,
// escaped, with "…" marking a cut; so does any error about a header.
//
// # Region names
//
// GeoNames and MaxMind give a city's first-level division as a code; the
// okfn CSV names the division of each of its cities by geonameid. An
// import of the large dataset joins the two (see Subcountries and
// RegionNames) so that its cities show "Tokyo", not "40". A GeoNames dump's
// codes are learnt as its rows stream past, which are held back until the
// last is read, so that the dump is read once, from a pipe too.
//
// # Hostile files
//
// Every reader reads line by line through one buffer of MaxLine bytes, and
// a longer line is dropped as it is read, so a gzip of zeros or a line of
// hundreds of megabytes costs that buffer, not the line's size in memory.
package importer

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of an import.
var (
	// ErrMalformedRow means a row cannot become a city; strict imports stop
	// at the first one.
	ErrMalformedRow = errors.New("malformed row")
	// ErrHeader means the file does not start with the dataset's header, so
	// it is most likely not a file of that dataset.
	ErrHeader = errors.New("unexpected header")
	// ErrFormat means a file is in none of the formats the importer reads
	// (see DetectFormat).
	ErrFormat = errors.New("unknown file format")
	// ErrTooManyRows means a file has more rows than an import reads (see
	// Request.MaxRows).
	ErrTooManyRows = errors.New("too many rows")
)

// DefaultMaxRows is the most rows an import reads of a file when
// Request.MaxRows does not say: GeoNames' allCountries, the largest file
// it takes, has about 13 million, and a file of this many distinct cities
// still fits in a few gigabytes.
const DefaultMaxRows = 25_000_000

// rowLimit is the row limit that n asks for (see Request.MaxRows).
func rowLimit(n int) int {
	if n <= 0 {
		return DefaultMaxRows
	}
	return n
}

// tooManyRows is the error of a file with more than limit rows.
func tooManyRows(limit int) error {
	return fmt.Errorf("%w: the file has more than %s rows, the most an import reads", ErrTooManyRows, thousands(int64(limit)))
}

// DefaultMaxReported is how many malformed rows an import keeps for its
// report when the options do not say.
const DefaultMaxReported = 10

// RowError is a malformed row: its physical line in the file (the header is
// line 1) and what is wrong with it.
type RowError struct {
	Line   int
	Reason string
}

// Error reads like "line 17: wrong number of fields (3, want 4)".
func (e RowError) Error() string {
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
}

// ReaderOptions say how a row reader treats malformed rows.
type ReaderOptions struct {
	// Strict makes the first malformed row a fatal error.
	Strict bool
	// MaxReported is how many malformed rows ReadStats keeps;
	// 0 means DefaultMaxReported.
	MaxReported int
}

// ReadStats counts what a row reader has seen so far.
type ReadStats struct {
	// Rows is how many data rows were read: the header and blank lines
	// are not rows, malformed rows are.
	Rows int
	// Rejected is how many rows were malformed and skipped.
	Rejected int
	// Skipped is how many well-formed rows are not cities: the places of a
	// GeoNames dump that are not populated places (feature class P).
	Skipped int
	// Rejections are the first ReaderOptions.MaxReported malformed rows.
	Rejections []RowError
	// UnknownCountries is how many rows carry a country code that has no
	// English name; their Country is the code itself (MaxMind and GeoNames
	// cities only).
	UnknownCountries int
	// UnknownCodes lists up to 20 of those codes, sorted.
	UnknownCodes []string
}

// rowLog is the bookkeeping the readers share.
type rowLog struct {
	strict   bool
	limit    int
	rows     int
	rejected int
	skipped  int
	first    []RowError
}

func newRowLog(opts ReaderOptions) rowLog {
	limit := opts.MaxReported
	if limit <= 0 {
		limit = DefaultMaxReported
	}
	return rowLog{strict: opts.Strict, limit: limit}
}

// reject records a malformed row; in strict mode it returns the error that
// ends the read.
func (l *rowLog) reject(line int, reason string) error {
	l.rejected++
	if len(l.first) < l.limit {
		l.first = append(l.first, RowError{Line: line, Reason: reason})
	}
	if l.strict {
		return fmt.Errorf("%w: %w", ErrMalformedRow, &RowError{Line: line, Reason: reason})
	}
	return nil
}

func (l *rowLog) stats() ReadStats {
	return ReadStats{
		Rows:       l.rows,
		Rejected:   l.rejected,
		Skipped:    l.skipped,
		Rejections: append([]RowError(nil), l.first...),
	}
}

// headerMatches reports whether got names the columns of want, ignoring case
// and surrounding spaces.
func headerMatches(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !strings.EqualFold(strings.TrimSpace(got[i]), want[i]) {
			return false
		}
	}
	return true
}
