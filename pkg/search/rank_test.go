package search_test

import (
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

func TestCompare(t *testing.T) {
	city := func(name string, pop int64) *search.City {
		return &search.City{Name: name, Slug: search.Slug(name), Population: pop}
	}
	for _, tc := range []struct {
		name   string
		prefix string
		a, b   *search.City // a must rank first
	}{
		{"metropolis beats exact hamlet", "par", city("Paris", 2138551), city("Par", 1600)},
		{"exact boost beats larger city", "bath", city("Bath", 88859), city("Bathinda", 285813)},
		{"population decides", "bat", city("Batam", 1164352), city("Bathinda", 285813)},
		{"known population beats unknown", "bat", city("Bathurst", 1), city("Bat", 0)},
		{"exact first on equal weight", "par", city("Par", 0), city("Parma", 0)},
		{"shorter slug first", "ist", city("Istok", 0), city("Istanbul", 0)},
		{"alphabetical last", "ist", city("Istok", 0), city("Istra", 0)},
		{"folded ties broken by name", "sao", city("Sao", 0), city("São", 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c := search.Compare(tc.prefix, tc.a, tc.b); c >= 0 {
				t.Errorf("Compare(%q, %s, %s) = %d, want < 0", tc.prefix, tc.a.Name, tc.b.Name, c)
			}
			if c := search.Compare(tc.prefix, tc.b, tc.a); c <= 0 {
				t.Errorf("Compare(%q, %s, %s) = %d, want > 0", tc.prefix, tc.b.Name, tc.a.Name, c)
			}
		})
	}
}
