package mongo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

// Snapshots: beside its documents, every Load writes the dataset as the
// embedded store's snapshot file (package embedded), so that a replica can
// hold the whole dataset in memory and answer every search, typos
// included, without a round trip (see package mirror).
//
// Each generation's file goes into a GridFS bucket of its own,
// snapshots.<dataset>.<gen> (see BucketName), named <dataset>.cfs, with its
// generation, SHA-256 and format version in its metadata: dropping a
// generation is dropping its two collections, and a download never reads
// another generation's chunks, which a server without indexes for reads
// (FerretDB) would scan. The current generation of each dataset is one
// document of SnapshotCollection, {_id: <dataset>, gen, bucket, file_id,
// sha256, size, format, cities, imported_at}: a load uploads the whole file
// first, then moves that document to it in one compare-and-set update (gen
// must still be the one it read), so that a reader finds the old
// generation or the new one, never a file in the making. The previous
// generation is kept, for a replica that is still downloading it; older
// ones, and failed uploads, are dropped.
const SnapshotCollection = "snapshots.current"

// BucketName is the GridFS bucket of generation gen of dataset d's snapshot.
func BucketName(d search.Dataset, gen int64) string { return fmt.Sprintf("%s%d", bucketPrefix(d), gen) }

func bucketPrefix(d search.Dataset) string { return "snapshots." + string(d) + "." }

// Snapshot describes one generation of a dataset's snapshot in MongoDB.
type Snapshot struct {
	Dataset search.Dataset `bson:"_id"`
	// Gen counts the dataset's imports: 1 for the first, each import one more.
	Gen int64 `bson:"gen"`
	// Bucket is the GridFS bucket that holds the file (see BucketName).
	Bucket string        `bson:"bucket"`
	FileID bson.ObjectID `bson:"file_id"`
	// SHA256 is the hex SHA-256 of the file: a download that does not hash
	// to it is not used.
	SHA256 string `bson:"sha256"`
	Size   int64  `bson:"size"`
	// Format is the embedded store's FormatVersion that wrote the file.
	Format     int       `bson:"format"`
	Cities     int64     `bson:"cities"`
	ImportedAt time.Time `bson:"imported_at"`
}

// snapshotMeta is a GridFS file's metadata.
type snapshotMeta struct {
	Dataset string `bson:"dataset"`
	Gen     int64  `bson:"gen"`
	SHA256  string `bson:"sha256"`
	Format  int    `bson:"format"`
}

func (s *Store) bucket(name string) *mongo.GridFSBucket {
	return s.db.GridFSBucket(options.GridFSBucket().SetName(name))
}

// CurrentSnapshots returns the current generation of each dataset's
// snapshot (a dataset with none is missing from the map), or
// search.ErrUnavailable when the server cannot say. It is one query.
func (s *Store) CurrentSnapshots(ctx context.Context) (map[search.Dataset]Snapshot, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	cur, err := s.db.Collection(SnapshotCollection).Find(qctx, bson.D{})
	if err != nil {
		return nil, s.fail(ctx, "read the current snapshots", err)
	}
	var snaps []Snapshot
	if err := cur.All(qctx, &snaps); err != nil {
		return nil, s.fail(ctx, "read the current snapshots", err)
	}
	out := make(map[search.Dataset]Snapshot, len(snaps))
	for _, snap := range snaps {
		out[snap.Dataset] = snap
	}
	return out, nil
}

// ErrSnapshotMismatch means that a downloaded snapshot is not the one its
// document describes: its size or SHA-256 differ.
var ErrSnapshotMismatch = errors.New("the downloaded snapshot does not match its checksum")

// downloadBatch is how many chunks one reply of a download holds: 4 MB of
// the driver's default 255 kB chunks. (The driver's GridFS download leaves
// the batch size to the server; FerretDB 1.24 then answers a getMore with
// every chunk left, a reply larger than the 48 MB a message may be, where
// MongoDB stops at 16 MB. So the chunks are read here, as the GridFS spec
// lays them out.)
const downloadBatch = 16

// DownloadSnapshot writes the file of snap to w and checks it against
// snap's size and SHA-256: when it fails with ErrSnapshotMismatch, or any
// error, what w got must not be used. A file deleted during the download
// (two newer generations were published meanwhile) fails the check.
func (s *Store) DownloadSnapshot(ctx context.Context, snap Snapshot, w io.Writer) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	op := fmt.Sprintf("download snapshot %s generation %d", snap.Dataset, snap.Gen)
	chunks := s.db.Collection(snap.Bucket + ".chunks")
	cur, err := chunks.Find(ctx, bson.D{{Key: "files_id", Value: snap.FileID}},
		options.Find().SetSort(bson.D{{Key: "n", Value: 1}}).SetBatchSize(downloadBatch))
	if err != nil {
		return s.fail(ctx, op, err)
	}
	defer cur.Close(context.WithoutCancel(ctx))
	h := sha256.New()
	out := io.MultiWriter(w, h)
	var n, size int64
	for ; cur.Next(ctx); n++ {
		var chunk struct {
			N    int64  `bson:"n"`
			Data []byte `bson:"data"`
		}
		if err := cur.Decode(&chunk); err != nil {
			return s.fail(ctx, op, err)
		}
		if chunk.N != n {
			return fmt.Errorf("snapshot %s generation %d: %w: chunk %d where %d was due", snap.Dataset, snap.Gen, ErrSnapshotMismatch, chunk.N, n)
		}
		if _, err := out.Write(chunk.Data); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		size += int64(len(chunk.Data))
	}
	if err := cur.Err(); err != nil {
		return s.fail(ctx, op, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); size != snap.Size || sum != snap.SHA256 {
		return fmt.Errorf("snapshot %s generation %d: %w: %d bytes with SHA-256 %s, want %d bytes with %s",
			snap.Dataset, snap.Gen, ErrSnapshotMismatch, size, sum, snap.Size, snap.SHA256)
	}
	return nil
}

// WatchSnapshots calls changed whenever a snapshot document changes, until
// ctx ends, through a change stream. It returns at once with an error when
// the server has no change streams (a standalone MongoDB, FerretDB): the
// caller polls CurrentSnapshot instead.
func (s *Store) WatchSnapshots(ctx context.Context, changed func()) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	cs, err := s.db.Collection(SnapshotCollection).Watch(ctx, mongo.Pipeline{})
	if err != nil {
		return s.fail(ctx, "watch the snapshots", err)
	}
	defer cs.Close(context.WithoutCancel(ctx))
	for cs.Next(ctx) {
		changed()
	}
	if err := cs.Err(); err != nil && ctx.Err() == nil {
		return s.fail(ctx, "watch the snapshots", err)
	}
	return ctx.Err()
}

// snapshotBuild builds the embedded snapshot of a load beside it, from the
// same cities (see tee), in a temporary directory.
type snapshotBuild struct {
	dir   string
	path  string
	done  chan struct{}
	stats search.LoadStats
	err   error
}

// startSnapshot starts building dataset d's snapshot from the cities that
// the returned reader passes on; the load reads them from it.
func (s *Store) startSnapshot(ctx context.Context, d search.Dataset, r search.CityReader, src search.Source) (*snapshotBuild, *tee, error) {
	dir, err := os.MkdirTemp(s.opts.TempDir, "cityfinder-snapshot-")
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	store, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1, Lazy: true, Logger: s.opts.Logger})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("snapshot: %w", err)
	}
	b := &snapshotBuild{dir: dir, path: store.Path(d), done: make(chan struct{})}
	t := newTee(r)
	go func() {
		defer close(b.done)
		defer store.Close()
		defer t.stop()
		b.stats, b.err = store.Load(ctx, d, t.side(), search.LoadOptions{Source: src})
	}()
	return b, t, nil
}

// wait returns the build's outcome once it is over.
func (b *snapshotBuild) wait() (search.LoadStats, error) {
	<-b.done
	return b.stats, b.err
}

// remove deletes the build's directory, after waiting for it to end.
func (b *snapshotBuild) remove() {
	<-b.done
	os.RemoveAll(b.dir)
}

// publishBuild publishes the snapshot that b built, once it agrees with
// the documents' stats. The caller holds d's lease and has checked it.
func (s *Store) publishBuild(ctx context.Context, d search.Dataset, b *snapshotBuild, stored search.LoadStats) error {
	stats, err := b.wait()
	if err != nil {
		return fmt.Errorf("build the snapshot: %w", err)
	}
	if stats != stored {
		return fmt.Errorf("build the snapshot: it holds %d of %d cities, the documents %d of %d", stats.Stored, stats.Read, stored.Stored, stored.Read)
	}
	_, err = s.publish(ctx, d, b.path, stored.Stored)
	return err
}

// PublishSnapshot makes the embedded store's snapshot file at path, of
// cities cities, dataset d's next generation, without touching its
// documents: for seeding replicas from an embedded store, and for
// benchmarks. An import does both. It holds d's lease meanwhile, so that
// it fails with ErrLoadRunning while an import runs.
func (s *Store) PublishSnapshot(ctx context.Context, d search.Dataset, path string, cities int) (Snapshot, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return Snapshot{}, err
	}
	if err := s.check(ctx); err != nil {
		return Snapshot{}, err
	}
	var snap Snapshot
	_, err := s.leased(ctx, d, func(ctx context.Context, _ func(context.Context) error) (search.LoadStats, error) {
		var err error
		snap, err = s.publish(ctx, d, path, cities)
		return search.LoadStats{}, err
	})
	if err != nil {
		return Snapshot{}, s.fail(ctx, "publish snapshot of "+string(d), err)
	}
	return snap, nil
}

// publish uploads the snapshot file at path as dataset d's next generation
// and makes it the current one, then deletes the generations before the
// previous one. The caller holds d's lease.
func (s *Store) publish(ctx context.Context, d search.Dataset, path string, cities int) (Snapshot, error) {
	sum, size, err := HashFile(path)
	if err != nil {
		return Snapshot{}, fmt.Errorf("hash the snapshot: %w", err)
	}
	current := s.db.Collection(SnapshotCollection)
	var prev Snapshot
	err = current.FindOne(ctx, bson.D{{Key: "_id", Value: string(d)}}).Decode(&prev)
	if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
		return Snapshot{}, fmt.Errorf("read the current snapshot: %w", err)
	}
	next := Snapshot{Dataset: d, Gen: prev.Gen + 1, Bucket: BucketName(d, prev.Gen+1), SHA256: sum, Size: size, Format: embedded.FormatVersion,
		Cities: int64(cities), ImportedAt: time.Now().UTC().Truncate(time.Millisecond)} // as BSON keeps it
	f, err := os.Open(path)
	if err != nil {
		return Snapshot{}, fmt.Errorf("upload the snapshot: %w", err)
	}
	defer f.Close()
	meta := snapshotMeta{Dataset: string(d), Gen: next.Gen, SHA256: sum, Format: next.Format}
	bucket := s.bucket(next.Bucket)
	if err := bucket.Drop(ctx); err != nil { // what a failed upload of this generation left
		return Snapshot{}, fmt.Errorf("upload the snapshot: %w", err)
	}
	next.FileID, err = bucket.UploadFromStream(ctx, string(d)+embedded.FileExt, f, options.GridFSUpload().SetMetadata(meta))
	if err != nil {
		s.dropBucket(ctx, next.Bucket)
		return Snapshot{}, fmt.Errorf("upload the snapshot: %w", err)
	}
	// The switch: one update of one document, that matches only if no
	// other load moved it since it was read (the lease makes that a
	// safeguard, not a lock).
	if prev.Gen == 0 {
		_, err = current.InsertOne(ctx, next)
	} else {
		var res *mongo.UpdateResult
		res, err = current.ReplaceOne(ctx, bson.D{{Key: "_id", Value: string(d)}, {Key: "gen", Value: prev.Gen}}, next)
		if err == nil && res.MatchedCount != 1 {
			err = fmt.Errorf("generation %d was replaced meanwhile: was another import of dataset %s running?", prev.Gen, d)
		}
	}
	if err != nil {
		s.dropBucket(ctx, next.Bucket)
		return Snapshot{}, fmt.Errorf("make snapshot generation %d current: %w", next.Gen, err)
	}
	s.log.Debug("snapshot published", "dataset", d, "gen", next.Gen, "bytes", size, "sha256", sum)
	s.pruneSnapshots(ctx, d, next.Bucket, prev.Bucket)
	return next, nil
}

// pruneSnapshots drops dataset d's snapshot buckets but keep's: older
// generations, and uploads that never became current.
func (s *Store) pruneSnapshots(ctx context.Context, d search.Dataset, keep ...string) {
	names, err := s.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		s.log.Warn("cannot list old snapshots; the next import will drop them", "dataset", d, "err", s.fail(ctx, "list snapshots", err))
		return
	}
	for _, name := range names {
		bucket, ok := strings.CutSuffix(name, ".files")
		if ok && strings.HasPrefix(bucket, bucketPrefix(d)) && !slices.Contains(keep, bucket) {
			s.dropBucket(ctx, bucket)
		}
	}
}

func (s *Store) dropBucket(ctx context.Context, name string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := s.bucket(name).Drop(ctx); err != nil {
		s.log.Warn("cannot drop an old snapshot; the next import will", "bucket", name, "err", s.fail(ctx, "drop snapshot", err))
	}
}

// HashFile returns the hex SHA-256 of the file at path, as Snapshot.SHA256
// gives it, and its size.
func HashFile(path string) (sum string, size int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, fmt.Errorf("read %s: %w", filepath.Base(path), err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// tee passes each batch that its reader yields to a second reader, side,
// for the snapshot build: the load reads the tee, the build reads side.
// A batch waits until side takes it, so that the two keep pace and no
// more than one batch is held for the slower.
type tee struct {
	src     search.CityReader
	batches chan []search.City
	stopped chan struct{} // closed when side reads no more
	endOnce sync.Once
	err     error // the source's last error, once batches is closed
	stop    func()
}

func newTee(src search.CityReader) *tee {
	t := &tee{src: src, batches: make(chan []search.City), stopped: make(chan struct{})}
	t.stop = sync.OnceFunc(func() { close(t.stopped) })
	return t
}

// ReadBatch implements search.CityReader.
func (t *tee) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	dst, err := t.src.ReadBatch(dst)
	if err != nil {
		t.end(err)
		return dst, err
	}
	// Shallow copies: a city's strings and AltNames are never written to
	// (see search.CityReader), and each reader may change its own cities.
	select {
	case t.batches <- slices.Clone(dst[n:]):
	case <-t.stopped:
	}
	return dst, nil
}

// end tells side that no batch follows, and why: io.EOF, the source's
// error, or errLoadEnded when the load stopped reading first.
func (t *tee) end(err error) {
	t.endOnce.Do(func() {
		t.err = err
		close(t.batches)
	})
}

// errLoadEnded ends a snapshot build whose load stopped reading early.
var errLoadEnded = errors.New("the load stopped before the last city")

func (t *tee) side() search.CityReader { return teeSide{t} }

type teeSide struct{ t *tee }

func (s teeSide) ReadBatch(dst []search.City) ([]search.City, error) {
	batch, ok := <-s.t.batches
	if !ok {
		return dst, s.t.err
	}
	return append(dst, batch...), nil
}
