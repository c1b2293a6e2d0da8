package search_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// cityFields mirrors the API object with encoding/json's own rules, the
// reference that the hand-written encoder must match byte for byte.
type cityFields struct {
	Name        string       `json:"name"`
	Label       string       `json:"label,omitempty"`
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
	Matched     *struct {
		Name     string `json:"name"`
		Start    int    `json:"start"`
		End      int    `json:"end"`
		Formerly bool   `json:"formerly,omitempty"`
	} `json:"matched,omitempty"`
	Edits      int      `json:"edits,omitempty"`
	Corrected  string   `json:"corrected,omitempty"`
	DistanceKm *float64 `json:"distance_km,omitempty"`
}

func reference(t testing.TB, hits []search.Hit) []byte {
	t.Helper()
	fields := make([]cityFields, len(hits))
	for i, c := range hits {
		fields[i] = cityFields{Name: c.Name, Label: c.Label, Slug: c.Slug, Country: c.Country, CountryCode: c.CountryCode,
			Subcountry: c.Subcountry, Region: c.Region, Population: c.Population, ID: c.ID}
		if c.Match != (search.Span{}) {
			fields[i].Match = &c.Match
		}
		if m := c.Matched; m != nil {
			fields[i].Matched = &struct {
				Name     string `json:"name"`
				Start    int    `json:"start"`
				End      int    `json:"end"`
				Formerly bool   `json:"formerly,omitempty"`
			}{m.Name, m.Span.Start, m.Span.End, m.Former}
		}
		fields[i].Edits, fields[i].Corrected = c.Edits, c.Corrected
		if c.HasDistance {
			d := math.Round(c.DistanceKm*10) / 10
			fields[i].DistanceKm = &d
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
		name string
		hits []search.Hit
	}{
		{"none", []search.Hit{}},
		{"okfn row", []search.Hit{{City: search.City{ID: 745044, Name: "İstanbul", Slug: "istanbul", Country: "Turkey", Subcountry: "Istanbul"}}}},
		{"maxmind row", []search.Hit{{City: search.City{Name: "Zürich", Slug: "zurich", Country: "Switzerland", CountryCode: "ch", Region: "25",
			Population: 341730, Lat: 47.3666667, Lon: 8.55, HasLocation: true}}}},
		{"location at zero", []search.Hit{{City: search.City{Name: "Null Island", Slug: "null-island", Country: "Nowhere", HasLocation: true}}}},
		{"tiny and negative coordinates", []search.Hit{{City: search.City{Name: "A", Slug: "a", Country: "B", Lat: -0.0000001, Lon: -179.9833333, HasLocation: true}}}},
		{"escapes", []search.Hit{{City: search.City{Name: "Quote \" back \\ tab \t nl \n ctl \x01 & <b> \u2028", Slug: "q", Country: "Côte d’Ivoire"}}}},
		{"invalid UTF-8", []search.Hit{{City: search.City{Name: "bad \xff\xfe byte", Slug: "bad", Country: "X"}}}},
		{"match span", []search.Hit{{City: search.City{Name: "Zürich", Slug: "zurich", Country: "Switzerland"}, Match: search.Span{Start: 0, End: 3}}}},
		{"matched alternate name", []search.Hit{{City: search.City{Name: "Köln", Slug: "koln", Country: "Germany"},
			Matched: &search.NameMatch{Name: "Cologne \"Kölle\"", Span: search.Span{Start: 0, End: 7}}}}},
		{"former name", []search.Hit{{City: search.City{Name: "Mumbai", Slug: "mumbai", Country: "India"},
			Matched: &search.NameMatch{Name: "Bombay", Span: search.Span{End: 3}, Former: true}}}},
		{"typo match", []search.Hit{{City: search.City{Name: "Zürich", Slug: "zurich", Country: "Switzerland"},
			Match: search.Span{End: 6}, Edits: 1, Corrected: "zurich"}}},
		{"distance", []search.Hit{{City: search.City{Name: "Zug", Slug: "zug", Country: "Switzerland", Lat: 47.17, Lon: 8.52, HasLocation: true},
			Match: search.Span{End: 3}, DistanceKm: 23.449, HasDistance: true}}},
		{"label", []search.Hit{{City: search.City{Name: "Paris", Slug: "paris", Country: "United States", Subcountry: "Texas"}, Label: "Paris, Texas"}}},
		{"two", []search.Hit{{City: search.City{Name: "A", Slug: "a", Country: "B"}}, {City: search.City{Name: "C", Slug: "c", Country: "D", Population: 7}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, want := search.AppendJSON(nil, tc.hits), reference(t, tc.hits)
			if !bytes.Equal(got, want) {
				t.Errorf("AppendJSON:\n got %s\nwant %s", got, want)
			}
			var back []search.Hit
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("output is not JSON: %v", err)
			}
			if len(back) != len(tc.hits) {
				t.Fatalf("read back %d hits, want %d", len(back), len(tc.hits))
			}
			for i := range back {
				w := tc.hits[i]
				sameName := back[i].Name == w.Name || !utf8.ValidString(w.Name) // encoding/json replaces bad bytes
				if back[i].Match != w.Match || !sameName || back[i].HasLocation != w.HasLocation ||
					(back[i].Matched == nil) != (w.Matched == nil) || (w.Matched != nil && *back[i].Matched != *w.Matched) || back[i].Label != w.Label || back[i].Edits != w.Edits || back[i].Corrected != w.Corrected {
					t.Errorf("hit %d read back as %+v, want %+v", i, back[i], w)
				}
			}
		})
	}
}

func TestAppendGeoJSON(t *testing.T) {
	hits := []search.Hit{
		{City: search.City{Name: "Zürich", Slug: "zurich", Country: "Switzerland", Lat: 47.3666667, Lon: 8.55, HasLocation: true}, Match: search.Span{End: 3}},
		{City: search.City{Name: "Nowhere", Slug: "nowhere", Country: "X"}},
	}
	var fc struct {
		Type     string
		Features []struct {
			Type     string
			Geometry *struct {
				Type        string
				Coordinates []float64
			}
			Properties search.Hit
		}
	}
	got := search.AppendGeoJSON(nil, hits)
	if err := json.Unmarshal(got, &fc); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if fc.Type != "FeatureCollection" || len(fc.Features) != 2 {
		t.Fatalf("%s: want a FeatureCollection of 2", got)
	}
	f := fc.Features[0]
	if f.Type != "Feature" || f.Geometry == nil || f.Geometry.Type != "Point" || len(f.Geometry.Coordinates) != 2 ||
		f.Geometry.Coordinates[0] != 8.55 || f.Geometry.Coordinates[1] != 47.3666667 {
		t.Errorf("feature %+v: want a Point at [lon, lat]", f)
	}
	if f.Properties.Name != "Zürich" || f.Properties.Match != (search.Span{End: 3}) {
		t.Errorf("properties %+v: want the hit's object", f.Properties)
	}
	if fc.Features[1].Geometry != nil {
		t.Errorf("a city without a location has geometry %+v, want null", fc.Features[1].Geometry)
	}
	if empty := string(search.AppendGeoJSON(nil, nil)); empty != `{"type":"FeatureCollection","features":[]}` {
		t.Errorf("no hits: %s", empty)
	}
}

func FuzzAppendJSON(f *testing.F) {
	f.Add("İstanbul", "Turkey", int64(0), 41.01, 28.97)
	f.Add("a\"\\\x00\xff", "\u2029", int64(-5), 1e-9, 1e22)
	f.Fuzz(func(t *testing.T, name, country string, pop int64, lat, lon float64) {
		if math.IsNaN(lat) || math.IsInf(lat, 0) || math.IsNaN(lon) || math.IsInf(lon, 0) {
			t.Skip("encoding/json cannot encode non-finite numbers")
		}
		hits := []search.Hit{{City: search.City{Name: name, Slug: search.Slug(name), Country: country, Population: pop, Lat: lat, Lon: lon, HasLocation: true}}}
		if got, want := search.AppendJSON(nil, hits), reference(t, hits); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON:\n got %s\nwant %s", got, want)
		}
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	hits := make([]search.Hit, 10)
	for i := range hits {
		hits[i] = search.Hit{City: search.City{Name: "São Paulo", Slug: "sao-paulo", Country: "Brazil", CountryCode: "br", Region: "27",
			Population: 10021295, Lat: -23.5333333, Lon: -46.6166667, HasLocation: true}, Match: search.Span{End: 3}}
	}
	b.ReportAllocs()
	var buf []byte
	for b.Loop() {
		buf = search.AppendJSON(buf[:0], hits)
	}
}
