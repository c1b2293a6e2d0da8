package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	neturl "net/url"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Importer replaces datasets in a store with the cities of a file: the
// import's counterpart of search.Service. It finds or downloads the file,
// tells its compression and format once from its first bytes, reads only
// the inputs that format uses, reads each of them once (so that a pipe
// imports the same rows as the file on disk), and loads the cities into
// the store (see search.Store.Load).
type Importer struct {
	// Store receives the cities.
	Store search.Store
	// Stdin is what a Source named "-" reads; nil means os.Stdin.
	Stdin io.Reader
}

// Request says what to import.
//
// The inputs beyond the source are used by the formats they make sense for,
// and a request that names one its source's format cannot use fails before
// anything is read, with an *InputError wrapping ErrUnusedInput:
//
//	source format   GeoNames         RegionNames
//	okfn            completes rows   refused: the rows name their regions
//	MaxMind         completes rows   names regions, with GeoNames only
//	GeoNames        refused          names regions
//
// RegionNames for a MaxMind source without GeoNames is not read, and the
// import says so in Summary.Warnings rather than failing.
type Request struct {
	// Dataset is the dataset to replace.
	Dataset search.Dataset
	// Source is the file to import: plain, gzip-compressed or a zip
	// archive, in a format of the dataset's (see DatasetFormats).
	Source Source
	// Format, when not empty, is the source's format; empty means the one
	// its first line shows (see Input.Format) when the dataset takes files
	// of it, else the dataset's usual one, whose reader then says what is
	// wrong with the first line.
	Format Format
	// GeoNames, when set, is a GeoNames dump whose places complete the
	// okfn or MaxMind rows that they match (see Gazetteer.Enrich).
	GeoNames Source
	// RegionNames, when set, is an okfn CSV whose subcountries name the
	// regions of a GeoNames or MaxMind source, which give codes (see
	// Subcountries): a city whose region has a name gets it as Subcountry
	// and keeps the code as Region. A MaxMind file's codes are named
	// through GeoNames, whose places tell what they stand for.
	RegionNames Source
	// AlternateNames, when set, is GeoNames' alternate names file
	// (alternateNamesV2.txt or alternateNames.txt, plain, .gz or .zip):
	// the cities whose ID is a geonameid of it get their names in other
	// languages and their former names (see LocalNames), whatever the
	// source's format.
	AlternateNames Source
	// Strict makes the first malformed row fail the import, leaving the
	// dataset as it was.
	Strict bool
	// AllowShrink lets the import replace a dataset that it would shrink
	// sharply (see ShrinkError). Without it such an import fails with an
	// error matching ErrShrink and the dataset keeps its content.
	AllowShrink bool
	// MaxReported is how many malformed rows Summary keeps; 0 means
	// DefaultMaxReported.
	MaxReported int
	// MaxRows is the most rows the source, and the GeoNames dump, may
	// have; 0 means DefaultMaxRows. A longer file fails the import with an
	// error wrapping ErrTooManyRows, and the dataset keeps its content.
	// Duplicates are merged as they arrive (see Summary.Duplicates), so
	// that memory follows the distinct cities; the limit bounds a file of
	// rows that are all distinct.
	MaxRows int
	// Progress, when not nil, is told of each stage of the import that
	// moves through bytes: the download of a source given as a URL, then
	// the reading of the source. The Progress it returns (nil for none)
	// hears that stage until Progress is called again or Import returns.
	Progress func(Stage) Progress
	// Phase, when not nil, hears each step the store takes after the last
	// row is read (see search.LoadOptions.Phase).
	Phase func(name string)
	// Download says how an input given as a URL is fetched.
	Download DownloadOptions
}

// Source names an input of an import. The zero Source is none.
type Source struct {
	// Name is the file's path; "-" for the Importer's Stdin; or an http(s)
	// URL, which is downloaded once into Request.Download.Dir, under the
	// URL's base name, and read from there by later imports. With Reader,
	// it only names the input in messages (empty: "stream").
	Name string
	// Reader, when not nil, is read instead of the file that Name names.
	// A zip archive on a Reader that is no io.ReaderAt is copied to a
	// temporary file first, as is one on a pipe (see NewInput).
	Reader io.Reader
}

func (s Source) set() bool { return s.Name != "" || s.Reader != nil }

// url returns the source's URL when it is an http(s) one.
func (s Source) url() (*neturl.URL, bool) {
	if s.Reader != nil {
		return nil, false
	}
	u, err := neturl.Parse(s.Name)
	return u, err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// String names the source in messages.
func (s Source) String() string {
	switch {
	case s.Reader != nil && s.Name == "":
		return "stream"
	case s.Name == "-":
		return "standard input"
	}
	if _, ok := s.url(); ok {
		return redacted(s.Name)
	}
	return s.Name
}

// Stage is a part of an import that moves through bytes (see
// Request.Progress).
type Stage struct {
	// URL is what the stage downloads, with any password masked (see
	// url.URL.Redacted), "" for the stage that reads the source.
	URL string
	// File is where the download goes, or the source that is read.
	File string
	// Size is how many bytes the stage moves through, -1 when unknown.
	Size int64
}

// Role names an input of a request besides its source.
type Role string

// The inputs of a request besides its source.
const (
	RoleGeoNames    Role = "GeoNames"
	RoleRegionNames Role = "region names"
	// RoleAlternateNames is Request.AlternateNames.
	RoleAlternateNames Role = "alternate names"
)

// ErrUnusedInput means a request names an input that its source's format
// has no use for (see Request).
var ErrUnusedInput = errors.New("the source's format has no use for it")

// InputError is what went wrong with an input other than the source (the
// GeoNames dump, the region names), so that a caller can name the input
// as its user gave it.
type InputError struct {
	Role Role
	Err  error
}

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Import replaces req.Dataset in the store with the cities of req.Source.
// The summary is filled as far as the import got, even when it fails.
// Errors about the source name it; those about another input are an
// *InputError.
func (im *Importer) Import(ctx context.Context, req Request) (Summary, error) {
	sum := Summary{Dataset: req.Dataset}
	in, err := im.open(ctx, req.Source, req, true)
	if err != nil {
		return sum, fmt.Errorf("import %s: %w", req.Dataset, err)
	}
	defer in.Close()
	sum, err = im.importFrom(ctx, in, req)
	if err != nil {
		return sum, fmt.Errorf("import %s from %s: %w", req.Dataset, req.Source, err)
	}
	return sum, nil
}

// importFrom imports the opened source in.
func (im *Importer) importFrom(ctx context.Context, in *Input, req Request) (Summary, error) {
	start := time.Now()
	sum := Summary{Dataset: req.Dataset}
	format, err := fileFormat(req.Dataset, req.Format, in)
	if err != nil {
		return sum, err
	}
	sum.Format = format
	useGeoNames, useRegions, err := inputsFor(format, req)
	if err != nil {
		return sum, err
	}
	if !useRegions && req.RegionNames.set() && format == FormatMaxMind {
		sum.Warnings = append(sum.Warnings, &InputError{RoleRegionNames,
			fmt.Errorf("%w: a MaxMind file's region codes are named only with a GeoNames dump, whose places tell what they stand for", ErrUnusedInput)})
	}
	var gaz *Gazetteer
	if useGeoNames {
		read := func(r io.Reader) (*Gazetteer, error) { return readGazetteer(r, req.MaxRows) }
		if gaz, err = readRole(ctx, im, req, RoleGeoNames, req.GeoNames, "GeoNames file", read); err != nil {
			return sum, err
		}
		gaz.Source = req.GeoNames.String()
		sum.GeoNamesRejected, sum.GeoNamesRejections = gaz.Rejected, gaz.Rejections
	}
	var subs *Subcountries
	if useRegions {
		if subs, err = readRole(ctx, im, req, RoleRegionNames, req.RegionNames, "okfn file", ReadSubcountries); err != nil {
			return sum, err
		}
		subs.Source = req.RegionNames.String()
	}

	var locals *LocalNames
	if req.AlternateNames.set() {
		if locals, err = readRole(ctx, im, req, RoleAlternateNames, req.AlternateNames, "alternate names file", func(r io.Reader) (*LocalNames, error) {
			return ReadLocalNames(r, ReaderOptions{Strict: req.Strict, MaxReported: req.MaxReported})
		}); err != nil {
			return sum, err
		}
		locals.Source = req.AlternateNames.String()
		sum.AlternateNames = locals.Stats
	}

	rr, err := newImportReader(format, in, ReaderOptions{Strict: req.Strict, MaxReported: req.MaxReported}, defaultPipeline(in, req.MaxRows))
	if err != nil {
		return sum, err
	}
	defer rr.Close()
	var cr search.CityReader = rr
	if req.Progress != nil {
		if p := req.Progress(Stage{File: req.Source.String(), Size: in.Size()}); p != nil {
			cr = &progressReader{importReader: rr, p: p}
		}
	}
	var enriched *EnrichedReader
	if gaz != nil {
		enriched = gaz.Enrich(cr)
		enriched.merging = true
		cr = enriched
	}
	var localized *LocalizedReader
	if locals != nil {
		localized = locals.Localize(cr)
		cr = localized
	}
	var gnRegions *geonamesRegions
	var mmRegions *maxmindRegions
	switch {
	case subs != nil && format == FormatGeoNames:
		gnRegions = &geonamesRegions{r: cr, subs: subs, keys: keyTable{withID: true}}
		cr = gnRegions
	case subs != nil && format == FormatMaxMind:
		names := gaz.RegionNames(subs)
		sum.Regions = names.Len()
		enriched.regions = names
		mmRegions = &maxmindRegions{in: runReader{r: cr}, names: names}
		cr = mmRegions
	}

	distinct := &distinctReader{r: cr, keys: keyTable{derive: true}}
	cr = distinct

	lopts := search.LoadOptions{Source: sourceStats(req.Source, in), Phase: req.Phase}
	if !req.AllowShrink {
		lopts.Check = func(prev search.DatasetStats, next search.LoadStats) error {
			return checkShrink(req.Dataset, prev, next, rr.Stats())
		}
	}
	ls, err := im.Store.Load(ctx, req.Dataset, cr, lopts)
	st := rr.Stats()
	sum.Read, sum.Rejected, sum.Skipped, sum.Rejections = st.Rows, st.Rejected, st.Skipped, st.Rejections
	sum.UnknownCountries, sum.UnknownCodes = st.UnknownCountries, st.UnknownCodes
	if enriched != nil {
		sum.Enriched, sum.EnrichedByID, sum.EnrichedByName = enriched.Enriched(), enriched.EnrichedByID(), enriched.EnrichedByName()
	}
	if mmRegions != nil {
		sum.Named = mmRegions.held.named
	}
	if localized != nil {
		if sum.Localized = localized.Localized(); sum.Localized == 0 {
			sum.Warnings = append(sum.Warnings, &InputError{RoleAlternateNames,
				fmt.Errorf("%w: no city of %s has a geonameid that %s names", ErrUnusedInput, req.Source, locals.Source)})
		}
	}
	if gnRegions != nil && gnRegions.names != nil {
		sum.Regions, sum.Named = gnRegions.names.Len(), gnRegions.named
	}
	sum.Duration = time.Since(start)
	if err != nil {
		return sum, err
	}
	sum.Imported = ls.Stored
	sum.Duplicates = distinct.Dropped() + ls.Read - ls.Stored
	if gnRegions != nil {
		sum.Duplicates += gnRegions.drops
	}
	if enriched != nil {
		sum.Duplicates += enriched.merged
	}
	return sum, nil
}

// inputsFor says which of req's other inputs a source of format f uses
// (see Request), or refuses one it cannot use.
func inputsFor(f Format, req Request) (geonames, regions bool, err error) {
	switch {
	case f == FormatGeoNames && req.GeoNames.set():
		return false, false, &InputError{RoleGeoNames, fmt.Errorf("%w: %s is itself a GeoNames dump, whose rows carry their own population, location and alternate names",
			ErrUnusedInput, req.Source)}
	case f == FormatOKFN && req.RegionNames.set():
		return false, false, &InputError{RoleRegionNames, fmt.Errorf("%w: the rows of an okfn CSV name their regions themselves", ErrUnusedInput)}
	}
	geonames = req.GeoNames.set()
	regions = req.RegionNames.set() && (f == FormatGeoNames || geonames)
	return geonames, regions, nil
}

// readRole reads src, the input of req in role, with read; errors are an
// *InputError naming the input as what it should be ("GeoNames file").
func readRole[T any](ctx context.Context, im *Importer, req Request, role Role, src Source, what string, read func(io.Reader) (T, error)) (T, error) {
	v, err := readFrom(src.String(), what, func() (*Input, error) { return im.open(ctx, src, req, false) }, read)
	if err != nil {
		return v, &InputError{role, err}
	}
	return v, nil
}

// open opens src for reading, downloading it first when it is a URL; the
// download is a stage that req.Progress hears of when watch is set.
func (im *Importer) open(ctx context.Context, src Source, req Request, watch bool) (*Input, error) {
	switch {
	case src.Reader != nil:
		return NewInput(src.Reader)
	case src.Name == "-":
		stdin := im.Stdin
		if stdin == nil {
			stdin = os.Stdin
		}
		return NewInput(stdin)
	case src.Name == "":
		return nil, errors.New("no file to import")
	}
	file := src.Name
	if u, ok := src.url(); ok {
		if req.Download.Dir == "" {
			return nil, fmt.Errorf("download %s: no directory to download into", u)
		}
		file = downloadPath(req.Download.Dir, u)
		if err := fetch(ctx, u.String(), file, req, watch); err != nil {
			return nil, err
		}
	}
	return Open(file)
}

// downloadPath is where a download of u goes: its base name in dir.
func downloadPath(dir string, u *neturl.URL) string {
	name := path.Base(u.Path)
	if name == "/" || name == "." {
		name = "download"
	}
	return filepath.Join(dir, name)
}

// fetch downloads url into file unless the file exists. A directory it
// made for the file goes again when the download fails.
func fetch(ctx context.Context, url, file string, req Request, watch bool) error {
	if _, err := os.Stat(file); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("download %s: %w", redacted(url), err)
	}
	dir := filepath.Dir(file)
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("download %s: %w", redacted(url), err)
	}
	opts := req.Download
	if watch && req.Progress != nil {
		opts.Progress = req.Progress(Stage{URL: redacted(url), File: file, Size: -1})
	}
	err := Download(ctx, url, file, opts)
	if err != nil && errors.Is(statErr, fs.ErrNotExist) {
		os.Remove(dir) // only if empty
	}
	return err
}

// sourceStats describes the source for the dataset (see search.Source).
func sourceStats(src Source, in *Input) search.Source {
	size := max(in.Size(), 0)
	name := src.String()
	if u, ok := src.url(); ok {
		name = path.Base(u.Path)
	} else if src.Reader == nil && src.Name != "-" {
		name = filepath.Base(src.Name)
	}
	return search.Source{Name: name, Size: size}
}
