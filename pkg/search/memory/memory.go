// Package memory is a search.Store that keeps datasets in process memory and
// ranks by sorting every match. It is the simplest correct store: the
// reference the conformance suite compares other stores against, and a store
// for tests of code above the store.
package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Store is an in-memory search.Store.
type Store struct {
	mu       sync.RWMutex
	closed   bool
	datasets map[search.Dataset]*dataset
}

type dataset struct {
	cities []search.City // sorted by slug
	stats  search.DatasetStats
}

var _ search.Store = (*Store)(nil)

// New returns an empty Store.
func New() *Store {
	return &Store{datasets: make(map[search.Dataset]*dataset)}
}

// get returns dataset d, or the error that the contract asks for.
func (s *Store) get(ctx context.Context, d search.Dataset) (*dataset, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("memory store: %w: closed", search.ErrUnavailable)
	}
	ds, ok := s.datasets[d]
	if !ok {
		return nil, search.EmptyDatasetError(d)
	}
	return ds, nil
}

// Stats implements search.Store.
func (s *Store) Stats(ctx context.Context, d search.Dataset) (search.DatasetStats, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.DatasetStats{}, err
	}
	ds, err := s.get(ctx, d)
	if err != nil {
		return search.DatasetStats{}, err
	}
	return ds.stats, nil
}

// Search implements search.Searcher by scanning the slug range of the prefix.
func (s *Store) Search(ctx context.Context, q search.Query) ([]search.City, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	ds, err := s.get(ctx, q.Dataset)
	if err != nil {
		return nil, err
	}
	cities := ds.cities
	lo, _ := slices.BinarySearchFunc(cities, q.Prefix, func(c search.City, p string) int {
		return strings.Compare(c.Slug, p)
	})
	matches := []search.City{}
	for _, c := range cities[lo:] {
		if !strings.HasPrefix(c.Slug, q.Prefix) {
			break
		}
		if len(q.Countries) == 0 || slices.Contains(q.Countries, c.CountryCode) {
			matches = append(matches, c)
		}
	}
	slices.SortFunc(matches, func(a, b search.City) int { return search.Compare(q.Prefix, &a, &b) })
	if len(matches) > q.Limit {
		matches = matches[:q.Limit]
	}
	return slices.Clip(matches), nil
}

// Load implements search.Store: it builds the new dataset aside and swaps it
// in under the lock, so readers see the old or the new one.
func (s *Store) Load(ctx context.Context, d search.Dataset, r search.CityReader, opts search.LoadOptions) (search.LoadStats, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.LoadStats{}, err
	}
	cities, stats, err := search.Collect(ctx, r)
	if err != nil {
		return stats, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return stats, fmt.Errorf("memory store: %w: closed", search.ErrUnavailable)
	}
	if opts.Check != nil {
		var prev search.DatasetStats
		if old := s.datasets[d]; old != nil {
			prev = old.stats
		}
		if err := opts.Check(prev, stats); err != nil {
			return stats, fmt.Errorf("load %s: %w", d, err)
		}
	}
	s.datasets[d] = &dataset{cities: cities, stats: search.DatasetStats{
		Cities: len(cities), Imported: time.Now(), Source: opts.Source,
	}}
	return stats, nil
}

// Close implements search.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.datasets = nil
	return nil
}
