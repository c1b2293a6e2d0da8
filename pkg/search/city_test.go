package search_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// cityFields mirrors the API object with encoding/json's own rules, the
// reference that the hand-written encoder must match byte for byte.
type cityFields struct {
	Name        string       `json:"name"`
	Slug        string       `json:"slug"`
	Country     string       `json:"country"`
	CountryCode string       `json:"country_code,omitempty"`
	Subcountry  string       `json:"subcountry,omitempty"`
	Region      string       `json:"region,omitempty"`
	Population  int64        `json:"population,omitempty"`
	Lat         *float64     `json:"lat,omitempty"`
	Lon         *float64     `json:"lon,omitempty"`
	ID          uint32       `json:"id,omitempty"`
	Match       *search.Span `json:"match,omitempty"`
}

func reference(t testing.TB, cities []search.City) []byte {
	t.Helper()
	fields := make([]cityFields, len(cities))
	for i, c := range cities {
		fields[i] = cityFields{Name: c.Name, Slug: c.Slug, Country: c.Country, CountryCode: c.CountryCode,
			Subcountry: c.Subcountry, Region: c.Region, Population: c.Population, ID: c.ID}
		if c.Match != (search.Span{}) {
			fields[i].Match = &c.Match
		}
		if c.HasLocation {
			fields[i].Lat, fields[i].Lon = &c.Lat, &c.Lon
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(fields); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendJSON(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cities []search.City
	}{
		{"none", []search.City{}},
		{"okfn row", []search.City{{ID: 745044, Name: "İstanbul", Slug: "istanbul", Country: "Turkey", Subcountry: "Istanbul"}}},
		{"maxmind row", []search.City{{Name: "Zürich", Slug: "zurich", Country: "Switzerland", CountryCode: "ch", Region: "25",
			Population: 341730, Lat: 47.3666667, Lon: 8.55, HasLocation: true}}},
		{"location at zero", []search.City{{Name: "Null Island", Slug: "null-island", Country: "Nowhere", HasLocation: true}}},
		{"tiny and negative coordinates", []search.City{{Name: "A", Slug: "a", Country: "B", Lat: -0.0000001, Lon: -179.9833333, HasLocation: true}}},
		{"escapes", []search.City{{Name: "Quote \" back \\ tab \t nl \n ctl \x01 & <b> \u2028", Slug: "q", Country: "Côte d’Ivoire"}}},
		{"invalid UTF-8", []search.City{{Name: "bad \xff\xfe byte", Slug: "bad", Country: "X"}}},
		{"match span", []search.City{{Name: "Zürich", Slug: "zurich", Country: "Switzerland", Match: search.Span{Start: 0, End: 3}}}},
		{"two", []search.City{{Name: "A", Slug: "a", Country: "B"}, {Name: "C", Slug: "c", Country: "D", Population: 7}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := search.AppendJSON(nil, tc.cities), reference(t, tc.cities)
			if !bytes.Equal(got, want) {
				t.Errorf("AppendJSON:\n got %s\nwant %s", got, want)
			}
			var back []search.City
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
		})
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("İstanbul", "Turkey", int64(0), 41.01, 28.97)
	f.Add("a\"\\\x00\xff", "\u2029", int64(-5), 1e-9, 1e22)
	f.Fuzz(func(t *testing.T, name, country string, pop int64, lat, lon float64) {
		if math.IsNaN(lat) || math.IsInf(lat, 0) || math.IsNaN(lon) || math.IsInf(lon, 0) {
			t.Skip("encoding/json cannot encode non-finite numbers")
		}
		cities := []search.City{{Name: name, Slug: search.Slug(name), Country: country, Population: pop, Lat: lat, Lon: lon, HasLocation: true}}
		if got, want := search.AppendJSON(nil, cities), reference(t, cities); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	cities := make([]search.City, 10)
	for i := range cities {
		cities[i] = search.City{Name: "São Paulo", Slug: "sao-paulo", Country: "Brazil", CountryCode: "br", Region: "27",
			Population: 10021295, Lat: -23.5333333, Lon: -46.6166667, HasLocation: true}
	}
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = search.AppendJSON(buf[:0], cities)
	}
}
