package search_test

import (
	"encoding/csv"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
)

func TestCountryCode(t *testing.T) {
	for name, want := range map[string]string{
		"Turkey": "tr", "Türkiye": "tr", "TR": "tr", "tr": "tr",
		"Korea, Republic of": "kr", "South Korea": "kr",
		"Iran, Islamic Republic of": "ir", "Russian Federation": "ru",
		"Venezuela, Bolivarian Republic of": "ve", "Republic of the Congo": "cg",
		"Taiwan, Province of China": "tw", "Kosovo": "xk", "Chile": "cl",
		"United Kingdom": "gb", "Côte d’Ivoire": "ci", "Côte d'Ivoire": "ci",
		"Guinea-Bissau": "gw", "U.S. Virgin Islands": "vi", " gb ": "gb",
	} {
		if got, ok := search.CountryCode(name); !ok || got != want {
			t.Errorf("CountryCode(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
	for _, name := range []string{"", "Atlantis", "zz", "g\x00b", "g.b", "g_b", "gb1", "\tgb\x7f"} {
		if got, ok := search.CountryCode(name); ok {
			t.Errorf("CountryCode(%q) = %q, want no country", name, got)
		}
	}
}

// Every country name of the okfn files maps to a code (the importer fixes
// the current file's Kosovo rows before they get here).
func TestCountryCodeKnowsTheOKFNNames(t *testing.T) {
	for _, file := range []string{"world-cities.csv", "world-cities-2016.csv"} {
		f, err := os.Open(shareddata.Path(t, file))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, row := range rows[1:] {
			name := strings.TrimSpace(row[1])
			if seen[name] || strings.HasPrefix(name, "No country found for alpha-2 code") {
				continue
			}
			seen[name] = true
			if _, ok := search.CountryCode(name); !ok {
				t.Errorf("%s: no code for country %q", file, name)
			}
		}
	}
}

func TestParseCountries(t *testing.T) {
	for _, tc := range []struct {
		list string
		want []string
	}{
		{"cl", []string{"cl"}},
		{"CL, ar", []string{"cl", "ar"}},
		{"Chile", []string{"cl"}},
		{"Korea, Republic of", []string{"kr"}},
		{"Korea, Republic of,Japan", []string{"kr", "jp"}},
		{"jp,Korea, Republic of", []string{"jp", "kr"}},
		{"cl,cl,", []string{"cl"}},
	} {
		got, err := search.ParseCountries(tc.list)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseCountries(%q) = %q, %v; want %q", tc.list, got, err, tc.want)
		}
	}
	if _, err := search.ParseCountries("cl,Atlantis"); !errors.Is(err, search.ErrInvalidQuery) || !strings.Contains(err.Error(), `"Atlantis"`) {
		t.Errorf("ParseCountries with an unknown country: err = %v", err)
	}
}

func TestCountryName(t *testing.T) {
	for code, want := range map[string]string{
		"ru": "Russia", "IR": "Iran", "kr": "South Korea", "tr": "Türkiye", "fr": "France", "de": "Germany",
		"tz": "Tanzania", "mk": "North Macedonia", "xk": "Kosovo", "zz": "", "": "",
		// Names as people write them today, with their letters.
		"ly": "Libya", "sz": "Eswatini", "cw": "Curaçao", "re": "Réunion", "ax": "Åland Islands", "im": "Isle of Man",
		"vi": "U.S. Virgin Islands", "vg": "British Virgin Islands", "sx": "Sint Maarten", "mf": "Saint Martin",
		// Codes that the library reads as another country's, or as none.
		"uk": "", "xx": "", "ja": "", "cp": "",
	} {
		if got := search.CountryName(code); got != want {
			t.Errorf("CountryName(%q) = %q, want %q", code, got, want)
		}
	}
	// Every okfn country name maps to a code whose common name has no
	// parenthesis: one naming for both datasets.
	for _, name := range []string{"Iran, Islamic Republic of", "Bolivia, Plurinational State of", "Korea, Republic of", "Taiwan, Province of China"} {
		code, ok := search.CountryCode(name)
		if !ok || strings.Contains(search.CountryName(code), "(") || strings.Contains(search.CountryName(code), ",") {
			t.Errorf("%q: code %q, common name %q", name, code, search.CountryName(code))
		}
	}
}

// Every name that results show reads back as its code, so that a country
// filter takes what a person copies from an answer.
func TestCountryNameReadsBack(t *testing.T) {
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			code := string([]rune{a, b})
			name := search.CountryName(code)
			if name == "" {
				continue
			}
			if got, ok := search.CountryCode(name); !ok || got != code {
				t.Errorf("CountryName(%q) = %q, which CountryCode reads as %q, %v", code, name, got, ok)
			}
			if strings.ContainsAny(name, "(),") {
				t.Errorf("CountryName(%q) = %q: not a short name", code, name)
			}
		}
	}
}
