package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Each reads every city from r, checks it and hands it to fn, checking ctx
// every few thousand cities. It returns how many cities r yielded. A city
// with an empty Name or Slug stops it with ErrInvalidCity; a reader that
// yields nothing, with ErrNoCities.
func Each(ctx context.Context, r CityReader, fn func(*City) error) (int, error) {
	n := 0
	for {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
		c, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return n, err
		}
		n++
		if c.Name == "" || c.Slug == "" {
			return n, fmt.Errorf("%w: city %d (%q) has no name or slug", ErrInvalidCity, n, c.Name)
		}
		if err := fn(&c); err != nil {
			return n, err
		}
	}
	if n == 0 {
		return 0, ErrNoCities
	}
	return n, nil
}

// Collect reads every city from r (see Each) and returns them sorted by
// SortBySlug with duplicates removed by Dedupe.
func Collect(ctx context.Context, r CityReader) ([]City, LoadStats, error) {
	var cities []City
	n, err := Each(ctx, r, func(c *City) error {
		cities = append(cities, *c)
		return nil
	})
	stats := LoadStats{Read: n}
	if err != nil {
		return nil, stats, err
	}
	SortBySlug(cities)
	cities = Dedupe(cities)
	stats.Stored = len(cities)
	return cities, stats, nil
}

// SortBySlug sorts cities by slug, and cities with the same slug by rank.
func SortBySlug(cities []City) {
	slices.SortFunc(cities, func(a, b City) int {
		if c := strings.Compare(a.Slug, b.Slug); c != 0 {
			return c
		}
		return Compare(a.Slug, &a, &b)
	})
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
// slug in rank order (SortBySlug's order: population first, see Compare),
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
