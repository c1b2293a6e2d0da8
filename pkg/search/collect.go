package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// LoadReader reads the cities of a Load from a CityReader: it checks ctx
// before each batch and each city as it comes, and counts them, so that
// every store fails alike on a bad reader.
type LoadReader struct {
	r     CityReader
	count int
	ids   idDeriver
}

// NewLoadReader returns a LoadReader of r.
func NewLoadReader(r CityReader) *LoadReader { return &LoadReader{r: r} }

// ReadBatch appends the next batch of cities to dst, as r.ReadBatch does
// (see CityReader), once ctx is checked. It returns io.EOF after the last
// city, or ErrNoCities when r yielded none at all, so that an
// empty file never replaces a dataset. A city with an empty Name or Slug
// fails it with ErrInvalidCity (wrapped). On error it returns dst as it
// was. A city without an id gets its derived id (see DerivedIDBase).
func (l *LoadReader) ReadBatch(ctx context.Context, dst []City) ([]City, error) {
	if err := ctx.Err(); err != nil {
		return dst, err
	}
	n := len(dst)
	dst, err := l.r.ReadBatch(dst)
	if err != nil {
		if errors.Is(err, io.EOF) && l.count == 0 {
			err = ErrNoCities
		}
		return dst[:n], err
	}
	for i := n; i < len(dst); i++ {
		l.count++
		if c := &dst[i]; c.Name == "" || c.Slug == "" {
			return dst[:n], fmt.Errorf("%w: city %d (%q) has no name or slug", ErrInvalidCity, l.count, c.Name)
		}
	}
	l.ids.deriveAll(dst[n:])
	return dst, nil
}

// Count is how many cities r has yielded so far.
func (l *LoadReader) Count() int { return l.count }

// Collect reads every city from r (see LoadReader) and returns them sorted
// by SortBySlug with duplicates removed by Dedupe.
func Collect(ctx context.Context, r CityReader) ([]City, LoadStats, error) {
	lr := NewLoadReader(r)
	var cities []City
	for {
		var err error
		if cities, err = lr.ReadBatch(ctx, cities); err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, LoadStats{Read: lr.Count()}, err
			}
			break
		}
	}
	SortBySlug(cities)
	cities = Dedupe(cities)
	return cities, LoadStats{Read: lr.Count(), Stored: len(cities)}, nil
}

// SortBySlug sorts cities by BySlug, and cities that BySlug finds equal
// in the order read, so that of two duplicates that differ only in what
// BySlug does not look at (their location, say), every store keeps the
// first read, as the embedded store does, whatever the other rows of the
// file.
func SortBySlug(cities []City) {
	slices.SortStableFunc(cities, func(a, b City) int { return BySlug(&a, &b) })
}

// BySlug orders cities by slug, and cities with the same slug by rank
// (Compare: population first). Of two cities with the same Key, every
// store keeps a rather than b exactly when BySlug(a, b) < 0: KeepFirst
// keeps the first of each Key in this order, and a store that meets
// duplicates one pair at a time (the mongo store) asks BySlug itself.
func BySlug(a, b *City) int {
	if c := strings.Compare(a.Slug, b.Slug); c != 0 {
		return c
	}
	return Compare(a.Slug, a, b)
}

// Dedupe drops every city whose Key equals that of an earlier city in the
// same slug run; cities must be sorted by SortBySlug, so the first of each
// Key is the most populous (see KeepFirst).
func Dedupe(cities []City) []City {
	out := KeepFirst(cities, func(a, b *City) bool { return a.Slug == b.Slug }, (*City).Key)
	clear(cities[len(out):])
	return out[:len(out):len(out)]
}

// KeepFirst is the rule by which every store keeps one of the cities with
// the same Key, the most populous: of items sorted by slug, and within a
// slug in rank order (BySlug's order: population first, see Compare),
// it keeps the first of each key in each run of one slug, in place, and
// returns them. sameSlug reports whether two items have the same slug;
// key is an item's Key, or any value that is equal for two items of one
// slug exactly when their Keys are. Stores that sort their own
// representation of cities (the embedded store sorts record numbers) call
// it with theirs.
func KeepFirst[T any, K comparable](sorted []T, sameSlug func(a, b *T) bool, key func(*T) K) []T {
	out := sorted[:0]
	var seen map[K]struct{}
	for i := 0; i < len(sorted); {
		j := i + 1
		for j < len(sorted) && sameSlug(&sorted[j], &sorted[i]) {
			j++
		}
		if j-i == 1 {
			out = append(out, sorted[i])
			i = j
			continue
		}
		if seen == nil {
			seen = make(map[K]struct{})
		}
		clear(seen)
		for k := i; k < j; k++ {
			id := key(&sorted[k])
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
			out = append(out, sorted[k])
		}
		i = j
	}
	return out
}
