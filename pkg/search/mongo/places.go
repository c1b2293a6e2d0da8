package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Index names of the lookups by id and by location.
const (
	indexID       = "id"
	indexLocation = "lat_lon"
)

// Lookup implements search.Store: one query on the id index, within the
// import that the dataset document names.
func (s *Store) Lookup(ctx context.Context, d search.Dataset, id uint32) (search.City, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.City{}, err
	}
	var city search.City
	err := s.withImport(ctx, d, fmt.Sprintf("look up city %d of dataset %s", id, d), func(ctx context.Context, coll *mongo.Collection, gen bson.ObjectID) error {
		docs, err := s.find(ctx, coll, bson.D{{Key: "id", Value: int64(id)}, {Key: "gen", Value: gen}}, 1, options.Find().SetHint(indexID))
		if err != nil || len(docs) == 0 {
			return err
		}
		city = docs[0].city()
		return nil
	})
	if err == nil && city.Slug == "" {
		err = fmt.Errorf("city %d of %s: %w", id, d, search.ErrNotFound)
	}
	return city, err
}

// Nearby implements search.Store: the cities in the boxes that
// search.FindNear asks for, read on the location index, ranked here.
func (s *Store) Nearby(ctx context.Context, dst []search.City, q search.NearQuery) ([]search.City, error) {
	if err := q.Validate(); err != nil {
		return dst, err
	}
	var cities []search.City
	err := s.withImport(ctx, q.Dataset, fmt.Sprintf("look around %g,%g in dataset %s", q.Point.Lat, q.Point.Lon, q.Dataset), func(ctx context.Context, coll *mongo.Collection, gen bson.ObjectID) error {
		var read []search.City
		best, err := search.FindNear(q, func(n *search.Nearest, boxes []search.Box, wide bool) error {
			if wide {
				read = read[:0] // a new round
			}
			pop := bson.D{{Key: "$lt", Value: search.WidePopulation}}
			if wide {
				pop = bson.D{{Key: "$gte", Value: search.WidePopulation}}
			}
			for _, b := range boxes {
				filter := bson.D{
					{Key: "lat", Value: bson.D{{Key: "$gte", Value: b.MinLat}, {Key: "$lte", Value: b.MaxLat}}},
					{Key: "lon", Value: bson.D{{Key: "$gte", Value: b.MinLon}, {Key: "$lte", Value: b.MaxLon}}},
					{Key: "population", Value: pop},
					{Key: "gen", Value: gen},
				}
				if len(q.Countries) > 0 {
					filter = append(filter, bson.E{Key: "country_code", Value: bson.D{{Key: "$in", Value: q.Countries}}})
				}
				docs, err := s.find(ctx, coll, filter, 0, options.Find().SetHint(indexLocation))
				if err != nil {
					return err
				}
				for i := range docs {
					if c := docs[i].city(); q.Accepts(&c) {
						n.Offer(search.PlaceOf(uint32(len(read)), &c))
						read = append(read, c)
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		cities = cities[:0]
		for _, p := range best {
			cities = append(cities, read[p.Item])
		}
		return nil
	})
	if err != nil {
		return dst, err
	}
	return append(dst, cities...), nil
}

// withImport runs read on the collection that holds dataset d and the
// generation of its import, and starts over when a load replaced the
// dataset meanwhile (the dataset document changed), as Search does. op
// names the operation in errors.
func (s *Store) withImport(ctx context.Context, d search.Dataset, op string, read func(context.Context, *mongo.Collection, bson.ObjectID) error) error {
	if err := s.check(ctx); err != nil {
		return err
	}
	qctx, cancel := context.WithTimeout(ctx, s.opts.QueryTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := s.readImport(qctx, d, read)
		if err == nil || errors.Is(err, search.ErrEmptyDataset) {
			return err
		}
		if replaced(err) && attempt < maxAttempts {
			continue
		}
		if replaced(err) {
			err = fmt.Errorf("%w %d times in a row: %w", errReplaced, maxAttempts, search.ErrUnavailable)
		}
		return s.fail(ctx, op, err)
	}
}

// readImport is one attempt of withImport.
func (s *Store) readImport(ctx context.Context, d search.Dataset, read func(context.Context, *mongo.Collection, bson.ObjectID) error) error {
	for _, name := range readOrder(d) {
		coll := s.db.Collection(name)
		m, err := s.readMeta(ctx, coll)
		if err != nil {
			return err
		}
		if m == nil {
			continue
		}
		if m.Schema != schemaVersion {
			return fmt.Errorf("collection %s was written by another version of cityfinder (schema %d, want %d): import dataset %s again",
				coll.Name(), m.Schema, schemaVersion, d)
		}
		if err := read(ctx, coll, m.Gen); err != nil {
			return err
		}
		// The answer holds only documents of import m.Gen: it is whole
		// if that import is still the one there.
		after, err := s.readMeta(ctx, coll)
		if err != nil {
			return err
		}
		if after == nil || after.Gen != m.Gen {
			return errReplaced
		}
		return nil
	}
	return search.EmptyDatasetError(d)
}
