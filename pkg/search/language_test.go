package search_test

import (
	"errors"
	"fmt"
	"testing"

	"golang.org/x/text/language"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// localCities are cities with names in other languages, as an import with
// GeoNames' alternate names gives them.
func localCities() []search.City {
	munich := search.City{ID: 2867714, Name: "Munich", Slug: "munich", Country: "Germany", CountryCode: "de", Subcountry: "Bavaria",
		Population: 1260391, AltNames: []string{"München", "Monaco di Baviera", "ミュンヘン"},
		LocalNames: []search.LocalName{{Lang: "de", Name: "München"}, {Lang: "it", Name: "Monaco di Baviera"}, {Lang: "ja", Name: "ミュンヘン"}}}
	florence := search.City{ID: 3176959, Name: "Firenze", Slug: "firenze", Country: "Italy", CountryCode: "it", Subcountry: "Tuscany",
		Population: 349296, AltNames: []string{"Florence", "Florenz"},
		LocalNames: []search.LocalName{{Lang: "en", Name: "Florence"}, {Lang: "de", Name: "Florenz"}}}
	mumbai := search.City{ID: 1275339, Name: "Mumbai", Slug: "mumbai", Country: "India", CountryCode: "in", Subcountry: "Maharashtra",
		Population: 12691836, AltNames: []string{"Bombay"},
		LocalNames: []search.LocalName{{Lang: "en", Name: "Bombay", Former: true}}}
	zurich := search.City{ID: 2657896, Name: "Zurich", Slug: "zurich", Country: "Switzerland", CountryCode: "ch", Population: 341730,
		LocalNames: []search.LocalName{{Lang: "de", Name: "Zürich"}}}
	return []search.City{munich, florence, mumbai, zurich}
}

func TestFindInLanguages(t *testing.T) {
	svc, _ := mustService(t, localCities()...)
	tags := func(list string) []language.Tag {
		t.Helper()
		langs, err := search.ParseLanguages(list)
		if err != nil {
			t.Fatal(err)
		}
		return langs
	}
	for _, tc := range []struct {
		name, text, langs     string
		wantName, wantCountry string
		wantMatch             search.Span
		wantMatched           *search.NameMatch
	}{
		{"no languages: the dataset's names", "munich", "", "Munich", "Germany", search.Span{End: 6}, nil},
		{"German name and country", "munich", "de", "München", "Deutschland", search.Span{}, &search.NameMatch{Name: "Munich", Span: search.Span{End: 6}}},
		{"the span is of the name shown", "munch", "de", "München", "Deutschland", search.Span{End: 5}, nil},
		{"Japanese", "munich", "ja", "ミュンヘン", "ドイツ", search.Span{}, &search.NameMatch{Name: "Munich", Span: search.Span{End: 6}}},
		{"English name of an Italian city", "firenze", "en", "Florence", "Italy", search.Span{}, &search.NameMatch{Name: "Firenze", Span: search.Span{End: 7}}},
		{"English country names are the dataset's", "flor", "en-GB", "Florence", "Italy", search.Span{End: 4}, nil},
		{"the first language with a name", "firenze", "fr,de", "Florenz", "Italie", search.Span{}, &search.NameMatch{Name: "Firenze", Span: search.Span{End: 7}}},
		{"a region's tag falls back to its language", "munich", "de-AT", "München", "Deutschland", search.Span{}, &search.NameMatch{Name: "Munich", Span: search.Span{End: 6}}},
		{"English before German: the dataset's names, English already", "munich", "en,de", "Munich", "Germany", search.Span{End: 6}, nil},
		{"an unknown language shows the dataset's names", "munich", "xx", "Munich", "Germany", search.Span{End: 6}, nil},
		{"a name with the slug of the shown one", "zurich", "de", "Zürich", "Schweiz", search.Span{End: 6}, nil},
		{"a former name is found and says so", "bombay", "", "Mumbai", "India", search.Span{}, &search.NameMatch{Name: "Bombay", Span: search.Span{End: 6}, Former: true}},
		{"a former name is never shown", "mumbai", "en", "Mumbai", "India", search.Span{End: 6}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: tc.text, Limit: 1, Languages: tags(tc.langs)})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 1 {
				t.Fatalf("%d hits, want 1", len(res.Hits))
			}
			h := res.Hits[0]
			if h.Name != tc.wantName || h.Country != tc.wantCountry || h.Match != tc.wantMatch {
				t.Errorf("hit %q in %q, match %v; want %q in %q, match %v", h.Name, h.Country, h.Match, tc.wantName, tc.wantCountry, tc.wantMatch)
			}
			if (h.Matched == nil) != (tc.wantMatched == nil) || (h.Matched != nil && *h.Matched != *tc.wantMatched) {
				t.Errorf("matched %+v, want %+v", h.Matched, tc.wantMatched)
			}
		})
	}
}

func TestParseLanguages(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []string
		bad  bool
	}{
		{"", nil, false},
		{"de", []string{"de"}, false},
		{"de, en", []string{"de", "en"}, false},
		{"pt-br,pt", []string{"pt-BR", "pt"}, false},
		{"xx", []string{"und"}, false}, // unknown: it names nothing
		{"de,,en", nil, true},
		{"123456789", nil, true},
		{"de;q=0.5", nil, true},
		{"a,b,c,d,e,f,g,h,i,j,k", nil, true},
	} {
		t.Run(tc.list, func(t *testing.T) {
			got, err := search.ParseLanguages(tc.list)
			if tc.bad {
				var inv *search.InvalidError
				if !errors.Is(err, search.ErrInvalidQuery) || !errors.As(err, &inv) || inv.Field != "lang" {
					t.Fatalf("ParseLanguages(%q) = %v, %v; want an invalid lang", tc.list, got, err)
				}
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("ParseLanguages(%q) = %v, %v; want %v", tc.list, got, err, tc.want)
			}
			for i := range got {
				if got[i].String() != tc.want[i] {
					t.Errorf("tag %d = %s, want %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestAcceptLanguages(t *testing.T) {
	for header, want := range map[string]string{
		"de-CH,de;q=0.9,en;q=0.8": "[de-CH de en]",
		"en;q=0.5, ja":            "[ja en]",
		"":                        "[]",
		"de;q=x":                  "[]",
	} {
		got := search.AcceptLanguages(header)
		if s := fmt.Sprint(got); s != want {
			t.Errorf("AcceptLanguages(%q) = %s, want %s", header, s, want)
		}
	}
}

// Whatever the list, ParseLanguages never panics, and refuses it only
// with an invalid lang.
func FuzzParseLanguages(f *testing.F) {
	for _, s := range []string{"de,en", "pt-BR, pt", "xx", "de;q=1", "", ",", "zh-Hant-TW", "x-private"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		tags, err := search.ParseLanguages(list)
		var inv *search.InvalidError
		if err != nil && (!errors.As(err, &inv) || inv.Field != "lang") {
			t.Fatalf("ParseLanguages(%q): %v, want an invalid lang", list, err)
		}
		if len(tags) > 10 {
			t.Fatalf("ParseLanguages(%q) kept %d languages", list, len(tags))
		}
	})
}

// The name that the reader's language shows weighs as a name: "münc" in
// German ranks München (an alternate name of Munich) as a name, above a
// smaller city whose own name starts so (a made-up Münchberg the size of
// Münster).
func TestLocalNamesRankAsNames(t *testing.T) {
	munich := search.City{Name: "Munich", Slug: "munich", Country: "Germany", CountryCode: "de", Population: 1260391,
		AltNames: []string{"München"}, LocalNames: []search.LocalName{{Lang: "de", Name: "München"}}}
	svc, _ := mustService(t, munich, storetest.CountryCity("Münchberg", "Germany", "de", 315293))
	for langs, want := range map[string]string{"": "Münchberg", "de": "München", "fr": "Münchberg"} {
		tags, err := search.ParseLanguages(langs)
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: "münc", Limit: 2, Languages: tags})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != 2 || res.Hits[0].Name != want {
			t.Errorf("münc in %q: %+v, want %s first", langs, res.Hits, want)
		}
	}
}

func TestLocalize(t *testing.T) {
	hits := []search.Hit{{City: localCities()[0]}, {City: localCities()[2]}}
	search.Localize(hits, nil)
	if hits[0].Name != "Munich" || hits[0].Country != "Germany" {
		t.Errorf("without languages: %s in %s, want the dataset's names", hits[0].Name, hits[0].Country)
	}
	search.Localize(hits, []language.Tag{language.German})
	if hits[0].Name != "München" || hits[0].Country != "Deutschland" || hits[1].Name != "Mumbai" || hits[1].Country != "Indien" {
		t.Errorf("in German: %s in %s, %s in %s; want München in Deutschland, Mumbai in Indien",
			hits[0].Name, hits[0].Country, hits[1].Name, hits[1].Country)
	}
}
