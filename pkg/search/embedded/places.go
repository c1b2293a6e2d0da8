package embedded

import (
	"context"
	"fmt"
	"math"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// indexPlaces builds the indexes of the city records by id and by
// location: both come from the records in linear time, so the file need
// not hold them. It runs beside the searches (see indexInBackground), as
// it takes up to a second for millions of cities: Lookup and Nearby wait
// for it, searches do not.
func (s *snapshot) indexPlaces() {
	s.ids = search.NewIDIndex(s.count, func(i uint32) uint32 {
		if r := s.rec(i); !r.isAlt() {
			return r.id()
		}
		return 0
	})
	for k, wide := range []bool{false, true} {
		s.grids[k] = search.NewGrid(s.count, func(i uint32) (float64, float64, bool) {
			r := s.rec(i)
			if r.isAlt() {
				return 0, 0, false
			}
			lat, lon, ok := r.location()
			return lat, lon, ok && search.Wide(int64(r.pop())) == wide
		})
	}
}

// indexInBackground starts building the snapshot's indexes of places,
// once: the first Lookup or Nearby of a snapshot starts it, so that a
// process that only searches never holds them (30 MB for the full-size
// large set), and a search goes on meanwhile.
func (s *snapshot) indexInBackground() {
	s.placesOnce.Do(func() {
		go func() {
			defer close(s.placesReady)
			s.indexPlaces()
		}()
	})
}

// places returns the snapshot of dataset d once its indexes by id and by
// location are built (see indexPlaces). The snapshot is immutable and its
// data Go memory, so it is read without the store's lock, which a reload
// would otherwise wait for behind the build.
func (s *Store) places(ctx context.Context, d search.Dataset) (*snapshot, error) {
	s.use(d)
	s.mu.RLock()
	snap, err := s.snapshot(ctx, d)
	s.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	snap.indexInBackground()
	select {
	case <-snap.placesReady:
		return snap, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Lookup implements search.Store.
func (s *Store) Lookup(ctx context.Context, d search.Dataset, id uint32) (search.City, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.City{}, err
	}
	snap, err := s.places(ctx, d)
	if err != nil {
		return search.City{}, err
	}
	rec, ok := snap.ids.Find(id)
	if !ok {
		return search.City{}, fmt.Errorf("city %d of %s: %w", id, d, search.ErrNotFound)
	}
	var c search.City
	snap.fillCity(&c, rec)
	return c, nil
}

// Nearby implements search.Store by scanning the cells of the snapshot's
// grid around the point, reading each record in place.
func (s *Store) Nearby(ctx context.Context, dst []search.City, q search.NearQuery) ([]search.City, error) {
	if err := q.Validate(); err != nil {
		return dst, err
	}
	snap, err := s.places(ctx, q.Dataset)
	if err != nil {
		return dst, err
	}
	best, _ := search.FindNear(q, func(n *search.Nearest, boxes []search.Box, wide bool) error {
		grid := snap.grids[0]
		if wide {
			grid = snap.grids[1]
		}
		for _, b := range boxes {
			grid.Visit(b, func(rec uint32) bool {
				if p, ok := snap.place(rec, &q); ok {
					n.Offer(p)
				}
				return true
			})
		}
		return nil
	})
	for _, p := range best {
		dst = append(dst, search.City{})
		snap.fillCity(&dst[len(dst)-1], p.Item)
	}
	return dst, nil
}

// place returns what the reverse rule looks at of city record rec, ok
// false when q does not accept it.
func (s *snapshot) place(rec uint32, q *search.NearQuery) (search.Place, bool) {
	r := s.rec(rec)
	lat, lon, ok := r.location()
	if !ok {
		return search.Place{}, false
	}
	if len(q.Countries) > 0 {
		code := s.areas[r.area()].code
		found := false
		for _, c := range q.Countries {
			found = found || c == code
		}
		if !found {
			return search.Place{}, false
		}
	}
	p := search.Place{Item: rec, ID: r.id(), Lat: lat, Lon: lon, Population: int64(r.pop())}
	if r.hasAltNames() {
		p.AltNames = int(s.altAt[rec] & math.MaxUint32)
	}
	return p, true
}
