// Package mongo is a search.Store kept in MongoDB, for deployments where
// several API replicas share the datasets. It speaks to MongoDB 6.0 or later
// (standalone, replica set or Atlas) through the official Go driver.
//
// # Collections
//
// Dataset d lives in the collection cities_<d> (cities_small, cities_large)
// of one database, city-finder by default. Each city is a document with the
// fields of the API (name, slug, country, country_code, subcountry, region,
// population, lat, lon, id) and its alternate names (alt_names), plus:
//
//   - _id: the first 16 bytes of a SHA-256 of the city's search.Key, so that
//     a duplicate listing of the same place collides on insert;
//   - slug_len: the slug's length, a key of the ranking;
//   - prefixes: the slug's first 1..PrefixLen bytes, for the ranking index;
//   - keys, key_alt and key_offset: the city's other keys (see
//     search.Keys: its alternate names and later words) and which name
//     each folds from where, and key_prefixes their first 1..PrefixLen
//     bytes: in the city's own document, under multikey indexes, so that
//     they can never drift from it;
//   - area_slugs: its subcountry and region folded, for region filters;
//   - local_names: its names in other languages and former names
//     (search.LocalName: lang, name, former), absent when it has none, so
//     that datasets written before them read as they were;
//   - gen: the ObjectID of the import that wrote it.
//
// One more document, {_id: "dataset", slug: ""}, records the import: its
// gen, how many cities it stored, when, and the schema version.
//
// # Loading
//
// Load streams the cities into a staging collection, cities_<d>__staging_<gen>,
// in unordered bulk inserts. A duplicate (same search.Key, so same _id) is
// rejected by the server and kept aside; after the last batch each key's
// best is settled in Go, keeping the city that search.Compare ranks first,
// in a few bulk statements. Then it writes the dataset document, builds the
// indexes, checks the count and its lease, and swaps the staging collection
// in with renameCollection and dropTarget, so that readers see the old
// dataset or the new one, never a part. A failed load drops its staging
// collection; one killed before it could is dropped by the next Load of the
// same dataset. A load holds its dataset's lease throughout, so that a
// second load from another process is refused rather than racing it (see
// LeaseCollection).
// Servers without dropTarget (FerretDB) get two renames instead, through
// cities_<d>__previous, which searches read while the target is missing.
//
// # Searching
//
// A search runs two queries at once: on the slug index {slug, population: -1},
// the dataset document and the whole-name matches (slug == prefix, whose
// weight is boosted, so that no index order can rank them with the rest);
// on the ranking index {prefixes, population: -1, slug_len, slug,
// country_code}, the other matches in rank order, stopping after limit+1.
// The two lists are merged in Go with search.Compare. Compare's last keys
// (name, country, …) are applied in Go too: when the (limit+1)th document
// ties with the limit-th on population and slug, the whole tie group is
// read. Two more queries find the cities through their other keys, on
// {keys, population: -1} (whole keys) and {key_prefixes, population: -1}
// (the others), by population; which of a city's keys matched, and so its
// rank, is settled in Go. Region and box filters are conditions on
// area_slugs, lat and lon. Every document carries its
// import's gen, and an answer whose queries saw different imports is asked
// again, so that a search racing a Load still sees one dataset. Driver
// errors that mean the server cannot be reached or answer in time become
// search.ErrUnavailable.
//
// # Snapshots
//
// Every Load also writes the dataset as the embedded store's snapshot into
// GridFS and makes it the dataset's current generation (see
// SnapshotCollection), so that replicas can serve it from memory with every
// feature of the embedded store (package mirror). Searching the documents
// directly, as below, is the direct-query mode.
//
// # No typo matching
//
// The Store is no search.TypoFinder, so the search.Service finds no typo
// matches in it: walking the trie of its keys (see search.WalkTypos) would
// cost a query or more per trie node, tens to thousands per query, and
// FerretDB cannot even express some of them (a range over the elements of
// an array of alternate names).
package mongo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Defaults for Options.
const (
	DefaultDatabase       = "city-finder"
	DefaultMaxPoolSize    = 100
	DefaultConnectTimeout = 3 * time.Second
	DefaultQueryTimeout   = 2 * time.Second
	DefaultBatchSize      = 1000
)

// Options configure a Store; zero fields get the defaults.
type Options struct {
	// URI is the MongoDB connection string, mongodb://… or
	// mongodb+srv://…. Options in it (maxPoolSize, connectTimeoutMS,
	// serverSelectionTimeoutMS, …) override the fields below.
	URI string
	// Database holds the datasets' collections.
	Database string
	// MaxPoolSize bounds the connections to each server.
	MaxPoolSize uint64
	// ConnectTimeout bounds connecting to a server and waiting for one to be
	// selectable, so that an unreachable server fails an operation within it.
	ConnectTimeout time.Duration
	// QueryTimeout bounds one Search.
	QueryTimeout time.Duration
	// BatchSize is how many cities Load sends in one insert.
	BatchSize int
	// LeaseTTL is how long a load's lease on its dataset outlives its last
	// renewal (see LeaseCollection).
	LeaseTTL time.Duration
	// TempDir is where a load builds the dataset's snapshot (see
	// SnapshotCollection); empty, os.TempDir().
	TempDir string
	// Logger hears of loads and of fallbacks; nothing is logged without it.
	Logger *slog.Logger
}

// Store is the MongoDB search.Store. It is safe for concurrent use.
type Store struct {
	opts    Options
	where   string            // the database and hosts, for messages (see Describe)
	secrets *strings.Replacer // scrubs the URI's password from the driver's messages
	client  *mongo.Client
	db      *mongo.Database
	log     *slog.Logger
	closed  atomic.Bool
	// noDropTarget is set once the server has refused renameCollection's
	// dropTarget (FerretDB does), so that loads swap in two renames.
	noDropTarget atomic.Bool
	loadMu       sync.Mutex // one Load at a time per Store
}

// The Store is a search.Store and, on purpose, no search.TypoFinder (see
// the package documentation).
var _ search.Store = (*Store)(nil)

// Open returns a Store on the server at opts.URI. It does not wait for the
// server: the driver connects in the background, so that `serve` starts
// while MongoDB is down; operations fail with search.ErrUnavailable until
// it is up.
func Open(opts Options) (*Store, error) {
	if opts.URI == "" {
		return nil, errors.New("mongo store: no URI")
	}
	if err := CheckURI(opts.URI); err != nil {
		return nil, fmt.Errorf("mongo store: invalid URI: %w", err)
	}
	if opts.Database == "" {
		opts.Database = DefaultDatabase
	}
	if opts.MaxPoolSize == 0 {
		opts.MaxPoolSize = DefaultMaxPoolSize
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.QueryTimeout <= 0 {
		opts.QueryTimeout = DefaultQueryTimeout
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{
		opts:    opts,
		where:   Describe(opts.URI, opts.Database),
		secrets: scrubber(opts.URI),
		log:     opts.Logger.With("component", "mongo"),
	}
	// The URI comes last so that its options win over the defaults.
	copts := options.Client().
		SetAppName("cityfinder").
		SetMaxPoolSize(opts.MaxPoolSize).
		SetConnectTimeout(opts.ConnectTimeout).
		SetServerSelectionTimeout(opts.ConnectTimeout).
		ApplyURI(opts.URI)
	client, err := mongo.Connect(copts)
	if err != nil {
		return nil, s.fail(context.Background(), "connect", err)
	}
	s.client = client
	s.db = client.Database(opts.Database)
	return s, nil
}

// String names the store for logs: the database and the hosts.
func (s *Store) String() string { return s.where }

// Close disconnects from the server, waiting at most ConnectTimeout for
// operations in flight. Searches and loads after Close fail with
// search.ErrUnavailable.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ConnectTimeout)
	defer cancel()
	if err := s.client.Disconnect(ctx); err != nil {
		return s.fail(context.Background(), "disconnect", err)
	}
	return nil
}

// Stats implements search.Store: it reads the dataset document.
func (s *Store) Stats(ctx context.Context, d search.Dataset) (search.DatasetStats, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.DatasetStats{}, err
	}
	if err := s.check(ctx); err != nil {
		return search.DatasetStats{}, err
	}
	qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	m, err := s.currentMeta(qctx, d)
	if err != nil {
		return search.DatasetStats{}, s.fail(ctx, "read dataset "+string(d), err)
	}
	if m == nil {
		return search.DatasetStats{}, search.EmptyDatasetError(d)
	}
	return m.stats(), nil
}

// currentMeta reads the dataset document of dataset d where searches would
// find it (see readOrder); nil when d was never loaded.
func (s *Store) currentMeta(ctx context.Context, d search.Dataset) (*metaDoc, error) {
	for _, name := range readOrder(d) {
		m, err := s.readMeta(ctx, s.db.Collection(name))
		if err != nil || m != nil {
			return m, err
		}
	}
	return nil, nil
}

// check fails when ctx is done or the store closed.
func (s *Store) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return fmt.Errorf("%s: %w: closed", s.where, search.ErrUnavailable)
	}
	return nil
}

// CollectionName is the collection that holds dataset d.
func CollectionName(d search.Dataset) string { return "cities_" + string(d) }

func stagingPrefix(d search.Dataset) string { return CollectionName(d) + "__staging_" }

func previousName(d search.Dataset) string { return CollectionName(d) + "__previous" }

// readOrder is where a reader looks for dataset d: the collection, then the
// previous one (present only between the two renames of a swap on a server
// without dropTarget), then the collection again (in case the swap finished
// between the first two looks).
func readOrder(d search.Dataset) []string {
	return []string{CollectionName(d), previousName(d), CollectionName(d)}
}

// opError is an error of the store: its text names the server with the
// password redacted, and it wraps its causes.
type opError struct {
	text string
	errs []error
}

func (e *opError) Error() string   { return e.text }
func (e *opError) Unwrap() []error { return e.errs }

// fail describes err, from operation op: ctx's own end stays itself; a
// server that cannot be reached or cannot answer in time becomes
// search.ErrUnavailable; search's sentinels and the reader's errors stay
// as they are. The text names the database and hosts, never the URI.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	errs := []error{err}
	text := fmt.Sprintf("%s on %s: %v", op, s.where, err)
	if ctx.Err() == nil && unavailable(err) {
		errs = []error{search.ErrUnavailable, err}
		text = fmt.Sprintf("%s on %s: %v: %v", op, s.where, search.ErrUnavailable, err)
	}
	return &opError{text: s.secrets.Replace(text), errs: errs}
}

// unavailable tells whether err means that the server is down, unreachable,
// overloaded or stepping down, rather than a fault of the request.
func unavailable(err error) bool {
	if errors.Is(err, mongo.ErrClientDisconnected) || mongo.IsTimeout(err) || mongo.IsNetworkError(err) {
		return true
	}
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	for _, label := range []string{"RetryableError", "RetryableWriteError", "SystemOverloadedError"} {
		if se.HasErrorLabel(label) {
			return true
		}
	}
	for _, code := range []int{
		6,     // HostUnreachable
		7,     // HostNotFound
		18,    // AuthenticationFailed: up, but not for us
		89,    // NetworkTimeout
		91,    // ShutdownInProgress
		189,   // PrimarySteppedDown
		10107, // NotWritablePrimary
		11600, // InterruptedAtShutdown
		11602, // InterruptedDueToReplStateChange
		13435, // NotPrimaryNoSecondaryOk
		13436, // NotPrimaryOrSecondary
	} {
		if se.HasErrorCode(code) {
			return true
		}
	}
	return false
}
