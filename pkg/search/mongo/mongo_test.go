package mongo_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

func TestMain(m *testing.M) { mongotest.Main(m) }

// mustOpen opens a store on a database of its own, dropped when t ends.
// Searches get 30 s where the store's default is 2: FerretDB reads every
// document of a collection for each query, and the machine running the
// tests may be busy.
func mustOpen(t *testing.T, uri string, opts mongo.Options) *mongo.Store {
	t.Helper()
	opts.URI = uri
	if opts.QueryTimeout == 0 {
		opts.QueryTimeout = 30 * time.Second
	}
	if opts.Database == "" {
		opts.Database = mongotest.Database(t, uri)
	}
	s, err := mongo.Open(opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// On FerretDB every query scans the whole collection (its indexes are not
// used for reads), so this suite measures correctness only; loads there go
// through the two-rename swap, as FerretDB lacks renameCollection's
// dropTarget, while a real MongoDB (CITYFINDER_TEST_MONGO_URI) takes the
// one-rename path. There the reference check loads 300 cities and asks
// 150 of their queries: FerretDB takes 0.1–0.3 s a query at that size
// (three finds, each reading the whole collection), so the 600 and 300
// it once had took 80 s of a make test.
func TestStore(t *testing.T) {
	uri := mongotest.URI(t)
	var opts []storetest.Option
	if os.Getenv(mongotest.EnvURI) == "" { // FerretDB
		opts = append(opts, storetest.SmallReference(300, 150))
	}
	storetest.Run(t, func(t *testing.T) search.Store { return mustOpen(t, uri, mongo.Options{}) }, opts...)
}

// A batch of one sends each duplicate through the path where the server
// rejects it and the store settles it against the stored city.
func TestStoreBatchOfOne(t *testing.T) {
	uri := mongotest.URI(t)
	s := mustOpen(t, uri, mongo.Options{BatchSize: 1})
	defer s.Close()
	stats := storetest.MustLoad(t, s, search.Large,
		storetest.City("Springfield", "United States", "IL", 0),
		storetest.City("Springfield", "United States", "IL", 116250),
		storetest.City("Springfield", "United States", "IL", 7),
	)
	if stats != (search.LoadStats{Read: 3, Stored: 1}) {
		t.Errorf("stats = %+v, want 3 read, 1 stored", stats)
	}
	if got := storetest.MustSearch(t, s, search.Large, "springfield", 10); len(got) != 1 || got[0].Population != 116250 {
		t.Errorf("kept %+v, want the one with 116250", got)
	}
}

// Ties on population and slug are ordered by name, country, … in Go, after
// the whole tie group is read, so that limits cutting through a group agree
// with the reference store whatever the server's string order. (FerretDB
// compares strings byte by byte, as MongoDB's default collation does, so
// neither would catch a store that sorted names on the server; the test
// pins the answers that a collation must not change.)
func TestStoreTieGroups(t *testing.T) {
	uri := mongotest.URI(t)
	s := mustOpen(t, uri, mongo.Options{})
	defer s.Close()
	var cities []search.City
	for _, country := range []string{"Peru", "Chile", "Spain", "Bolivia", "Mexico", "Cuba"} {
		cities = append(cities, storetest.City("San José", country, "X", 0), storetest.City("San Jose", country, "Y", 0))
	}
	cities = append(cities, storetest.City("San", "Italy", "Z", 0), storetest.City("San", "Mali", "Z", 0), storetest.City("Sanaa", "Yemen", "Z", 10))
	storetest.MustLoad(t, s, search.Large, cities...)
	ref := search.SliceReader{Cities: cities}
	all, _, err := search.Collect(t.Context(), &ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"san", "san-j", "san-jose"} {
		var want []search.City
		for _, c := range all {
			if strings.HasPrefix(c.Slug, prefix) {
				want = append(want, c)
			}
		}
		slices.SortFunc(want, func(a, b search.City) int { return search.Compare(prefix, &a, &b) })
		for limit := 1; limit <= len(want)+1; limit++ {
			got := storetest.MustSearch(t, s, search.Large, prefix, limit)
			w := want[:min(limit, len(want))]
			if !slices.EqualFunc(got, w, func(a search.Found, b search.City) bool { return a.City.Equal(&b) }) {
				t.Errorf("prefix %q limit %d:\n got %v\nwant %v", prefix, limit, got, w)
			}
		}
	}
}

// A load killed before its swap leaves its staging collection behind; the
// next load of the dataset drops it, and readers never see it. On FerretDB
// the swap goes through cities_small__previous (no dropTarget there), which
// must not be left behind either.
func TestLoadDropsLeftoverStaging(t *testing.T) {
	uri := mongotest.URI(t)
	db := mongotest.Database(t, uri)
	s := mustOpen(t, uri, mongo.Options{Database: db, BatchSize: 1})
	defer s.Close()
	storetest.MustLoad(t, s, search.Small, storetest.City("Paris", "France", "Ile-de-France", 0))

	// A failed load drops its own staging collection.
	client := mongotest.Client(t, uri)
	collections := func() []string { // the datasets' (not the leases')
		t.Helper()
		colls, err := client.Database(db).ListCollectionNames(t.Context(), map[string]any{"name": map[string]any{"$regex": "^cities_"}})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(colls)
		return colls
	}
	ctx, cancel := context.WithCancel(t.Context())
	r := &cancelingReader{cities: []search.City{storetest.City("Parla", "Spain", "Madrid", 0), storetest.City("Parma", "Italy", "", 0)}, cancel: cancel}
	if _, err := s.Load(ctx, search.Small, r, search.LoadOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted load: err = %v, want context.Canceled", err)
	}
	want := []string{mongo.CollectionName(search.Small)}
	if got := collections(); !slices.Equal(got, want) {
		t.Errorf("collections after a failed load: %q, want only %q", got, want)
	}

	// A killed load cannot clean up: plant what it would leave.
	leftover := mongo.CollectionName(search.Small) + "__staging_000000000000000000000000"
	if _, err := client.Database(db).Collection(leftover).InsertOne(t.Context(), map[string]any{"slug": "parla", "name": "Parla"}); err != nil {
		t.Fatal(err)
	}
	if got := names(storetest.MustSearch(t, s, search.Small, "par", 10)); !slices.Equal(got, []string{"Paris"}) {
		t.Errorf("with a staging collection: %q, want the old Paris", got)
	}
	storetest.MustLoad(t, s, search.Small, storetest.City("Parma", "Italy", "", 0))
	if got := collections(); !slices.Equal(got, want) {
		t.Errorf("collections after the next load: %q, want only %q", got, want)
	}
	if st, err := s.Stats(t.Context(), search.Small); err != nil || st.Cities != 1 {
		t.Errorf("Stats = %+v, %v; want 1 city", st, err)
	}
}

type cancelingReader struct {
	cities []search.City
	cancel func()
}

// ReadBatch yields one city per batch, then cancels the load.
func (r *cancelingReader) ReadBatch(dst []search.City) ([]search.City, error) {
	if len(r.cities) == 0 {
		r.cancel()
		return dst, context.Canceled
	}
	dst = append(dst, r.cities[0])
	r.cities = r.cities[1:]
	return dst, nil
}

func names(cities []search.Found) []string {
	out := make([]string, len(cities))
	for i, c := range cities {
		out[i] = c.Name
	}
	return out
}

// An unreachable server fails a search and a load within the connect
// timeout, with search.ErrUnavailable and a message that names the
// database and host, and nothing else of the URI.
func TestUnreachable(t *testing.T) {
	const uri = "mongodb://cityfinder:s3cret-pw@127.0.0.1:1/?authSource=admin"
	s, err := mongo.Open(mongo.Options{URI: uri, ConnectTimeout: time.Second})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer s.Close()
	start := time.Now()
	_, err = s.Search(t.Context(), nil, search.Query{Dataset: search.Small, Prefix: "par", Limit: 10})
	checkUnavailable(t, "search", err, start)
	start = time.Now()
	_, err = s.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{storetest.City("Paris", "France", "", 0)}}, search.LoadOptions{})
	checkUnavailable(t, "load", err, start)
	start = time.Now()
	_, err = s.Stats(t.Context(), search.Small)
	checkUnavailable(t, "stats", err, start)
}

func checkUnavailable(t *testing.T, op string, err error, start time.Time) {
	t.Helper()
	if !errors.Is(err, search.ErrUnavailable) {
		t.Errorf("%s: err = %v, want ErrUnavailable", op, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("%s took %s, want under 5s", op, d)
	}
	if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "cityfinder:") ||
		!strings.Contains(err.Error(), "MongoDB database city-finder at 127.0.0.1:1")) {
		t.Errorf("%s: error %q must name the database and host, and no more of the URI", op, err)
	}
}

func TestClosed(t *testing.T) {
	s, err := mongo.Open(mongo.Options{URI: "mongodb://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Small, Prefix: "par", Limit: 1}); !errors.Is(err, search.ErrUnavailable) {
		t.Errorf("search after close: err = %v, want ErrUnavailable", err)
	}
}
