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
	// lastVersion is the version of the last Load, or of Close (see
	// Version).
	lastVersion uint64
}

type dataset struct {
	cities []search.City
	keys   []key // every key of every city, sorted by slug
	whole  []key // the keys of whole names, for the trie walk
	ids    *search.IDIndex
	grids  [2]*search.Grid // the located cities that are not search.Wide, and those that are
	stats  search.DatasetStats
	// version numbers this content among the dataset's (see Version).
	version uint64
}

// key is one key of cities[city].
type key struct {
	search.NameKey
	city int
}

var (
	_ search.Store      = (*Store)(nil)
	_ search.TypoFinder = (*Store)(nil)
	_ search.Versioned  = (*Store)(nil)
)

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

// Search implements search.Store by looking at every key in the range of
// the prefix.
func (s *Store) Search(ctx context.Context, dst []search.Found, q search.Query) ([]search.Found, error) {
	if err := q.Validate(); err != nil {
		return dst, err
	}
	ds, err := s.get(ctx, q.Dataset)
	if err != nil {
		return dst, err
	}
	lo, _ := slices.BinarySearchFunc(ds.keys, q.Prefix, func(k key, p string) int {
		return strings.Compare(k.Slug, p)
	})
	best := make(map[int]int) // city → index into found
	var found []search.Found  // every match: dst gets the best q.Limit
	for _, k := range ds.keys[lo:] {
		if !strings.HasPrefix(k.Slug, q.Prefix) {
			break
		}
		c := &ds.cities[k.city]
		if (k.Word() && !q.Words) || !q.Accepts(c) {
			continue
		}
		f := search.Found{City: *c, Key: k.NameKey}
		if i, ok := best[k.city]; ok {
			if search.CompareFound(q.Prefix, &f, &found[i]) < 0 {
				found[i] = f
			}
			continue
		}
		best[k.city] = len(found)
		found = append(found, f)
	}
	slices.SortFunc(found, func(a, b search.Found) int { return search.CompareFound(q.Prefix, &a, &b) })
	return append(dst, found[:min(len(found), q.Limit)]...), nil
}

// Lookup implements search.Store.
func (s *Store) Lookup(ctx context.Context, d search.Dataset, id uint32) (search.City, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.City{}, err
	}
	ds, err := s.get(ctx, d)
	if err != nil {
		return search.City{}, err
	}
	i, ok := ds.ids.Find(id)
	if !ok {
		return search.City{}, fmt.Errorf("city %d of %s: %w", id, d, search.ErrNotFound)
	}
	return ds.cities[i], nil
}

// Nearby implements search.Store by scanning the cells of its grid
// around the point.
func (s *Store) Nearby(ctx context.Context, dst []search.City, q search.NearQuery) ([]search.City, error) {
	if err := q.Validate(); err != nil {
		return dst, err
	}
	ds, err := s.get(ctx, q.Dataset)
	if err != nil {
		return dst, err
	}
	best, _ := search.FindNear(q, func(n *search.Nearest, boxes []search.Box, wide bool) error {
		grid := ds.grids[0]
		if wide {
			grid = ds.grids[1]
		}
		for _, b := range boxes {
			grid.Visit(b, func(i uint32) bool {
				if c := &ds.cities[i]; q.Accepts(c) {
					n.Offer(search.PlaceOf(i, c))
				}
				return true
			})
		}
		return nil
	})
	for _, p := range best {
		dst = append(dst, ds.cities[p.Item])
	}
	return dst, nil
}

// FindTypos implements search.TypoFinder by walking the trie of the keys
// of whole names (see search.WalkTypos).
func (s *Store) FindTypos(ctx context.Context, q search.Query, maxEdits int) ([]search.Typo, error) {
	return search.WalkTypos(ctx, s, s.walkTrie, q, maxEdits)
}

// walkTrie is the search.TrieWalk of the keys of whole names: they are
// sorted, so the keys below a node of the trie are a range, split by their
// next byte.
func (s *Store) walkTrie(ctx context.Context, d search.Dataset, visit func(path []byte) bool) error {
	ds, err := s.get(ctx, d)
	if err != nil {
		return err
	}
	keys := ds.whole
	var walk func(lo, hi int, path []byte)
	walk = func(lo, hi int, path []byte) {
		depth := len(path)
		i := lo
		for i < hi && len(keys[i].Slug) == depth {
			i++ // the node's own key: no child
		}
		for i < hi {
			b := keys[i].Slug[depth]
			j := i + 1
			for j < hi && keys[j].Slug[depth] == b {
				j++
			}
			if child := append(path, b); visit(child) {
				walk(i, j, child)
			}
			i = j
		}
	}
	walk(0, len(keys), make([]byte, 0, 64))
	return nil
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
	opts.Enter(search.PhaseIndexing)
	var keys []key
	for i := range cities {
		for _, k := range search.Keys(&cities[i]) {
			keys = append(keys, key{NameKey: k, city: i})
		}
	}
	slices.SortFunc(keys, func(a, b key) int { return strings.Compare(a.Slug, b.Slug) })
	var whole []key
	for _, k := range keys {
		if !k.Word() {
			whole = append(whole, k)
		}
	}
	ids := search.NewIDIndex(len(cities), func(i uint32) uint32 { return cities[i].ID })
	grids := [2]*search.Grid{}
	for k, wide := range []bool{false, true} {
		grids[k] = search.NewGrid(len(cities), func(i uint32) (float64, float64, bool) {
			c := &cities[i]
			return c.Lat, c.Lon, c.HasLocation && search.Wide(c.Population) == wide
		})
	}
	opts.Enter(search.PhaseSwapping)
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
	s.lastVersion++
	s.datasets[d] = &dataset{cities: cities, keys: keys, whole: whole, ids: ids, grids: grids, stats: search.DatasetStats{
		Cities: len(cities), Imported: time.Now(), Source: opts.Source,
	}, version: s.lastVersion}
	return stats, nil
}

// Version implements search.Versioned: each Load numbers the content it
// puts in place under the lock that searches read it with, and Close
// takes a number of its own.
func (s *Store) Version(d search.Dataset) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return s.lastVersion
	}
	if ds := s.datasets[d]; ds != nil {
		return ds.version
	}
	return 0
}

// Close implements search.Store.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.datasets = nil
	s.lastVersion++
	return nil
}
