package search_test

import (
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

func TestLabels(t *testing.T) {
	city := func(name, subcountry, country string) search.Hit {
		return search.Hit{City: search.City{Name: name, Slug: search.Slug(name), Subcountry: subcountry, Country: country}}
	}
	for _, tc := range []struct {
		name string
		hits []search.Hit
		want []string
	}{
		{"no hits", nil, []string{}},
		{"a name that is unique stands alone",
			[]search.Hit{city("Istanbul", "Istanbul", "Türkiye"), city("Isparta", "Isparta", "Türkiye")},
			[]string{"Istanbul", "Isparta"}},
		{"Springfields are told apart by their regions",
			[]search.Hit{city("Springfield", "Illinois", "United States"), city("Springfield", "Missouri", "United States"),
				city("Springfield", "Massachusetts", "United States"), city("Springville", "Utah", "United States")},
			[]string{"Springfield, Illinois", "Springfield, Missouri", "Springfield, Massachusetts", "Springville"}},
		{"Londons get their regions, London-derry none",
			[]search.Hit{city("London", "England", "United Kingdom"), city("London", "Ontario", "Canada"),
				city("London", "Kentucky", "United States"), city("Londonderry", "Northern Ireland", "United Kingdom")},
			[]string{"London, England", "London, Ontario", "London, Kentucky", "Londonderry"}},
		{"Paris in France and Paris in Texas",
			[]search.Hit{city("Paris", "Île-de-France", "France"), city("Paris", "Texas", "United States")},
			[]string{"Paris, Île-de-France", "Paris, Texas"}},
		{"the country is added only to the hits whose region is shared",
			[]search.Hit{city("Springfield", "Oregon", "United States"), city("Springfield", "Oregon", "Atlantis"),
				city("Springfield", "Illinois", "United States")},
			[]string{"Springfield, Oregon, United States", "Springfield, Oregon, Atlantis", "Springfield, Illinois"}},
		{"no region known: the country tells them apart",
			[]search.Hit{city("Victoria", "", "Malta"), city("Victoria", "", "Seychelles")},
			[]string{"Victoria, Malta", "Victoria, Seychelles"}},
		{"a region that repeats the country is not said twice",
			[]search.Hit{city("Singapore", "Singapore", "Singapore"), city("Singapore", "", "South Africa")},
			[]string{"Singapore", "Singapore, South Africa"}},
		{"two hits that read the same get their region codes",
			[]search.Hit{{City: search.City{Name: "Tokyo", Country: "Japan", Region: "40"}}, {City: search.City{Name: "Tokyo", Country: "Japan", Region: "41"}}},
			[]string{"Tokyo, Japan (40)", "Tokyo, Japan (41)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := search.Labels(tc.hits)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Labels = %q, want %q", got, tc.want)
			}
			search.Label(tc.hits)
			for i := range tc.hits {
				if tc.hits[i].Label != tc.want[i] {
					t.Errorf("Label set hit %d to %q, want %q", i, tc.hits[i].Label, tc.want[i])
				}
			}
		})
	}
}
