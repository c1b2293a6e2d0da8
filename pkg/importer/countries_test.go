package importer_test

import (
	"encoding/csv"
	"os"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// Every country value of the okfn file maps to a code, and the city takes
// that code's short name.
func TestOKFNReaderMapsEveryCountryOfTheFile(t *testing.T) {
	path := datasetPath(t, "world-cities.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cities, st := mustReadFile(t, search.Small, path, importer.ReaderOptions{})
	if st.Rejected != 0 || len(cities) != len(raw)-1 {
		t.Fatalf("read %d cities (%d rejected) of %d rows", len(cities), st.Rejected, len(raw)-1)
	}
	named := make(map[string]search.City)
	for i, c := range cities {
		named[raw[i+1][1]] = c
	}
	if len(named) != 244 {
		t.Errorf("%d country values, want the 244 of the file", len(named))
	}
	for value, c := range named {
		if c.CountryCode == "" || c.Country != search.CountryName(c.CountryCode) {
			t.Errorf("country %q: code %q, name %q; want a code and its short name", value, c.CountryCode, c.Country)
		}
	}
}

// The okfn file, MaxMind's and GeoNames' dump spell countries differently
// ("Iran, Islamic Republic of", "ir"); the cities of every dataset name
// them alike.
func TestEveryDatasetNamesCountriesAlike(t *testing.T) {
	files := []struct {
		format importer.Format
		name   string
	}{
		{importer.FormatOKFN, "world-cities.csv"},
		{importer.FormatMaxMind, "worldcitiespop-100k.txt.gz"},
		{importer.FormatGeoNames, "geonames-cities1000.txt.gz"},
	}
	names := make(map[string]map[string]string) // code → file → name
	for _, file := range files {
		for code, name := range mustCountryNames(t, file.format, datasetPath(t, file.name)) {
			if names[code] == nil {
				names[code] = make(map[string]string)
			}
			names[code][file.name] = name
		}
	}
	for code, byFile := range names {
		var first string
		for _, name := range byFile {
			if first != "" && name != first {
				t.Errorf("country %s: %v, want one name", code, byFile)
				break
			}
			first = name
		}
	}
	for code, want := range map[string]string{
		"tr": "Türkiye", "ir": "Iran", "ru": "Russia", "kr": "South Korea", "kp": "North Korea", "bo": "Bolivia",
		"tw": "Taiwan", "tz": "Tanzania", "vn": "Vietnam", "md": "Moldova", "la": "Laos", "sy": "Syria", "ve": "Venezuela",
	} {
		if len(names[code]) != len(files) || names[code][files[0].name] != want {
			t.Errorf("country %s: %v, want %q in every file", code, names[code], want)
		}
	}
}

// mustCountryNames reads a dataset file and returns the Country of its
// cities by code; a code with two names fails the test.
func mustCountryNames(t *testing.T, f importer.Format, path string) map[string]string {
	t.Helper()
	in, err := importer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r, err := newFormatReader(f, in, importer.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	names := make(map[string]string)
	for _, c := range cities {
		if c.CountryCode == "" {
			continue
		}
		if prev, ok := names[c.CountryCode]; ok && prev != c.Country {
			t.Fatalf("%s names country %s both %q and %q", path, c.CountryCode, prev, c.Country)
		}
		names[c.CountryCode] = c.Country
	}
	return names
}
