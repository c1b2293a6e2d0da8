package main

import (
	"context"
	"slices"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// What issue 14's queries add to the prefix: each query of the sample takes
// the next point, box or qualifier in turn.
var (
	nearPoints = benchenv.NearPoints
	boxes      = []search.Box{ // Europe, Illinois
		{MinLon: -25, MinLat: 34, MaxLon: 45, MaxLat: 72}, {MinLon: -91.51, MinLat: 36.97, MaxLon: -87.49, MaxLat: 42.51},
	}
	qualifiers = []string{" fr", " us", " chile"}
)

// findResult times Service.Find on every prefix of the sample, each with
// one of the variants in turn, and on the heavy prefixes with every variant.
type findResult struct {
	median, p99, heavyMax time.Duration
	qualified             int // answers of the sample that read the query's last words as a place
}

type findResults struct {
	plain, biased, boxed, qualified findResult
}

// measureFinds times Service.Find with its defaults (typos on, limit 10) on
// the prefixes: as they are, then biased towards a point, within a box, and
// followed by a place. Each query runs once per round over three rounds
// (see timeRounds).
func measureFinds(ctx context.Context, svc *search.Service, prefixes []string) (findResults, error) {
	plain := func(p string, _ int) search.Request {
		return search.Request{Dataset: search.Large, Text: p, Limit: 10, Fuzzy: true}
	}
	// measure times req(p, j) for the j-th of n variants: prefix i of the
	// sample with variant i%n, each heavy prefix with every variant.
	measure := func(n int, req func(p string, j int) search.Request) (findResult, error) {
		var sample, heavy []search.Request
		for i, p := range prefixes {
			sample = append(sample, req(p, i%n))
		}
		for _, p := range heavyPrefixes {
			for j := range n {
				heavy = append(heavy, req(p, j))
			}
		}
		qualified := 0 // over the three rounds
		find := func(reqs []search.Request) ([]time.Duration, error) {
			return timeRounds(len(reqs), 3, func(i int) error {
				res, err := svc.Find(ctx, reqs[i])
				sink += len(res.Hits)
				if res.Qualifier != "" {
					qualified++
				}
				return err
			})
		}
		var r findResult
		times, err := find(sample)
		if err != nil {
			return r, err
		}
		r.median, r.p99, r.qualified = percentile(times, 50), percentile(times, 99), qualified/3
		if times, err = find(heavy); err != nil {
			return r, err
		}
		r.heavyMax = slices.Max(times)
		return r, nil
	}
	var res findResults
	var err error
	if res.plain, err = measure(1, plain); err != nil {
		return res, err
	}
	if res.biased, err = measure(len(nearPoints), func(p string, j int) search.Request {
		req := plain(p, j)
		req.Near, req.BiasScale = &nearPoints[j], search.DefaultBiasScale
		return req
	}); err != nil {
		return res, err
	}
	if res.boxed, err = measure(len(boxes), func(p string, j int) search.Request {
		req := plain(p, j)
		req.Box = &boxes[j]
		return req
	}); err != nil {
		return res, err
	}
	res.qualified, err = measure(len(qualifiers), func(p string, j int) search.Request {
		req := plain(p, j)
		req.Text += qualifiers[j]
		return req
	})
	return res, err
}
