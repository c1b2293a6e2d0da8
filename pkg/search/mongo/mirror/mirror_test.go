package mirror_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/search/mongo/mirror"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

func TestMain(m *testing.M) { mongotest.Main(m) }

// mustSource opens a mongo.Store on database db of the server at uri.
// FerretDB scans every document for every query: searches and loads get
// 30 s where the default is 2.
func mustSource(t *testing.T, uri, db string) *mongo.Store {
	t.Helper()
	s, err := mongo.Open(mongo.Options{URI: uri, Database: db, QueryTimeout: 30 * time.Second, ConnectTimeout: time.Second, TempDir: t.TempDir()})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

// mustMirror opens a mirror of database db in dir, polling every poll
// (negative: never).
func mustMirror(t *testing.T, uri, db, dir string, poll time.Duration) *mirror.Store {
	t.Helper()
	m, err := mirror.Open(t.Context(), mustSource(t, uri, db), mirror.Options{Dir: dir, PollInterval: poll})
	if err != nil {
		t.Fatalf("open mirror: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// synced is a mirror whose Load imports into MongoDB and then syncs, so
// that the conformance suite sees, through the search.Store contract, what
// a replica serves after an import.
type synced struct {
	*mirror.Store
	importer *mongo.Store
}

func (s synced) Load(ctx context.Context, d search.Dataset, r search.CityReader, opts search.LoadOptions) (search.LoadStats, error) {
	stats, err := s.importer.Load(ctx, d, r, opts)
	if err != nil {
		return stats, err
	}
	return stats, s.Sync(ctx)
}

func (s synced) Close() error { return errors.Join(s.Store.Close(), s.importer.Close()) }

// The whole suite, typos included, answers as the embedded store does: the
// snapshot is the embedded store's. On FerretDB the reference part loads
// fewer cities, as every load also writes the documents, which FerretDB
// inserts slowly.
func TestStore(t *testing.T) {
	uri := mongotest.URI(t)
	var opts []storetest.Option
	if os.Getenv(mongotest.EnvURI) == "" { // FerretDB
		opts = append(opts, storetest.SmallReference(600, 300))
	}
	storetest.Run(t, func(t *testing.T) search.Store {
		db := mongotest.Database(t, uri)
		return synced{Store: mustMirror(t, uri, db, t.TempDir(), -1), importer: mustSource(t, uri, db)}
	}, opts...)
}

func cities(country string) []search.City {
	zurich := storetest.City("Zürich", "Switzerland", "Zurich", 341730)
	koln := storetest.City("Köln", "Germany", "North Rhine-Westphalia", 963395)
	koln.AltNames = []string{"Cologne"}
	paris := storetest.City("Paris", country, "Texas", 25171)
	return []search.City{zurich, koln, paris, storetest.City("Paris", "France", "Île-de-France", 2138551)}
}

func find(t *testing.T, s search.Store, q string) []string {
	t.Helper()
	res, err := search.NewService(s).Find(t.Context(), search.Request{Dataset: search.Small, Text: q, Limit: 3, Fuzzy: true})
	if err != nil {
		t.Fatalf("find %q: %v", q, err)
	}
	var out []string
	for _, f := range res.Hits {
		out = append(out, f.Name+", "+f.Country)
	}
	return out
}

// Replicas on one database see each import within a few polls, and each
// serves typos and alternate names from its copy.
func TestReplicasFollowImports(t *testing.T) {
	uri := mongotest.URI(t)
	db := mongotest.Database(t, uri)
	imp := mustSource(t, uri, db)
	defer imp.Close()
	storetest.MustLoad(t, imp, search.Small, cities("United States")...)
	replicas := []*mirror.Store{
		mustMirror(t, uri, db, t.TempDir(), 100*time.Millisecond),
		mustMirror(t, uri, db, t.TempDir(), 100*time.Millisecond),
	}
	for _, r := range replicas {
		if got := find(t, r, "zuirch"); len(got) == 0 || got[0] != "Zürich, Switzerland" {
			t.Errorf("zuirch: %q, want Zürich first", got)
		}
		if got := find(t, r, "cologne"); len(got) == 0 || got[0] != "Köln, Germany" {
			t.Errorf("cologne: %q, want Köln first", got)
		}
		if r.Generation(search.Small) != 1 {
			t.Errorf("generation %d, want 1", r.Generation(search.Small))
		}
	}
	start := time.Now()
	storetest.MustLoad(t, imp, search.Small, cities("Atlantis")...)
	published := time.Since(start)
	for i, r := range replicas {
		waitFor(t, 10*time.Second, func() bool { return r.Generation(search.Small) == 2 })
		if got := find(t, r, "paris tex"); !slices.Contains(got, "Paris, Atlantis") {
			t.Errorf("replica %d after the second import: %q, want Paris, Atlantis", i, got)
		}
	}
	t.Logf("import %s, every replica on it %s later", published, time.Since(start)-published)
}

func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Only the current generation and the one before it stay in GridFS.
func TestOldGenerationsDeleted(t *testing.T) {
	uri := mongotest.URI(t)
	db := mongotest.Database(t, uri)
	imp := mustSource(t, uri, db)
	defer imp.Close()
	for i := range 4 {
		storetest.MustLoad(t, imp, search.Small, storetest.City("Paris", "France", "", int64(i)))
	}
	names, err := mongotest.Client(t, uri).Database(db).ListCollectionNames(t.Context(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var buckets []string
	for _, name := range names {
		if strings.HasPrefix(name, "snapshots.small.") {
			buckets = append(buckets, name)
		}
	}
	slices.Sort(buckets)
	want := []string{"snapshots.small.3.chunks", "snapshots.small.3.files", "snapshots.small.4.chunks", "snapshots.small.4.files"}
	if !slices.Equal(buckets, want) {
		t.Errorf("snapshot collections: %q, want %q", buckets, want)
	}
	snaps, err := imp.CurrentSnapshots(t.Context())
	snap := snaps[search.Small]
	if err != nil || snap.Gen != 4 || snap.Bucket != mongo.BucketName(search.Small, 4) || snap.Cities != 1 || len(snap.SHA256) != 64 {
		t.Errorf("current snapshot %+v, %v; want generation 4 of 1 city", snap, err)
	}
}

// mirrorOfParis imports Paris into a database of its own and opens a
// mirror of it in dir, which syncs only when told.
func mirrorOfParis(t *testing.T) (uri, db string, imp *mongo.Store, r *mirror.Store, dir string) {
	t.Helper()
	uri = mongotest.URI(t)
	db = mongotest.Database(t, uri)
	imp = mustSource(t, uri, db)
	t.Cleanup(func() { imp.Close() })
	storetest.MustLoad(t, imp, search.Small, storetest.City("Paris", "France", "", 1))
	dir = t.TempDir()
	return uri, db, imp, mustMirror(t, uri, db, dir, -1), dir
}

// A download that does not hash to the snapshot's checksum is thrown away:
// the replica keeps serving the generation it has.
func TestCorruptSnapshotIsNotServed(t *testing.T) {
	uri, db, imp, r, _ := mirrorOfParis(t)
	storetest.MustLoad(t, imp, search.Small, storetest.City("Parma", "Italy", "", 1))

	// Flip the first byte of the new generation's first chunk.
	snaps, err := imp.CurrentSnapshots(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	snap := snaps[search.Small]
	chunks := mongotest.Client(t, uri).Database(db).Collection(snap.Bucket + ".chunks")
	var chunk struct {
		Data []byte `bson:"data"`
	}
	filter := bson.D{{Key: "files_id", Value: snap.FileID}, {Key: "n", Value: 0}}
	if err := chunks.FindOne(t.Context(), filter).Decode(&chunk); err != nil {
		t.Fatal(err)
	}
	chunk.Data[0] ^= 0xff
	if _, err := chunks.UpdateOne(t.Context(), filter, bson.D{{Key: "$set", Value: bson.D{{Key: "data", Value: chunk.Data}}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(t.Context()); !errors.Is(err, mongo.ErrSnapshotMismatch) {
		t.Errorf("sync of a corrupt snapshot: err = %v, want ErrSnapshotMismatch", err)
	}
	if got := storetest.MustSearch(t, r, search.Small, "par", 10); len(got) != 1 || got[0].Name != "Paris" {
		t.Errorf("after the corrupt generation: %v, want the old Paris", got)
	}
	if r.Generation(search.Small) != 1 {
		t.Errorf("generation %d, want 1", r.Generation(search.Small))
	}
	if err := r.Health(t.Context()); err == nil || !strings.Contains(err.Error(), "small generation 1") {
		t.Errorf("health = %v, want it to say that generation 1 is served", err)
	}
}

// A generation whose bytes check out but cannot be read (a bug, or a
// file published by hand) leaves the replica on its generation, in memory
// and on disk, and is not downloaded again.
func TestUnreadableSnapshotIsNotServed(t *testing.T) {
	_, db, imp, r, dir := mirrorOfParis(t)
	junk := filepath.Join(t.TempDir(), "small.cfs")
	if err := os.WriteFile(junk, []byte("not a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := imp.PublishSnapshot(t.Context(), search.Small, junk, 1); err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(t.Context()); err == nil || !strings.Contains(err.Error(), "read dataset small generation 2") {
		t.Errorf("sync of an unreadable generation: err = %v, want it to say so", err)
	}
	if err := r.Sync(t.Context()); err == nil || !strings.Contains(err.Error(), "waiting for the next import") {
		t.Errorf("second sync: err = %v, want it to wait for the next import", err)
	}
	if got := storetest.MustSearch(t, r, search.Small, "par", 10); len(got) != 1 || r.Generation(search.Small) != 1 {
		t.Errorf("after an unreadable generation: %v, generation %d; want Paris of generation 1", got, r.Generation(search.Small))
	}
	r.Close()
	again := mustMirror(t, "mongodb://127.0.0.1:1/", db, dir, -1) // no MongoDB: the copy alone
	if got := storetest.MustSearch(t, again, search.Small, "par", 10); len(got) != 1 {
		t.Errorf("the copy on disk after an unreadable generation: %v, want Paris", got)
	}
}

// MongoDB killed: a replica answers from memory; restarted while MongoDB
// is still down, from its copy on disk; MongoDB back, it takes the next
// import. (FerretDB has no change streams: this goes through polling,
// which a replica set's change stream only hastens.)
func TestServesWhileMongoDBIsDown(t *testing.T) {
	srv := mongotest.Start(t)
	uri := srv.URI()
	const db = "cityfinder_mirror"
	imp := mustSource(t, uri, db)
	defer imp.Close()
	storetest.MustLoad(t, imp, search.Small, storetest.City("Paris", "France", "", 1))
	dir := t.TempDir()
	r := mustMirror(t, uri, db, dir, 100*time.Millisecond)
	if err := r.Health(t.Context()); err != nil {
		t.Errorf("health with MongoDB up: %v", err)
	}

	srv.Stop(t)
	waitFor(t, 10*time.Second, func() bool { return r.Health(t.Context()) != nil })
	if got := storetest.MustSearch(t, r, search.Small, "par", 10); len(got) != 1 {
		t.Errorf("MongoDB down: %v, want Paris from memory", got)
	}
	r.Close()

	again := mustMirror(t, uri, db, dir, 100*time.Millisecond)
	if got := storetest.MustSearch(t, again, search.Small, "par", 10); len(got) != 1 {
		t.Errorf("restarted with MongoDB down: %v, want Paris from the copy", got)
	}
	if err := again.Health(t.Context()); err == nil || !strings.Contains(err.Error(), "serving what this replica holds (small of an earlier run)") {
		t.Errorf("health restarted with MongoDB down = %v, want it to say it serves its copies", err)
	}
	if _, err := again.Stats(t.Context(), search.Large); !errors.Is(err, search.ErrEmptyDataset) {
		t.Errorf("a dataset with no copy and no MongoDB: err = %v, want ErrEmptyDataset", err)
	}

	srv.Restart(t)
	// The importer's first operation may still meet a connection that the
	// restart broke: an import job would be run again.
	next := []search.City{storetest.City("Parma", "Italy", "", 1), storetest.City("Paris", "France", "", 1)}
	waitFor(t, 10*time.Second, func() bool {
		_, err := imp.Load(t.Context(), search.Small, &search.SliceReader{Cities: next}, search.LoadOptions{})
		return err == nil
	})
	waitFor(t, 15*time.Second, func() bool { return again.Generation(search.Small) == 2 })
	if got := storetest.MustSearch(t, again, search.Small, "par", 10); len(got) != 2 {
		t.Errorf("MongoDB back, after an import: %v, want Paris and Parma", got)
	}
	waitFor(t, 5*time.Second, func() bool { return again.Health(t.Context()) == nil })
}

// A replica refuses imports: they go to MongoDB.
func TestLoadRefused(t *testing.T) {
	uri := mongotest.URI(t)
	r := mustMirror(t, uri, mongotest.Database(t, uri), t.TempDir(), -1)
	_, err := r.Load(t.Context(), search.Small, &search.SliceReader{Cities: cities("X")}, search.LoadOptions{})
	if !errors.Is(err, mirror.ErrReadOnly) {
		t.Errorf("load: err = %v, want ErrReadOnly", err)
	}
}
