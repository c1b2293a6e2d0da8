package search_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// qualifiedCities are namesakes told apart by their division or country,
// written as the datasets write them: okfn rows name the division, GeoNames
// rows give its code too ("TX", or "08" for Ontario), and some only the
// code.
func qualifiedCities() []search.City {
	in := func(name, country, code, sub, region string, pop int64) search.City {
		c := storetest.CountryCity(name, country, code, pop)
		c.Subcountry, c.Region = sub, region
		return c
	}
	munich := in("München", "Germany", "de", "Bavaria", "02", 1260391)
	munich.AltNames = []string{"Munich"}
	return []search.City{
		in("Paris", "France", "fr", "Île-de-France", "11", 2138551),
		in("Paris", "United States", "us", "Texas", "TX", 25171),
		in("Paris", "United States", "us", "Tennessee", "TN", 10156),
		in("Paris", "Canada", "ca", "Ontario", "08", 11177),
		in("Lyon", "France", "fr", "", "B9", 472317),
		in("Cambridge", "United Kingdom", "gb", "England", "ENG", 128488),
		in("Cambridge", "Canada", "ca", "Ontario", "08", 120372),
		in("Cambridge", "United States", "us", "Massachusetts", "MA", 105162),
		in("Cambridge", "United States", "us", "Maryland", "MD", 12326),
		in("London", "United Kingdom", "gb", "England", "ENG", 7556900),
		in("London", "Canada", "ca", "Ontario", "08", 346765),
		in("London", "United States", "us", "", "KY", 7993),
		in("London", "United States", "us", "California", "CA", 1869),
		in("Newcastle upon Tyne", "United Kingdom", "gb", "England", "ENG", 192382),
		in("Newcastle", "Australia", "au", "New South Wales", "02", 308308),
		in("Newcastle", "South Africa", "za", "KwaZulu-Natal", "02", 56144),
		in("Springfield", "United States", "us", "Missouri", "MO", 159498),
		in("Springfield", "United States", "us", "Massachusetts", "MA", 153060),
		in("Springfield", "United States", "us", "Illinois", "IL", 116250),
		in("Charlotte", "United States", "us", "North Carolina", "NC", 731424),
		in("Charlotte", "United States", "us", "Michigan", "MI", 9074),
		munich,
		in("Munich", "United States", "us", "North Dakota", "ND", 210),
		in("Dubai", "United Arab Emirates", "ae", "Dubai", "03", 1137347),
		in("Amsterdam", "Netherlands", "nl", "North Holland", "07", 741636),
		in("Amsterdam", "United States", "us", "New York", "NY", 18000),
		in("San José", "Costa Rica", "cr", "San José", "08", 335007),
		in("San Jose", "United States", "us", "California", "CA", 945942),
		in("Perth", "Australia", "au", "Western Australia", "08", 1896548),
		in("Perth", "United Kingdom", "gb", "Scotland", "SCT", 47180),
		in("Santiago", "Chile", "cl", "Santiago Metropolitan", "12", 4837295),
		in("Villa Presidente Frei, Ñuñoa, Santiago, Chile", "Chile", "cl", "Santiago Metropolitan", "12", 15000),
		in("Santiago Citendejé", "Mexico", "mx", "México", "15", 5414),
	}
}

// mustFindPlaces answers text as /search does (limit 10, typos on) and
// names each hit by its name, division and country code.
func mustFindPlaces(t *testing.T, svc *search.Service, text string) ([]string, search.Result) {
	t.Helper()
	res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: text, Limit: 10, Fuzzy: true})
	if err != nil {
		t.Fatal(err)
	}
	var places []string
	for _, h := range res.Hits {
		places = append(places, fmt.Sprintf("%s, %s, %s", h.Name, h.Subcountry, h.CountryCode))
	}
	return places, res
}

func TestFindReadsQualifiersAsTheyAreTyped(t *testing.T) {
	svc, _ := mustService(t, qualifiedCities()...)
	for _, tc := range []struct {
		name, text, qualifier string
		want                  []string // the first hits, in order
	}{
		{"a division's code", "paris tx", "region:tx", []string{"Paris, Texas, us"}},
		{"the start of a division's name", "paris tex", "region:tex", []string{"Paris, Texas, us"}},
		{"the start of a name that is no code", "cambridge mass", "region:mass", []string{"Cambridge, Massachusetts, us"}},
		{"Ontario begun, though its code is ON", "london ont", "region:ont", []string{"London, Ontario, ca"}},
		{"a region that only the dataset's names know", "munich bavaria", "region:bavaria", []string{"München, Bavaria, de"}},
		{"the start of a division the dataset names", "munich bav", "region:bav", []string{"München, Bavaria, de"}},
		{"two countries begun: both, ranked together", "newcastle austr", "country:au,at", []string{"Newcastle, New South Wales, au"}},
		{"a division of several words begun", "newcastle new south w", "region:new-south-w", []string{"Newcastle, New South Wales, au"}},
		{"a country of several words begun", "london united king", "country:gb", []string{"London, England, gb"}},
		{"a division of several words, the second begun", "charlotte north carol", "region:north-carol", []string{"Charlotte, North Carolina, us"}},
		{"a country by a code people use", "cambridge uk", "country:gb", []string{"Cambridge, England, gb"}},
		{"a nation of the United Kingdom", "cambridge england", "region:england", []string{"Cambridge, England, gb"}},
		{"a nation begun", "perth scot", "region:scot", []string{"Perth, Scotland, gb"}},
		{"uae", "dubai uae", "country:ae", []string{"Dubai, Dubai, ae"}},
		{"holland", "amsterdam holland", "country:nl", []string{"Amsterdam, North Holland, nl"}},
		{"america, and American Samoa begun", "amsterdam america", "country:us,as", []string{"Amsterdam, New York, us"}},
		{"city, division, country", "paris, texas, usa", "region:texas country:us", []string{"Paris, Texas, us"}},
		{"city, code, country", "springfield, il, usa", "region:il country:us", []string{"Springfield, Illinois, us"}},
		{"city, division, country in Canada", "london, ontario, canada", "region:ontario country:ca", []string{"London, Ontario, ca"}},
		{"city, country", "cambridge, uk", "country:gb", []string{"Cambridge, England, gb"}},
		{"city, country begun", "newcastle, aus", "country:au,at", []string{"Newcastle, New South Wales, au"}},
		{"a code only the row's Region holds", "london ky", "region:ky", []string{"London, , us"}},
		{"a code only the dataset knows", "lyon b9", "region:b9", []string{"Lyon, , fr"}},
		{"a code that is a country and a division: both", "london ca", "country:ca region:ca", []string{"London, Ontario, ca"}},
		{"a code of two countries' divisions: both", "perth wa", "region:wa", []string{"Perth, Western Australia, au"}},
		{"two letters that are no code: the start of names", "paris te", "region:te", []string{"Paris, Texas, us", "Paris, Tennessee, us"}},
		{"two letters that are a code: only the code", "cambridge ma", "region:ma", []string{"Cambridge, Massachusetts, us"}},
		{"a country by name", "san jose costa rica", "country:cr", []string{"San José, San José, cr"}},
		{"a country begun, of two words", "san jose costa r", "country:cr", []string{"San José, San José, cr"}},
		{"a country that does not hold the division: the words before it", "paris, texas, canada", "region:texas", []string{"Paris, Texas, us"}},
		{"a letter being typed: the words before", "paris, t", "", []string{"Paris, Île-de-France, fr", "Paris, Texas, us"}},
		{"a division whose country is being typed", "paris, texas, u", "region:texas", []string{"Paris, Texas, us"}},
		{"nothing named: the words before", "paris atlantis", "", []string{"Paris, Île-de-France, fr", "Paris, Texas, us"}},
		// The whole text is a later word of a suburb's name: the country it
		// names still qualifies the city the text starts with.
		{"a country after a name that a suburb's ends with", "santiago chile", "country:cl",
			[]string{"Santiago, Santiago Metropolitan, cl", "Villa Presidente Frei, Ñuñoa, Santiago, Chile, Santiago Metropolitan, cl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, res := mustFindPlaces(t, svc, tc.text)
			if res.Qualifier != tc.qualifier || len(got) < len(tc.want) || strings.Join(got[:len(tc.want)], "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("%q: qualifier %q, hits %q; want %q, first %q", tc.text, res.Qualifier, got, tc.qualifier, tc.want)
			}
		})
	}
}

// TestFindNeverEmptiesWhileAQualifierIsTyped types qualified queries
// letter by letter: once the city's name is whole, every prefix lists
// something, and the intended city is in the first five once the
// qualifier says which it is.
func TestFindNeverEmptiesWhileAQualifierIsTyped(t *testing.T) {
	svc, _ := mustService(t, qualifiedCities()...)
	for _, tc := range []struct {
		text, city string
		// certain is how many bytes of text make the qualifier
		// unambiguous.
		certain int
	}{
		{"paris, texas, usa", "Paris, Texas, us", len("paris, te")},
		{"cambridge massachusetts", "Cambridge, Massachusetts, us", len("cambridge ma")},
		{"london, ontario, canada", "London, Ontario, ca", len("london, on")},
		{"springfield, il, usa", "Springfield, Illinois, us", len("springfield, il")},
		{"newcastle, new south wales, australia", "Newcastle, New South Wales, au", len("newcastle, new")},
		{"munich, bavaria, germany", "München, Bavaria, de", len("munich, bav")},
	} {
		t.Run(tc.text, func(t *testing.T) {
			city := strings.IndexAny(tc.text, " ,")
			for n := city; n <= len(tc.text); n++ {
				text := tc.text[:n]
				got, _ := mustFindPlaces(t, svc, text)
				if len(got) == 0 {
					t.Errorf("%q lists nothing", text)
					continue
				}
				top := got[:min(5, len(got))]
				if n >= tc.certain && !slices.Contains(top, tc.city) {
					t.Errorf("%q: first five %q, want %s among them", text, top, tc.city)
				}
			}
		})
	}
}
