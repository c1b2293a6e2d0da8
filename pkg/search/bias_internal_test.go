package search

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomCandidates returns n matches of "san" with few distinct
// populations and places, so that many tie, some at a later word, some
// with typos, some without a location.
func randomCandidates(rng *rand.Rand, n int) []variantFound {
	out := make([]variantFound, n)
	for i := range out {
		f := &Found{City: City{
			ID: uint32(i), Name: fmt.Sprintf("San %c", 'a'+rng.IntN(5)), Country: "Chile", CountryCode: "cl",
			Population: int64(rng.IntN(3)) * 10_000, Lat: -33 - float64(rng.IntN(3)), Lon: -70, HasLocation: rng.IntN(8) > 0,
		}}
		f.Slug = Slug(f.Name)
		f.Key = NameKey{Slug: f.Slug}
		if rng.IntN(4) == 0 {
			f.Key = NameKey{Slug: "san-" + f.Slug, Offset: 1} // a later word
		}
		out[i] = variantFound{Found: f, prefix: "san", edits: rng.IntN(2)}
	}
	return out
}

// best keeps exactly the first limit candidates that the stable sort
// orders first, ties and all, with and without a point and a finished
// word.
func TestBestIsTheStableSortsFirst(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 6))
	near := Point{Lat: -33.45, Lon: -70.66}
	for round := range 200 {
		n, limit := rng.IntN(220), 1+rng.IntN(MaxLimit)
		b := bias{}
		if round%2 == 0 {
			b = bias{near: &near, scale: DefaultBiasScale}
		}
		f := &finder{ended: round%3 == 0}
		found := randomCandidates(rng, n)
		sorted := slices.Clone(found)
		f.sort(sorted, b)
		want := sorted[:min(n, limit)]
		if got := f.best(found, b, limit); !slices.EqualFunc(got, want, func(x, y variantFound) bool { return x == y }) {
			t.Fatalf("round %d (%d candidates, limit %d): best differs from the stable sort's first", round, n, limit)
		}
	}
}

func TestStartsFill(t *testing.T) {
	start := variantFound{Found: &Found{Key: NameKey{Slug: "santiago"}}, prefix: "san"}
	whole := variantFound{Found: &Found{Key: NameKey{Slug: "san-jose"}}, prefix: "san"}
	word := variantFound{Found: &Found{Key: NameKey{Slug: "san-juan", Offset: 1}}, prefix: "san"}
	for _, tt := range []struct {
		name  string
		found []variantFound
		ended bool
		want  bool
	}{
		{"as many name starts as the limit", []variantFound{start, whole}, false, true},
		{"fewer name starts than the limit", []variantFound{start}, false, false},
		{"later words do not count", []variantFound{start, word, word}, false, false},
		{"after a space, only names in which the word ends count", []variantFound{start, whole}, true, false},
		{"after a space, names in which the word ends", []variantFound{whole, whole}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := startsFill(tt.found, 2, tt.ended); got != tt.want {
				t.Errorf("startsFill = %v, want %v", got, tt.want)
			}
		})
	}
}

// withLocal adds each local match that the world's best do not hold,
// and no city twice.
func TestWithLocal(t *testing.T) {
	box := nearBox(Point{Lat: -33.45, Lon: -70.66}, nearbyKm)
	match := func(name string, lat, lon float64) variantFound {
		return variantFound{Found: &Found{City: City{Name: name, Slug: Slug(name), CountryCode: "cl", Lat: lat, Lon: lon, HasLocation: true}}}
	}
	santiago, madrid := match("Santiago", -33.45, -70.66), match("Madrid", 40.4, -3.7)
	sanBernardo := match("San Bernardo", -33.59, -70.7)
	santiagoAgain := match("Santiago", -33.45, -70.66) // the same city, as the box's search returns it
	got := withLocal([]variantFound{madrid, santiago}, []variantFound{santiagoAgain, sanBernardo}, box)
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if want := []string{"Madrid", "Santiago", "San Bernardo"}; !slices.Equal(names, want) || got[1] != santiago {
		t.Errorf("withLocal = %v, want %v with the world's Santiago", names, want)
	}
}
