package mongo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// cleanupTimeout bounds dropping a failed load's staging collection, which
// happens even when the load's context has ended.
const cleanupTimeout = 10 * time.Second

// Server error codes that Load handles.
const (
	codeDuplicateKey   = 11000
	codeNotImplemented = 238 // FerretDB's answer to renameCollection's dropTarget
)

// Load implements search.Store: see the package documentation. Concurrent
// loads of one dataset through one Store run one after the other; a load
// from another Store (another process) while one runs fails at once with
// ErrLoadRunning and changes nothing (see LeaseCollection).
func (s *Store) Load(ctx context.Context, d search.Dataset, r search.CityReader, opts search.LoadOptions) (search.LoadStats, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.LoadStats{}, err
	}
	if err := s.check(ctx); err != nil {
		return search.LoadStats{}, err
	}
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	start := time.Now()
	stats, err := s.leased(ctx, d, func(ctx context.Context, lease func(context.Context) error) (search.LoadStats, error) {
		return s.load(ctx, d, r, opts, lease)
	})
	if err != nil {
		return stats, s.fail(ctx, "load dataset "+string(d), err)
	}
	s.log.Debug("loaded", "dataset", d, "collection", CollectionName(d), "read", stats.Read, "stored", stats.Stored,
		"duration", time.Since(start))
	return stats, nil
}

// load fills a staging collection and swaps it in, after opts.Check has
// accepted it and lease confirmed that the load still holds the dataset's
// lease.
func (s *Store) load(ctx context.Context, d search.Dataset, r search.CityReader, opts search.LoadOptions, lease func(context.Context) error) (search.LoadStats, error) {
	if err := s.dropStaging(ctx, d); err != nil {
		return search.LoadStats{}, err
	}
	gen := bson.NewObjectID()
	staging := s.db.Collection(stagingPrefix(d) + gen.Hex())
	build, t, err := s.startSnapshot(ctx, d, r, opts.Source)
	if err != nil {
		return search.LoadStats{}, err
	}
	defer build.remove()
	defer t.end(errLoadEnded) // before remove waits for the build
	stats, err := s.fill(ctx, staging, gen, t)
	if err == nil {
		err = s.finish(ctx, staging, d, gen, stats, opts, lease, build)
	}
	if err != nil {
		dropCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		if derr := staging.Drop(dropCtx); derr != nil {
			s.log.Warn("cannot drop the staging collection of a failed load; the next load will",
				"collection", staging.Name(), "err", s.fail(dropCtx, "drop", derr))
		}
		return stats, err
	}
	// A killed load's last insert may still have been queued on the server
	// when the drop above ran, and made its staging collection anew: look
	// again now, while this load still holds the lease.
	if err := s.dropStaging(ctx, d); err != nil {
		s.log.Warn("cannot drop a staging collection left by an interrupted load; the next load will", "err", s.fail(ctx, "drop", err))
	}
	return stats, nil
}

// dropStaging drops the staging collections of dataset d that earlier loads
// left behind when they were killed. The caller holds d's lease, so no live
// load owns them.
func (s *Store) dropStaging(ctx context.Context, d search.Dataset) error {
	names, err := s.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("list collections: %w", err)
	}
	for _, name := range names {
		if !strings.HasPrefix(name, stagingPrefix(d)) {
			continue
		}
		s.log.Info("dropping a staging collection left by an interrupted load", "collection", name)
		if err := s.db.Collection(name).Drop(ctx); err != nil {
			return fmt.Errorf("drop leftover staging collection %s: %w", name, err)
		}
	}
	return nil
}

// fill streams the cities of r into coll in batches. A city whose key is
// already stored is rejected by the server (its _id collides); the best of
// those rejected for each key is kept in memory, and settled against the
// stored one once every city is in, so that a server that scans for each
// update (FerretDB) still loads in a few queries.
func (s *Store) fill(ctx context.Context, coll *mongo.Collection, gen bson.ObjectID, r search.CityReader) (search.LoadStats, error) {
	batch := make([]cityDoc, 0, s.opts.BatchSize)
	challengers := make(map[string]*cityDoc)
	dups := 0
	flush := func() error {
		rejected, err := s.insert(ctx, coll, batch)
		if err != nil {
			return err
		}
		dups += len(rejected)
		for _, d := range rejected {
			if c := challengers[string(d.ID)]; c == nil || better(d, c) {
				challengers[string(d.ID)] = d
			}
		}
		batch = make([]cityDoc, 0, s.opts.BatchSize) // challengers point into the old one
		return nil
	}
	lr := search.NewLoadReader(r)
	var cities []search.City
	for {
		var err error
		cities, err = lr.ReadBatch(ctx, cities[:0])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return search.LoadStats{Read: lr.Count()}, err
		}
		for i := range cities {
			batch = append(batch, newCityDoc(&cities[i], gen))
			if len(batch) < cap(batch) {
				continue
			}
			if err := flush(); err != nil {
				return search.LoadStats{Read: lr.Count()}, err
			}
		}
	}
	stats := search.LoadStats{Read: lr.Count()}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return stats, err
		}
	}
	if err := s.settleDuplicates(ctx, coll, challengers); err != nil {
		return stats, err
	}
	stats.Stored = stats.Read - dups
	return stats, nil
}

// better tells whether a, rather than b, is the one of two cities with the
// same key that a store keeps: every store's rule, search.BySlug.
func better(a, b *cityDoc) bool {
	ac, bc := a.city(), b.city()
	return search.BySlug(&ac, &bc) < 0
}

// insert inserts docs unordered and returns those the server rejected as
// duplicates of a stored city (same search.Key, so same _id).
func (s *Store) insert(ctx context.Context, coll *mongo.Collection, docs []cityDoc) ([]*cityDoc, error) {
	_, err := coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err == nil {
		return nil, nil
	}
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) || bwe.WriteConcernError != nil {
		return nil, fmt.Errorf("insert cities: %w", err)
	}
	rejected := make([]*cityDoc, 0, len(bwe.WriteErrors))
	for _, we := range bwe.WriteErrors {
		if we.Code != codeDuplicateKey || we.Index < 0 || we.Index >= len(docs) {
			return nil, fmt.Errorf("insert cities: %w", err)
		}
		rejected = append(rejected, &docs[we.Index])
	}
	return rejected, nil
}

// settleBatch bounds the _ids in one query of settleDuplicates.
const settleBatch = 10000

// settleDuplicates stores, for each key, the better (see better) of the
// stored city and the best rejected one.
func (s *Store) settleDuplicates(ctx context.Context, coll *mongo.Collection, challengers map[string]*cityDoc) error {
	ids := make([][]byte, 0, len(challengers))
	for id := range challengers {
		ids = append(ids, []byte(id))
	}
	slices.SortFunc(ids, bytes.Compare)
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), settleBatch)]
		ids = ids[len(chunk):]
		inChunk := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: chunk}}}}
		cur, err := coll.Find(ctx, inChunk)
		if err != nil {
			return fmt.Errorf("read duplicates: %w", err)
		}
		var stored []cityDoc
		if err := cur.All(ctx, &stored); err != nil {
			return fmt.Errorf("read duplicates: %w", err)
		}
		if len(stored) != len(chunk) {
			return fmt.Errorf("read duplicates: %d of %d cities found", len(stored), len(chunk))
		}
		var replace [][]byte
		var winners []*cityDoc
		for i := range stored {
			if c := challengers[string(stored[i].ID)]; better(c, &stored[i]) {
				replace = append(replace, c.ID)
				winners = append(winners, c)
			}
		}
		if len(replace) == 0 {
			continue
		}
		// Delete and insert rather than replace one by one: two statements
		// for the whole chunk. Nobody reads a staging collection.
		if _, err := coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: replace}}}}); err != nil {
			return fmt.Errorf("replace duplicates: %w", err)
		}
		if _, err := coll.InsertMany(ctx, winners, options.InsertMany().SetOrdered(false)); err != nil {
			return fmt.Errorf("replace duplicates: %w", err)
		}
	}
	return nil
}

// finish completes a filled staging collection, publishes the snapshot
// that build made of the same cities, and swaps the collection in.
func (s *Store) finish(ctx context.Context, staging *mongo.Collection, d search.Dataset, gen bson.ObjectID, stats search.LoadStats,
	opts search.LoadOptions, lease func(context.Context) error, build *snapshotBuild) error {
	meta := metaDoc{
		ID: metaID, Gen: gen, Schema: schemaVersion, Dataset: string(d),
		Count: int64(stats.Stored), Read: int64(stats.Read), ImportedAt: time.Now().UTC(),
		SourceName: opts.Source.Name, SourceSize: opts.Source.Size,
	}
	if _, err := staging.InsertOne(ctx, meta); err != nil {
		return fmt.Errorf("write the dataset document: %w", err)
	}
	// Building the indexes once after the inserts is cheaper than keeping
	// them up to date during them.
	opts.Enter(search.PhaseIndexing)
	_, err := staging.Indexes().CreateMany(ctx, []mongo.IndexModel{
		{
			Keys: bson.D{{Key: "prefixes", Value: 1}, {Key: "population", Value: -1}, {Key: "slug_len", Value: 1}, {Key: "slug", Value: 1},
				{Key: "country_code", Value: 1}},
			Options: options.Index().SetName(indexRank),
		},
		{
			Keys:    bson.D{{Key: "slug", Value: 1}, {Key: "population", Value: -1}},
			Options: options.Index().SetName(indexSlug),
		},
		{
			Keys:    bson.D{{Key: "key_prefixes", Value: 1}, {Key: "population", Value: -1}},
			Options: options.Index().SetName(indexAltRank),
		},
		{
			Keys:    bson.D{{Key: "keys", Value: 1}, {Key: "population", Value: -1}},
			Options: options.Index().SetName(indexAltSlug),
		},
		{
			Keys:    bson.D{{Key: "id", Value: 1}},
			Options: options.Index().SetName(indexID),
		},
		{
			Keys:    bson.D{{Key: "lat", Value: 1}, {Key: "lon", Value: 1}},
			Options: options.Index().SetName(indexLocation),
		},
	})
	if err != nil {
		return fmt.Errorf("create indexes: %w", err)
	}
	// A concurrent load of the same dataset may have dropped this staging
	// collection, and a later insert made it anew with part of the cities.
	n, err := staging.EstimatedDocumentCount(ctx)
	if err != nil {
		return fmt.Errorf("count the staging collection: %w", err)
	}
	if want := int64(stats.Stored) + 1; n != want {
		return fmt.Errorf("staging collection %s holds %d documents, want %d: was another import of dataset %s running?",
			staging.Name(), n, want, d)
	}
	if opts.Check != nil {
		var prev search.DatasetStats
		m, err := s.currentMeta(ctx, d)
		if err != nil {
			return fmt.Errorf("read the current dataset: %w", err)
		}
		if m != nil {
			prev = m.stats()
		}
		if err := opts.Check(prev, stats); err != nil {
			return err
		}
	}
	if err := lease(ctx); err != nil {
		return err
	}
	opts.Enter(search.PhaseWriting)
	if err := s.publishBuild(ctx, d, build, stats); err != nil {
		return err
	}
	opts.Enter(search.PhaseSwapping)
	return s.swap(ctx, staging.Name(), d)
}

// swap replaces dataset d's collection with the staging one.
func (s *Store) swap(ctx context.Context, staging string, d search.Dataset) error {
	target := CollectionName(d)
	if !s.noDropTarget.Load() {
		err := s.rename(ctx, staging, target, true)
		var se mongo.ServerError
		if err == nil || !errors.As(err, &se) || !se.HasErrorCode(codeNotImplemented) {
			return err
		}
		s.noDropTarget.Store(true)
		s.log.Debug("the server does not implement renameCollection's dropTarget (FerretDB?): replacing datasets with two renames")
	}
	return s.swapInTwo(ctx, staging, d)
}

// swapInTwo replaces dataset d's collection on a server without dropTarget:
// it renames the collection to cities_<d>__previous, renames staging to
// the collection, and drops the previous one. Between the two renames a
// search finds no collection and reads the previous one (see readOrder), so
// it still sees the old dataset or the new one. If the process dies between
// them, searches keep reading the previous one until the next load.
func (s *Store) swapInTwo(ctx context.Context, staging string, d search.Dataset) error {
	target, previous := CollectionName(d), previousName(d)
	names, err := s.db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		return fmt.Errorf("list collections: %w", err)
	}
	has := func(name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
	if has(target) {
		if has(previous) { // left by a swap that died before dropping it
			if err := s.db.Collection(previous).Drop(ctx); err != nil {
				return fmt.Errorf("drop %s: %w", previous, err)
			}
		}
		if err := s.rename(ctx, target, previous, false); err != nil {
			return err
		}
	}
	if err := s.rename(ctx, staging, target, false); err != nil {
		return err
	}
	if err := s.db.Collection(previous).Drop(ctx); err != nil {
		s.log.Warn("cannot drop the previous dataset; the next load will", "collection", previous, "err", s.fail(ctx, "drop", err))
	}
	return nil
}

func (s *Store) rename(ctx context.Context, from, to string, dropTarget bool) error {
	db := s.db.Name()
	cmd := bson.D{{Key: "renameCollection", Value: db + "." + from}, {Key: "to", Value: db + "." + to}}
	if dropTarget {
		cmd = append(cmd, bson.E{Key: "dropTarget", Value: true})
	}
	if err := s.client.Database("admin").RunCommand(ctx, cmd).Err(); err != nil {
		return fmt.Errorf("rename collection %s to %s: %w", from, to, err)
	}
	return nil
}
