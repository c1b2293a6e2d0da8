package search_test

import (
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Areas are numbered in the order first met, by their strings' contents:
// a copy of an area's strings (other addresses) is the same area, and the
// area of empty strings is one like any other.
func TestAreaNumbers(t *testing.T) {
	t.Parallel()
	clone := func(c search.City) search.City {
		return search.City{CountryCode: strings.Clone(c.CountryCode), Country: strings.Clone(c.Country),
			Subcountry: strings.Clone(c.Subcountry), Region: strings.Clone(c.Region)}
	}
	paris := search.City{CountryCode: "fr", Country: "France", Region: "Île-de-France"}
	lyon := search.City{CountryCode: "fr", Country: "France", Region: "Auvergne-Rhône-Alpes"}
	london := search.City{CountryCode: "gb", Country: "United Kingdom", Subcountry: "England", Region: "London"}
	steps := []struct {
		name  string
		city  search.City
		n     uint32
		first bool
	}{
		{"a first area", paris, 0, true},
		{"another", lyon, 1, true},
		{"the first again", paris, 0, false},
		{"a copy of the first", clone(paris), 0, false},
		{"the empty area", search.City{}, 2, true},
		{"the empty area again", search.City{}, 2, false},
		{"a third", london, 3, true},
		{"a copy of the second", clone(lyon), 1, false},
	}
	var areas search.AreaNumbers
	for _, s := range steps {
		if n, first := areas.Number(&s.city); n != s.n || first != s.first {
			t.Errorf("%s: number %d, first %v; want %d, %v", s.name, n, first, s.n, s.first)
		}
	}
}
