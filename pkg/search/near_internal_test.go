package search

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// FindNear over a Grid gives what sorting every city by the rule gives:
// the bounded search leaves out no city that ranks among the best.
func TestFindNearIsTheWholeSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var cities []City
	for range 20000 {
		c := City{ID: uint32(len(cities) + 1), HasLocation: true}
		switch rng.IntN(4) {
		case 0: // anywhere
			c.Lat, c.Lon = rng.Float64()*180-90, rng.Float64()*360-180
		case 1: // by the antimeridian and the poles
			c.Lat, c.Lon = rng.Float64()*20+70, 179.5+rng.Float64()*0.5
			if rng.IntN(2) == 0 {
				c.Lon -= 360 - 0.5
			}
		default: // dense, around Paris
			c.Lat, c.Lon = 48.5+rng.Float64(), 1.8+rng.Float64()
		}
		if rng.IntN(3) == 0 {
			c.Population = int64(rng.ExpFloat64() * 50000)
		}
		if rng.IntN(50) == 0 {
			c.Population = int64(rng.IntN(10_000_000))
		}
		cities = append(cities, c)
	}
	var grid [2]*Grid
	for k, wide := range []bool{false, true} {
		grid[k] = NewGrid(len(cities), func(i uint32) (float64, float64, bool) {
			return cities[i].Lat, cities[i].Lon, Wide(cities[i].Population) == wide
		})
	}
	scan := func(n *Nearest, boxes []Box, wide bool) error {
		k := 0
		if wide {
			k = 1
		}
		for _, b := range boxes {
			grid[k].Visit(b, func(i uint32) bool {
				n.Offer(PlaceOf(i, &cities[i]))
				return true
			})
		}
		return nil
	}
	for i := range 300 {
		q := NearQuery{Dataset: Large, RadiusKm: []float64{1, 10, DefaultRadiusKm, MaxRadiusKm}[i%4], Limit: []int{1, 10, MaxLimit}[i%3]}
		switch i % 3 {
		case 0:
			q.Point = Point{Lat: 48.4 + 1.2*rng.Float64(), Lon: 1.7 + 1.2*rng.Float64()}
		case 1:
			q.Point = Point{Lat: 69 + 21*rng.Float64(), Lon: 179 + rng.Float64()*2}
			if q.Point.Lon > 180 {
				q.Point.Lon -= 360
			}
		default:
			q.Point = Point{Lat: rng.Float64()*180 - 90, Lon: rng.Float64()*360 - 180}
		}
		got, err := FindNear(q, scan)
		if err != nil {
			t.Fatal(err)
		}
		all, n := []Place{}, &Nearest{q: q}
		for j := range cities {
			if p := PlaceOf(uint32(j), &cities[j]); n.measure(&p) {
				all = append(all, p)
			}
		}
		slices.SortFunc(all, func(a, b Place) int { return comparePlaces(&a, &b) })
		want := all[:min(len(all), q.Limit)]
		if !slices.EqualFunc(got, want, func(a, b Place) bool { return a.Item == b.Item }) {
			t.Fatalf("FindNear(%+v): %d places, the whole sort %d; first difference at %d",
				q, len(got), len(want), firstDifference(got, want))
		}
	}
}

func firstDifference(a, b []Place) int {
	for i := range min(len(a), len(b)) {
		if a[i].Item != b[i].Item {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestNearBoxesHoldTheDisc(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		p := Point{Lat: rng.Float64()*180 - 90, Lon: rng.Float64()*360 - 180}
		km := rng.Float64() * MaxRadiusKm
		// a point at distance ≤ km in a random direction
		q := Point{Lat: p.Lat + (rng.Float64()*2-1)*km/111.2, Lon: p.Lon + (rng.Float64()*2-1)*180}
		q.Lat = max(-90, min(90, q.Lat))
		for q.Lon > 180 {
			q.Lon -= 360
		}
		for q.Lon < -180 {
			q.Lon += 360
		}
		if DistanceKm(p, q) > km {
			continue
		}
		boxes := NearBoxes(p, km)
		if !slices.ContainsFunc(boxes, func(b Box) bool { return b.Contains(q.Lat, q.Lon) }) {
			t.Fatalf("NearBoxes(%v, %.1f) = %v leave out %v, %.1f km away", p, km, boxes, q, DistanceKm(p, q))
		}
	}
}

func TestIDIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	ids := make([]uint32, 50000)
	for i := range ids {
		switch rng.IntN(4) {
		case 0: // a dense run, as GeoNames ids come
			ids[i] = 2_000_000 + uint32(i)
		case 1:
			ids[i] = 0 // none
		default:
			ids[i] = rng.Uint32()
		}
	}
	ids[100], ids[200] = 77, 77 // a repeated id: the first
	x := NewIDIndex(len(ids), func(i uint32) uint32 { return ids[i] })
	first := map[uint32]uint32{}
	for i, id := range ids {
		if _, seen := first[id]; !seen && id != 0 {
			first[id] = uint32(i)
		}
	}
	for id, want := range first {
		if got, ok := x.Find(id); !ok || got != want {
			t.Fatalf("Find(%d) = %d, %v; want %d", id, got, ok, want)
		}
	}
	for _, id := range []uint32{0, 1, 1_999_999, MaxID} {
		if _, listed := first[id]; listed {
			continue
		}
		if got, ok := x.Find(id); ok {
			t.Errorf("Find(%d) = %d, want none", id, got)
		}
	}
	if empty := NewIDIndex(0, nil); func() bool { _, ok := empty.Find(5); return ok }() {
		t.Error("an empty index finds an id")
	}
}
