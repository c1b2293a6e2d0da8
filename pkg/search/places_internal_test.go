package search

import (
	"slices"
	"strings"
	"testing"
)

func TestPlaceIndexLookup(t *testing.T) {
	for _, tc := range []struct {
		name, part string
		want       []string // country, or country/division code
		exact      bool
	}{
		{"a division's code", "tx", []string{"us/tx"}, true},
		{"the start of a division's name", "tex", []string{"us/tx"}, false},
		{"a code of two letters names no name it starts", "ma", []string{"ma", "us/ma"}, true},
		{"two letters that are no code start names", "te", []string{"us/tn", "us/tx"}, false},
		{"a code and the starts of names", "ala", []string{"ax", "us/ak", "us/al"}, true},
		{"a country's alpha-3 code", "fra", []string{"fr"}, true},
		{"an alias", "usa", []string{"us"}, true},
		{"an alias of several letters", "holland", []string{"nl"}, true},
		{"names of several words begun", "united-k", []string{"gb"}, false},
		{"names of several countries and a division begun", "austr", []string{"at", "au", "au/act"}, false},
		{"a nation of the United Kingdom", "england", []string{"gb/eng"}, true},
		{"an abbreviation that is no prefix", "fla", []string{"us/fla"}, true},
		{"an alias is whole or nothing", "uae", []string{"ae"}, true},
		{"the start of an alias that is a code is nothing", "ua", []string{"ua"}, true},
		{"one letter is a word being typed", "t", nil, false},
		{"nothing", "atlantis", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, exact := places().lookup(nil, tc.part)
			var got []string
			for _, p := range found {
				s := p.country
				if len(p.regions) > 0 {
					s += "/" + p.regions[0]
				}
				if !slices.Contains(got, s) {
					got = append(got, s)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) || exact != tc.exact {
				t.Errorf("lookup(%q) = %q, exact %v; want %q, exact %v", tc.part, got, exact, tc.want, tc.exact)
			}
		})
	}
}

func TestPlaceIndexIsSorted(t *testing.T) {
	names := places().names
	if !slices.IsSortedFunc(names, func(a, b placeName) int { return strings.Compare(a.slug, b.slug) }) {
		t.Fatal("the place index is not sorted by slug: lookups miss names")
	}
	if len(names) < 3*250 {
		t.Errorf("%d names, want codes and names of about 250 countries and the divisions", len(names))
	}
}
