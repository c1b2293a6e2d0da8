package storetest

import (
	"slices"
	"testing"

	"golang.org/x/text/language"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// localCities are places with names in other languages and former names,
// as an import with GeoNames' alternate names gives them.
func localCities() []search.City {
	munich := CountryCity("Munich", "Germany", "de", 1260391)
	munich.AltNames = []string{"München", "ミュンヘン"}
	munich.LocalNames = []search.LocalName{{Lang: "de", Name: "München"}, {Lang: "ja", Name: "ミュンヘン"}, {Lang: "zh-Hant", Name: "慕尼黑"}, {Lang: "en", Name: "Munich"}}
	mumbai := CountryCity("Mumbai", "India", "in", 12691836)
	mumbai.AltNames = []string{"Bombay"}
	mumbai.LocalNames = []search.LocalName{{Lang: "en", Name: "Bombay", Former: true}, {Name: "Bambai", Former: true}}
	return []search.City{munich, mumbai, CountryCity("Munster", "Germany", "de", 315293)}
}

func testLocalNames(t *testing.T, open Opener) {
	s := openStore(t, open)
	MustLoad(t, s, search.Large, localCities()...)
	for _, want := range localCities() {
		got := MustSearch(t, s, search.Large, want.Slug, 1)
		if len(got) != 1 || !slices.Equal(got[0].LocalNames, want.LocalNames) {
			t.Errorf("%s: got %+v, want local names %+v", want.Name, got, want.LocalNames)
		}
	}
	// The Service shows them.
	res, err := search.NewService(s).Find(t.Context(), search.Request{Dataset: search.Large, Text: "munc", Limit: 1,
		Languages: []language.Tag{language.German}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Name != "München" || res.Hits[0].Country != "Deutschland" {
		t.Errorf("munc in German: %+v, want München in Deutschland", res.Hits)
	}
	res, err = search.NewService(s).Find(t.Context(), search.Request{Dataset: search.Large, Text: "bomb", Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Matched == nil || !res.Hits[0].Matched.Former {
		t.Errorf("bomb: %+v, want Mumbai through its former name", res.Hits)
	}
}
