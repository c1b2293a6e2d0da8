package mongo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// maxAttempts bounds how often one Search starts over because a load
// replaced the dataset while it ran.
const maxAttempts = 5

// errReplaced means that the queries of one search saw different imports.
var errReplaced = errors.New("the dataset was replaced during the search")

// Server error codes of a query whose collection a rename dropped under it.
var replacedCodes = []int{
	26,  // NamespaceNotFound
	43,  // CursorNotFound
	175, // QueryPlanKilled
	237, // CursorKilled
}

// Search implements search.Store: see the package documentation.
func (s *Store) Search(ctx context.Context, dst []search.Found, q search.Query) ([]search.Found, error) {
	if err := q.Validate(); err != nil {
		return dst, err
	}
	if err := s.check(ctx); err != nil {
		return dst, err
	}
	qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		cities, err := s.search(qctx, q)
		if err == nil {
			return append(dst, cities...), nil
		}
		if errors.Is(err, search.ErrEmptyDataset) {
			return dst, err
		}
		if replaced(err) && attempt < maxAttempts {
			continue
		}
		if replaced(err) {
			err = fmt.Errorf("%w %d times in a row: %w", errReplaced, maxAttempts, search.ErrUnavailable)
		}
		return dst, s.fail(ctx, fmt.Sprintf("search dataset %s for %q", q.Dataset, q.Prefix), err)
	}
}

func replaced(err error) bool {
	if errors.Is(err, errReplaced) {
		return true
	}
	var se mongo.ServerError
	if errors.As(err, &se) {
		for _, code := range replacedCodes {
			if se.HasErrorCode(code) {
				return true
			}
		}
		// FerretDB looks up a collection's SQLite table before it queries
		// it; a swap that drops the table in between fails the query with
		// InternalError "no such table" where MongoDB kills it.
		if se.HasErrorCode(1) && se.HasErrorMessage("no such table") {
			return true
		}
	}
	return false
}

// search answers q from one import, or fails with errReplaced. The main
// queries run at once: they do not depend on each other.
func (s *Store) search(ctx context.Context, q search.Query) ([]search.Found, error) {
	coll := s.db.Collection(CollectionName(q.Dataset))
	var (
		wg                sync.WaitGroup
		other, alts       []cityDoc
		otherErr, altsErr error
	)
	wg.Go(func() { other, otherErr = s.others(ctx, coll, q) })
	wg.Go(func() { alts, altsErr = s.alts(ctx, coll, q) })
	meta, exact, err := s.head(ctx, coll, q)
	wg.Wait()
	if err == nil && meta == nil {
		// Never imported, or between the two renames of a swap (see
		// readOrder): look further.
		coll, meta, exact, err = s.headElsewhere(ctx, q)
		if err == nil {
			other, otherErr = s.others(ctx, coll, q)
		}
		if err == nil && otherErr == nil {
			alts, altsErr = s.alts(ctx, coll, q)
		}
	}
	if err != nil {
		return nil, err
	}
	if otherErr != nil {
		return nil, otherErr
	}
	if altsErr != nil {
		return nil, altsErr
	}
	if err := sameImport(alts, meta.Gen); err != nil {
		return nil, err
	}
	if len(other) == 0 {
		// An empty answer carries no gen, and may have been read before
		// head: read it again after head, then check that the collection
		// still holds the import head read, so that it held it throughout.
		if other, err = s.others(ctx, coll, q); err != nil {
			return nil, err
		}
		if len(other) == 0 {
			m, err := s.readMeta(ctx, coll)
			if err != nil {
				return nil, err
			}
			if m == nil || m.Gen != meta.Gen {
				return nil, errReplaced
			}
		}
	}
	if err := sameImport(other, meta.Gen); err != nil {
		return nil, err
	}
	if exact, err = s.completeTies(ctx, coll, meta.Gen, q, exact); err != nil {
		return nil, err
	}
	if other, err = s.completeTies(ctx, coll, meta.Gen, q, other); err != nil {
		return nil, err
	}
	found := make([]search.Found, 0, len(exact)+len(other)+len(alts))
	seen := make(map[string]bool, cap(found))
	for _, docs := range [][]cityDoc{exact, other, alts} {
		for i := range docs {
			if seen[string(docs[i].ID)] {
				continue // found through two of its names
			}
			if f, ok := docs[i].found(&q); ok {
				seen[string(docs[i].ID)] = true
				found = append(found, f)
			}
		}
	}
	slices.SortFunc(found, func(a, b search.Found) int { return search.CompareFound(q.Prefix, &a, &b) })
	if len(found) > q.Limit {
		found = found[:q.Limit]
	}
	return slices.Clip(found), nil
}

// alts reads the cities that have an alternate name starting with q's
// prefix and may be among the first q.Limit: its whole-name matches and
// its other matches, each by population (see byPopulation).
func (s *Store) alts(ctx context.Context, coll *mongo.Collection, q search.Query) ([]cityDoc, error) {
	matches := func(d *cityDoc) bool {
		_, ok := d.found(&q)
		return ok
	}
	exactFilter := withFilters(bson.D{{Key: "keys", Value: q.Prefix}}, &q)
	exact, err := s.byPopulation(ctx, coll, exactFilter, indexAltSlug, q.Limit, matches)
	if err != nil {
		return nil, err
	}
	otherFilter := withFilters(bson.D{{Key: "key_prefixes", Value: q.Prefix[:min(len(q.Prefix), PrefixLen)]}}, &q)
	other, err := s.byPopulation(ctx, coll, otherFilter, indexAltRank, q.Limit, matches)
	if err != nil {
		return nil, err
	}
	return append(exact, other...), nil
}

// byPopulation reads the documents of filter by population and keeps those
// that accept takes: the first limit+1, and the rest of the population
// group where the limit cuts through one, as the server cannot order by
// which alternate name matched. It reads in batches and stops early; the
// filter only narrows the search (a prefix longer than PrefixLen is
// checked in Go, as FerretDB cannot match a range on an array's elements).
func (s *Store) byPopulation(ctx context.Context, coll *mongo.Collection, filter bson.D, hint string, limit int, accept func(*cityDoc) bool) ([]cityDoc, error) {
	batch := int32(2 * (limit + 1))
	cur, err := coll.Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "population", Value: -1}}).SetHint(hint).SetBatchSize(batch).
		SetProjection(bson.D{{Key: "prefixes", Value: 0}, {Key: "key_prefixes", Value: 0}}))
	if err != nil {
		return nil, err
	}
	defer cur.Close(ctx)
	var docs []cityDoc
	for cur.Next(ctx) {
		var d cityDoc
		if err := cur.Decode(&d); err != nil {
			return nil, err
		}
		if len(docs) > limit && d.Population != docs[len(docs)-1].Population {
			break
		}
		if accept(&d) {
			docs = append(docs, d)
		}
	}
	return docs, cur.Err()
}

// rankSort is the order of the ranking index after its prefix: the order
// of search.CompareRank for matches that are not whole-name matches.
var rankSort = bson.D{{Key: "population", Value: -1}, {Key: "slug_len", Value: 1}, {Key: "slug", Value: 1}}

// others reads the first q.Limit+1 matches of q other than the whole-name
// ones, in the order of rankSort: the slugs in (prefix, successor(prefix)),
// looked up in the ranking index by their first PrefixLen bytes.
func (s *Store) others(ctx context.Context, coll *mongo.Collection, q search.Query) ([]cityDoc, error) {
	slug := bson.D{{Key: "$gt", Value: q.Prefix}}
	if next := successor(q.Prefix); next != "" {
		slug = append(slug, bson.E{Key: "$lt", Value: next})
	}
	filter := bson.D{{Key: "prefixes", Value: q.Prefix[:min(len(q.Prefix), PrefixLen)]}, {Key: "slug", Value: slug}}
	filter = withFilters(filter, &q)
	return s.find(ctx, coll, filter, q.Limit+1, options.Find().SetSort(rankSort).SetHint(indexRank))
}

// withFilters adds the filters of q (see search.Query.Accepts) to filter:
// countries, regions, box and population.
func withFilters(filter bson.D, q *search.Query) bson.D {
	if q.Populated {
		filter = append(filter, bson.E{Key: "population", Value: bson.D{{Key: "$gt", Value: 0}}})
	}
	if len(q.Countries) > 0 {
		filter = append(filter, bson.E{Key: "country_code", Value: bson.D{{Key: "$in", Value: q.Countries}}})
	}
	if len(q.Regions) > 0 {
		filter = append(filter, bson.E{Key: "area_slugs", Value: bson.D{{Key: "$in", Value: q.Regions}}})
	}
	if b := q.Box; b != nil {
		filter = append(filter,
			bson.E{Key: "lat", Value: bson.D{{Key: "$gte", Value: b.MinLat}, {Key: "$lte", Value: b.MaxLat}}},
			bson.E{Key: "lon", Value: bson.D{{Key: "$gte", Value: b.MinLon}, {Key: "$lte", Value: b.MaxLon}}})
	}
	return filter
}

// head reads from coll, in one query, its dataset document and the first
// q.Limit+1 whole-name matches of q by population: the slug index has the
// dataset document (slug "") and the whole-name matches side by side. The
// dataset document is nil when coll holds no dataset.
func (s *Store) head(ctx context.Context, coll *mongo.Collection, q search.Query) (*metaDoc, []cityDoc, error) {
	filter := bson.D{{Key: "slug", Value: bson.D{{Key: "$in", Value: bson.A{"", q.Prefix}}}}}
	if cities := withFilters(bson.D{}, &q); len(cities) > 0 {
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{bson.D{{Key: "_id", Value: metaID}}, cities}})
	}
	n := q.Limit + 2
	cur, err := coll.Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "slug", Value: 1}, {Key: "population", Value: -1}}).
		SetLimit(int64(n)).SetBatchSize(int32(n)).
		SetProjection(bson.D{{Key: "prefixes", Value: 0}, {Key: "key_prefixes", Value: 0}}))
	if err != nil {
		return nil, nil, err
	}
	var raws []bson.Raw
	if err := cur.All(ctx, &raws); err != nil {
		return nil, nil, err
	}
	if len(raws) == 0 {
		return nil, nil, nil
	}
	if id, _ := raws[0].Lookup("_id").StringValueOK(); id != metaID {
		return nil, nil, nil // cities without a dataset document: not written by Load
	}
	var meta metaDoc
	if err := bson.Unmarshal(raws[0], &meta); err != nil {
		return nil, nil, fmt.Errorf("read the dataset document of %s: %w", coll.Name(), err)
	}
	if meta.Schema != schemaVersion {
		return nil, nil, fmt.Errorf("collection %s was written by another version of cityfinder (schema %d, want %d): import dataset %s again",
			coll.Name(), meta.Schema, schemaVersion, q.Dataset)
	}
	exact := make([]cityDoc, len(raws)-1)
	for i, raw := range raws[1:] {
		if err := bson.Unmarshal(raw, &exact[i]); err != nil {
			return nil, nil, fmt.Errorf("read a city of %s: %w", coll.Name(), err)
		}
	}
	if err := sameImport(exact, meta.Gen); err != nil {
		return nil, nil, err
	}
	return &meta, exact, nil
}

// headElsewhere looks for q's dataset where readOrder says after its
// collection, and runs head there.
func (s *Store) headElsewhere(ctx context.Context, q search.Query) (*mongo.Collection, *metaDoc, []cityDoc, error) {
	for _, name := range readOrder(q.Dataset)[1:] {
		coll := s.db.Collection(name)
		meta, exact, err := s.head(ctx, coll, q)
		if err != nil {
			return nil, nil, nil, err
		}
		if meta != nil {
			return coll, meta, exact, nil
		}
	}
	return nil, nil, nil, search.EmptyDatasetError(q.Dataset)
}

// sameImport fails with errReplaced unless every doc is of import gen.
func sameImport(docs []cityDoc, gen bson.ObjectID) error {
	for i := range docs {
		if docs[i].Gen != gen {
			return errReplaced
		}
	}
	return nil
}

// readMeta reads coll's dataset document; nil when there is none.
func (s *Store) readMeta(ctx context.Context, coll *mongo.Collection) (*metaDoc, error) {
	var m metaDoc
	err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: metaID}}).Decode(&m)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// find runs one query of a search for at most limit cities (limit 0: all),
// without the prefixes that only the index needs.
func (s *Store) find(ctx context.Context, coll *mongo.Collection, filter bson.D, limit int, opts *options.FindOptionsBuilder) ([]cityDoc, error) {
	opts.SetProjection(bson.D{{Key: "prefixes", Value: 0}, {Key: "key_prefixes", Value: 0}})
	if limit > 0 {
		opts.SetLimit(int64(limit)).SetBatchSize(int32(limit))
	}
	cur, err := coll.Find(ctx, filter, opts)
	if err != nil {
		return nil, err
	}
	var docs []cityDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	return docs, nil
}

// completeTies returns the documents of docs that can be among the first
// want by search.Compare. docs holds the first want+1 matches in an order
// that search.Compare refines (population, then slug length and slug), so
// Compare's last keys (name, country, subcountry, region, id) only matter
// within a group of the same slug and population. If the last group that
// fits (the want-th document's) may go on past want+1, it is read whole:
// the collation of the server then never decides an answer.
func (s *Store) completeTies(ctx context.Context, coll *mongo.Collection, gen bson.ObjectID, q search.Query, docs []cityDoc) ([]cityDoc, error) {
	want := q.Limit
	if len(docs) <= want {
		return docs, nil
	}
	last, next := &docs[want-1], &docs[want]
	if next.Slug != last.Slug || next.Population != last.Population {
		return docs[:want], nil
	}
	filter := withFilters(bson.D{{Key: "slug", Value: last.Slug}, {Key: "population", Value: last.Population}}, &q)
	group, err := s.find(ctx, coll, filter, 0, options.Find())
	if err != nil {
		return nil, err
	}
	if len(group) == 0 {
		return nil, errReplaced // the collection no longer has the group
	}
	if err := sameImport(group, gen); err != nil {
		return nil, err
	}
	i := slices.IndexFunc(docs, func(d cityDoc) bool { return d.Slug == last.Slug && d.Population == last.Population })
	return append(docs[:i:i], group...), nil
}
