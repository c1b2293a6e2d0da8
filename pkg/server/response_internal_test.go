package server

import (
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Every shape of answer that holds hits gets its labels where it is
// encoded: a list, GeoJSON and one city alone.
func TestEncodeLabelsHits(t *testing.T) {
	springfields := func() []search.Hit {
		return []search.Hit{
			{City: search.City{Name: "Springfield", Slug: "springfield", Country: "United States", Subcountry: "Illinois"}},
			{City: search.City{Name: "Springfield", Slug: "springfield", Country: "United States", Subcountry: "Missouri"}},
		}
	}
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"a list", springfields(),
			`[{"name":"Springfield","label":"Springfield, Illinois","slug":"springfield","country":"United States","subcountry":"Illinois"},` +
				`{"name":"Springfield","label":"Springfield, Missouri","slug":"springfield","country":"United States","subcountry":"Missouri"}]`},
		{"GeoJSON", geoJSON(springfields()[:1]),
			`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":` +
				`{"name":"Springfield","label":"Springfield","slug":"springfield","country":"United States","subcountry":"Illinois"}}]}`},
		{"one city", oneHit(springfields()[1:]),
			`{"name":"Springfield","label":"Springfield","slug":"springfield","country":"United States","subcountry":"Missouri"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := jsonBuffers.Get().(*jsonBuffer)
			defer b.release()
			got, err := b.encode(tc.v)
			if err != nil || string(got) != tc.want {
				t.Errorf("encode = %s, %v\nwant %s", got, err, tc.want)
			}
		})
	}
}
