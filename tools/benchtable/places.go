package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// placesResult times issue 21's lookups in process: a city by its id
// (Service.Lookup, as GET /cities/{id} asks) and the cities around a point
// (Service.Reverse, as GET /reverse asks, limit 10, default radius).
type placesResult struct {
	lookupMedian, lookupP99   time.Duration
	reverseMedian, reverseP99 time.Duration
	reverseMax                time.Duration
	ids                       []string       // looked up, as written in a URL
	points                    []search.Point // looked around
}

// measurePlaces times Service.Lookup on the ids, and Service.Reverse on
// the points where those cities are (moved by up to 5 km, as a person in
// the city is) and on as many random points of the globe (most at sea,
// where the search widens to its radius): each query once per round over
// three rounds (see timeRounds).
func measurePlaces(ctx context.Context, svc *search.Service, prefixes []string) (placesResult, error) {
	var ids []string
	var points []search.Point
	rng := rand.New(rand.NewPCG(2026, 21))
	for _, p := range prefixes {
		res, err := svc.Find(ctx, search.Request{Dataset: search.Large, Text: p, Limit: 1})
		if err != nil {
			return placesResult{}, err
		}
		for _, h := range res.Hits {
			ids = append(ids, strconv.FormatUint(uint64(h.ID), 10))
			if h.HasLocation {
				points = append(points, search.Point{
					Lat: max(-90, min(90, h.Lat+(rng.Float64()-0.5)*0.09)),
					Lon: max(-180, min(180, h.Lon+(rng.Float64()-0.5)*0.09)),
				})
			}
		}
	}
	for range len(points) {
		points = append(points, search.Point{Lat: rng.Float64()*180 - 90, Lon: rng.Float64()*360 - 180})
	}
	r := placesResult{ids: ids, points: points}
	times, err := timeRounds(len(ids), 3, func(i int) error {
		hit, err := svc.Lookup(ctx, search.LookupRequest{Dataset: search.Large, ID: ids[i]})
		sink += int(hit.Population)
		return err
	})
	if err != nil {
		return r, err
	}
	r.lookupMedian, r.lookupP99 = percentile(times, 50), percentile(times, 99)
	if times, err = timeRounds(len(points), 3, func(i int) error {
		res, err := svc.Reverse(ctx, search.ReverseRequest{Dataset: search.Large, Point: &points[i], Limit: search.DefaultLimit})
		sink += len(res.Hits)
		return err
	}); err != nil {
		return r, err
	}
	r.reverseMedian, r.reverseP99, r.reverseMax = percentile(times, 50), percentile(times, 99), percentile(times, 100)
	return r, nil
}
