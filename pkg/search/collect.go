package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Collect reads every city from r, checks it, and returns the cities sorted
// by slug (ties in rank order) with duplicates removed, keeping the best
// ranked, that is the most populous, of each Key.
func Collect(ctx context.Context, r CityReader) ([]City, LoadStats, error) {
	var stats LoadStats
	var cities []City
	for {
		if stats.Read%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, stats, err
			}
		}
		c, err := r.Read()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, stats, err
		}
		stats.Read++
		if c.Name == "" || c.Slug == "" {
			return nil, stats, fmt.Errorf("%w: city %d (%q) has no name or slug", ErrInvalidCity, stats.Read, c.Name)
		}
		cities = append(cities, c)
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
// Key is the most populous.
func Dedupe(cities []City) []City {
	out := cities[:0]
	seen := make(map[Key]struct{})
	for i := 0; i < len(cities); {
		j := i + 1
		for j < len(cities) && cities[j].Slug == cities[i].Slug {
			j++
		}
		if j-i == 1 {
			out = append(out, cities[i])
			i = j
			continue
		}
		clear(seen)
		for _, c := range cities[i:j] {
			k := c.Key()
			if _, dup := seen[k]; dup {
				continue
			}
			seen[k] = struct{}{}
			out = append(out, c)
		}
		i = j
	}
	clear(cities[len(out):])
	return out[:len(out):len(out)]
}
