// Package search is cityfinder's domain: the City type, slug folding, the
// ranking rule, the Store contract that every storage backend fulfils, and
// the Service that answers what people type.
//
// # Matching
//
// Names and queries are folded the same way (see Slug): transliterated to
// ASCII, lower-cased, apostrophes dropped and every other run of
// non-alphanumerics turned into a single '-'. A city matches a query when its
// slug starts with the folded query.
//
// # Ranking
//
// Matches are ordered for people typing, by one function, Score, that the
// Service applies to every store's answers: population, times how well
// known the place is (how many alternate names it has), times how the name
// matched (main or alternate name, whole name or prefix) and divided by
// EditCost for each typo corrected. Before Score, a query that ends in a
// space lists first the names in which its last word ends, and matches
// from the start of a name come before matches from a later word. Stores
// pick their candidates in the order of CompareFound, by Weight, which
// their indexes are sorted by ahead of time; ties are broken by it, so
// that the order is total and the same in every store. See
// docs/ranking.md.
//
// # Layers
//
// A Store keeps datasets and answers folded prefix queries (Query), finds
// a city by its id (Lookup, see DerivedIDBase) and the cities around a
// point (Nearby, see CityRadiusKm). The Service sits between the edges
// (the CLI and the HTTP API) and a Store: it validates and folds a Request
// once, asks the store, adds typo matches and fills the match spans (Find),
// and checks the requests of Lookup and Reverse. Errors carry no CLI or
// HTTP words; the edges add their own.
package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Dataset names one of the city collections a store holds.
type Dataset string

// The datasets cityfinder knows.
const (
	// Small is the okfn "world cities" CSV (about 23k–34k rows, no population).
	Small Dataset = "small"
	// Large is MaxMind's world cities file (about 3.17M rows) or a GeoNames dump (cities500: about 230k).
	Large Dataset = "large"
)

// Datasets lists every known dataset in a stable order.
var Datasets = []Dataset{Small, Large}

// ParseDataset checks a dataset name given by a user. Its error matches
// ErrUnknownDataset and ErrInvalidQuery.
func ParseDataset(name string) (Dataset, error) {
	for _, d := range Datasets {
		if string(d) == name {
			return d, nil
		}
	}
	return "", &InvalidError{Field: "dataset", Message: fmt.Sprintf("Unknown dataset %q: use small or large", name), kind: ErrUnknownDataset}
}

// Limits on a query, shared by every store and the HTTP API.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// Sentinel errors of the Store contract and the Service.
var (
	// ErrUnknownDataset means the dataset name is not one of Datasets.
	ErrUnknownDataset = errors.New("unknown dataset")
	// ErrEmptyDataset means the dataset has not been imported yet.
	ErrEmptyDataset = errors.New("dataset is empty")
	// ErrInvalidQuery means the query cannot be answered as given
	// (for example a limit outside 1..MaxLimit).
	ErrInvalidQuery = errors.New("invalid query")
	// ErrUnavailable means the store's backing service cannot be reached,
	// or its data cannot be read.
	ErrUnavailable = errors.New("store unavailable")
	// ErrNotFound means the dataset has no city of the id asked for (see
	// Store.Lookup).
	ErrNotFound = errors.New("no such city")
	// ErrCorrupt means the stored copy of a dataset is damaged or was
	// written by another version: the dataset is unavailable until it is
	// imported again. It matches ErrUnavailable.
	ErrCorrupt error = corruptError{}
)

type corruptError struct{}

func (corruptError) Error() string { return "dataset is corrupt" }

func (corruptError) Is(target error) bool { return target == ErrUnavailable }

// EmptyDatasetError returns an error that matches ErrEmptyDataset and names
// dataset d.
func EmptyDatasetError(d Dataset) error {
	return &DatasetError{Dataset: d, Err: ErrEmptyDataset}
}

// DatasetError is an error about one dataset: it names the dataset, so that
// the edges can add their own advice (the CLI names the import command), and
// wraps what went wrong (ErrEmptyDataset, ErrUnavailable…).
type DatasetError struct {
	Dataset Dataset
	Err     error
}

func (e *DatasetError) Error() string { return fmt.Sprintf("dataset %s: %v", e.Dataset, e.Err) }

func (e *DatasetError) Unwrap() error { return e.Err }

// InvalidError is a query or request that cannot be answered as given.
// Message says why in words fit to show the person who typed it; Field names
// the part of the request at fault. It matches ErrInvalidQuery (and
// ErrUnknownDataset for an unknown dataset name).
type InvalidError struct {
	Field   string
	Message string
	kind    error
}

func (e *InvalidError) Error() string { return e.Message }

// Is makes the error match ErrInvalidQuery and its kind.
func (e *InvalidError) Is(target error) bool {
	return target == ErrInvalidQuery || (e.kind != nil && target == e.kind)
}

// invalid returns an InvalidError about field.
func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// Query asks a store for the best cities of one dataset with a key that
// starts with a folded prefix.
type Query struct {
	Dataset Dataset
	// Prefix is an already folded query (the output of Slug), never empty.
	Prefix string
	// Limit is how many cities to return at most, 1..MaxLimit.
	Limit int
	// Countries, when not empty, keeps only the cities whose CountryCode is
	// one of these lower-case ISO 3166 alpha-2 codes (see ParseCountries).
	Countries []string
	// Regions, when not empty, keeps only the cities of these first-level
	// divisions: a city is in region r when the slug of its Subcountry or
	// of its Region is r (see City.InRegion).
	Regions []string
	// Box, when not nil, keeps only the cities with a location inside it.
	Box *Box
	// Populated keeps only the cities of known population (above 0): the
	// Service asks for typo matches so when only those could outrank the
	// prefix matches it has (see typoWant), and a store with a typo index
	// may then leave out the parts of it that hold no such city.
	Populated bool
	// Words lets the prefix match at the start of a later word of a
	// city's name too (see Keys); such matches rank after the others.
	Words bool
	// Lines, when above 0, tells a store that the caller lists each group
	// of matches that read the same once (see SameLine), those from the
	// start of a name first, and keeps Lines of them at most, as the
	// Service does: with Words, a store may then leave out the matches at
	// later words when those from the start of a name that it found hold
	// Lines groups (see LinesApart), since no order of them leaves room for
	// a later word. It lets a store answer fewer matches, never other
	// ones: a store that ignores it answers as without it.
	Lines int
}

// Box is a rectangle of longitudes and latitudes, in decimal degrees, that
// does not cross the antimeridian.
type Box struct {
	MinLon, MinLat, MaxLon, MaxLat float64
}

// Contains reports whether the point lies in b, edges included.
func (b *Box) Contains(lat, lon float64) bool {
	return lat >= b.MinLat && lat <= b.MaxLat && lon >= b.MinLon && lon <= b.MaxLon
}

// InRegion reports whether c lies in the first-level division that the
// folded name or code r names (see Query.Regions).
func (c *City) InRegion(r string) bool {
	return (c.Subcountry != "" && Slug(c.Subcountry) == r) || (c.Region != "" && Slug(c.Region) == r)
}

// Accepts reports whether c passes the filters of q: its countries,
// regions, box and population. It is what every store must apply.
func (q *Query) Accepts(c *City) bool {
	if q.Populated && c.Population <= 0 {
		return false
	}
	if len(q.Countries) > 0 && !slices.Contains(q.Countries, c.CountryCode) {
		return false
	}
	if len(q.Regions) > 0 && !slices.ContainsFunc(q.Regions, c.InRegion) {
		return false
	}
	return q.Box == nil || (c.HasLocation && q.Box.Contains(c.Lat, c.Lon))
}

// Validate checks the parts of a query that every store relies on.
func (q Query) Validate() error {
	if _, err := ParseDataset(string(q.Dataset)); err != nil {
		return err
	}
	if q.Prefix == "" {
		return invalid("q", "Empty prefix")
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return invalid("limit", "Invalid limit %d: use a whole number from 1 to %d", q.Limit, MaxLimit)
	}
	if q.Lines < 0 || q.Lines > MaxLimit {
		return invalid("lines", "Invalid lines %d: use a whole number from 0 to %d", q.Lines, MaxLimit)
	}
	if err := validCountries(q.Countries); err != nil {
		return err
	}
	for _, r := range q.Regions {
		if r == "" || Slug(r) != r {
			return invalid("region", "Region %q is not folded", r)
		}
	}
	if b := q.Box; b != nil && !b.valid() {
		return invalid("bbox", "Invalid bbox: use minLon,minLat,maxLon,maxLat with minLon ≤ maxLon and minLat ≤ maxLat")
	}
	return nil
}

// validCountries checks a query's countries: lower-case ISO codes.
func validCountries(codes []string) error {
	for _, c := range codes {
		if len(c) != 2 || c[0] < 'a' || c[0] > 'z' || c[1] < 'a' || c[1] > 'z' {
			return invalid("country", "Country %q is not a lower-case ISO code", c)
		}
	}
	return nil
}

// valid reports whether b is a box of real coordinates, min ≤ max.
func (b *Box) valid() bool {
	for _, v := range []float64{b.MinLon, b.MinLat, b.MaxLon, b.MaxLat} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return b.MinLon >= -180 && b.MaxLon <= 180 && b.MinLat >= -90 && b.MaxLat <= 90 &&
		b.MinLon <= b.MaxLon && b.MinLat <= b.MaxLat
}

// CityReader yields the cities of a dataset in batches, as an import
// streams them, so that a store takes a block of cities per call rather
// than one. Its calls come one at a time, from one goroutine at a time.
type CityReader interface {
	// ReadBatch appends the next cities to dst and returns the extended
	// slice, as append does; it writes only past len(dst). How many it
	// appends is the reader's choice (typically a parsed block of the
	// file, about a thousand), but never none: it appends at least one
	// city, or returns an error and dst unchanged. So a caller that
	// reuses one slice, ReadBatch(batch[:0]), sees each batch in full,
	// and one that keeps every city, cities = ReadBatch(cities), collects
	// the file without a copy of its own.
	//
	// The appended cities are the caller's, to keep past later calls and
	// to change in place (the stages of an import complete them so): the
	// reader never touches them again. Their strings and AltNames may
	// share memory with other cities or with the reader's source
	// (interned country names, a SliceReader's slice), so a caller that
	// changes AltNames replaces the slice rather than writing into it.
	//
	// ReadBatch returns io.EOF after the last city; any other error means
	// the cities cannot all be read, and aborts the Load that is reading.
	// After an error, io.EOF included, the reader is done: later calls
	// return an error too.
	ReadBatch(dst []City) ([]City, error)
}

// Store is a place cities live: it answers prefix queries, finds a city by
// its id and the cities around a point, describes and replaces datasets. Its methods are all that the Service needs of a store,
// but for one optional capability, typo search (see TypoFinder), so that a
// decorator that implements them (see storetest.Wrap) keeps every feature
// of the store it wraps. A second optional capability, Versioned, numbers
// a dataset's contents, so that answers computed from one can be kept
// until it is replaced. Implementations are safe for concurrent use, say
// what they implement with var _ search.Store = (*Store)(nil) (and
// TypoFinder, Versioned), and run the conformance suite in package
// storetest.
//
// Errors common to every method: ErrUnknownDataset (wrapped) for a dataset
// that is not one of Datasets, ErrUnavailable (wrapped) when a backing
// service is down or the stored data cannot be read, or ctx's error.
type Store interface {
	// Search appends to dst at most q.Limit cities of q.Dataset that have
	// a key (see Keys: the slug of its name or of an alternate name, and
	// with q.Words of a later word of its name) starting with q.Prefix,
	// and that q.Accepts (countries, regions, box), and returns the
	// extended slice, as append does. Each city comes once, with its best
	// such key, ordered by CompareFound (best first); duplicates (same
	// Key) were removed at load time. Nothing matching appends nothing.
	// With q.Words and q.Lines, the matches at later words may be left
	// out when those from the start of a name hold q.Lines groups that
	// read differently (see Query.Lines).
	//
	// Search writes only past len(dst): the cities dst holds, and those
	// of every slice that shares its array up to len(dst), stay as they
	// are. So a caller that reuses one slice from search to search (as
	// the Service does) pays for fresh memory only when it grows, where
	// a new slice per search would cost more than the search itself. On
	// error it returns dst as it was.
	//
	// Errors: ErrInvalidQuery (wrapped) for a query that fails Validate,
	// ErrEmptyDataset (wrapped, see EmptyDatasetError) when the dataset has
	// never been loaded.
	Search(ctx context.Context, dst []Found, q Query) ([]Found, error)

	// Lookup returns the city of dataset d whose ID is id (see
	// DerivedIDBase for the ids of cities that came without one), with
	// every field as Search gives it. When two cities of d share an id
	// (a source that repeats one), it returns one of them.
	//
	// Errors: ErrNotFound (wrapped) when d has no city of that id, or id
	// is 0; ErrEmptyDataset (wrapped) when d has never been loaded.
	Lookup(ctx context.Context, d Dataset, id uint32) (City, error)

	// Nearby appends to dst at most q.Limit cities of q.Dataset with a
	// location within q.RadiusKm of q.Point that q.Accepts, best first
	// by the reverse rule (see CityRadiusKm), and returns the extended
	// slice, as append does; nothing near appends nothing. Stores rank
	// with Nearest (see FindNear), so that they agree, and bound the work
	// by where cities are: a lookup looks at the cities of a few dozen
	// kilometres around the point where they are dense. It writes only
	// past len(dst), and on error returns dst as it was.
	//
	// Errors: ErrInvalidQuery (wrapped) for a query that fails Validate,
	// ErrEmptyDataset (wrapped) when the dataset has never been loaded.
	Nearby(ctx context.Context, dst []City, q NearQuery) ([]City, error)

	// Stats describes dataset d as the last finished Load left it.
	//
	// Errors: ErrEmptyDataset (wrapped) when d has never been loaded, as
	// for Search.
	Stats(ctx context.Context, d Dataset) (DatasetStats, error)

	// Load replaces dataset d with the cities that r yields, atomically:
	// until Load returns nil, every Search sees the previous content of d
	// (or ErrEmptyDataset if there was none), and afterwards only the new
	// one; never a mix and never an empty dataset. Other processes sharing
	// the store switch over within their own reload delay (documented by
	// each store). If r fails, ctx ends, opts.Check refuses or the process
	// dies, the previous content stays. Cities with an empty Name or Slug
	// are rejected with ErrInvalidCity, and a reader that yields no city at
	// all fails with ErrNoCities, so an empty file never wipes a dataset.
	// Duplicates (same Key) are stored once, keeping the one that Compare
	// ranks first.
	Load(ctx context.Context, d Dataset, r CityReader, opts LoadOptions) (LoadStats, error)

	// Close releases the store's resources. Calls after Close fail with
	// ErrUnavailable.
	Close() error
}

// LoadOptions describe a Load beyond its cities.
type LoadOptions struct {
	// Source is the file the cities come from, kept with the dataset
	// (see DatasetStats).
	Source Source
	// Check, when not nil, is called once the new content is complete
	// and before it replaces the old: prev describes the current dataset
	// (Cities is 0 when there is none) and next the new content. An
	// error from Check fails the Load, wrapped, and keeps the old dataset.
	Check func(prev DatasetStats, next LoadStats) error
	// Phase, when not nil, hears each step a store takes after it has read
	// the last city, named in a word (PhaseSorting, PhaseIndexing,
	// PhaseWriting, PhaseSwapping; a store takes those it needs, in that
	// order), so that a long import never looks stuck.
	Phase func(name string)
}

// The steps of a Load after reading (see LoadOptions.Phase).
const (
	PhaseSorting  = "sorting"
	PhaseIndexing = "indexing"
	PhaseWriting  = "writing"
	PhaseSwapping = "swapping"
)

// Enter tells o.Phase, if any, that a Load enters step name.
func (o LoadOptions) Enter(name string) {
	if o.Phase != nil {
		o.Phase(name)
	}
}

// Source describes the file a dataset was imported from.
type Source struct {
	// Name is the file's base name, such as "world-cities.csv".
	Name string
	// Size is the file's size in bytes, 0 when unknown.
	Size int64
}

// DatasetStats describe a loaded dataset.
type DatasetStats struct {
	// Cities is how many cities the dataset holds.
	Cities int
	// Imported is when the Load that wrote it finished.
	Imported time.Time
	// Source is the file it was imported from (see LoadOptions).
	Source Source
}

// Errors of Store.Load.
var (
	// ErrInvalidCity means Load was handed a city it cannot store.
	ErrInvalidCity = errors.New("invalid city")
	// ErrNoCities means Load's reader yielded no city.
	ErrNoCities = errors.New("no cities to load")
)

// LoadStats describes a finished Load.
type LoadStats struct {
	// Read is how many cities the reader yielded.
	Read int
	// Stored is how many remain after duplicates were dropped.
	Stored int
}

// ReadAll drains a CityReader into a slice; handy in tests and small tools.
func ReadAll(r CityReader) ([]City, error) {
	var out []City
	for {
		var err error
		if out, err = r.ReadBatch(out); err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return out, err
		}
	}
}

// SliceReader is a CityReader over a slice.
type SliceReader struct {
	Cities []City
	// Batch is the most cities a ReadBatch appends; 0 means all that
	// are left.
	Batch int
	next  int
}

// ReadBatch appends the next cities of the slice (see Batch), then
// returns io.EOF.
func (r *SliceReader) ReadBatch(dst []City) ([]City, error) {
	rest := r.Cities[r.next:]
	if len(rest) == 0 {
		return dst, io.EOF
	}
	if r.Batch > 0 && len(rest) > r.Batch {
		rest = rest[:r.Batch]
	}
	r.next += len(rest)
	return append(dst, rest...), nil
}
