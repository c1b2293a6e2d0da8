package importer_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

const maxmindHeader = "Country,City,AccentCity,Region,Population,Latitude,Longitude\n"

func TestMaxMindReaderReadsTheSharedFiles(t *testing.T) {
	tests := []struct {
		file  string
		rows  int
		check func(t *testing.T, cities []search.City)
	}{
		{
			file: "worldcitiespop-sample.txt",
			rows: 99,
			check: func(t *testing.T, cities []search.City) {
				// Line 82 holds the bytes "Sant Juli\xe0 de L\xf2ria" in Latin-1.
				got := findCity(t, cities, "Sant Julià de Lòria")
				want := search.City{
					Name: "Sant Julià de Lòria", Slug: "sant-julia-de-loria", Country: "Andorra", CountryCode: "ad",
					Region: "06", Population: 8020, Lat: 42.4666667, Lon: 1.5, HasLocation: true,
				}
				if !got.Equal(&want) {
					t.Errorf("city = %+v, want %+v", got, want)
				}
				findCity(t, cities, "Aixàs")
				if c := cities[len(cities)-1]; c.Country != "United Arab Emirates" || c.CountryCode != "ae" {
					t.Errorf("last city = %+v, want one in the United Arab Emirates", c)
				}
			},
		},
		{
			file: "worldcitiespop-excerpt-rs.txt", // lower-case header, no final newline
			rows: 14844,
			check: func(t *testing.T, cities []search.City) {
				dj := findCity(t, cities, "Ðakovica")
				if dj.Country != "Serbia" || dj.CountryCode != "rs" || dj.Region != "00" || dj.Slug != "dakovica" {
					t.Errorf("Ðakovica = %+v", dj)
				}
				if c := findCity(t, cities, "Malevi?"); c.Slug != "malevi" {
					t.Errorf("Malevi? has slug %q, want malevi", c.Slug)
				}
				if last := cities[len(cities)-1]; last.Name != "Zym" || last.Lon != 20.666944 {
					t.Errorf("last city = %+v, want Zym at 20.666944 read without a final newline", last)
				}
			},
		},
		{
			file: "worldcitiespop-100k.txt.gz",
			rows: 100000,
			check: func(t *testing.T, cities []search.City) {
				withPop := 0
				for _, c := range cities {
					if c.Population > 0 {
						withPop++
					}
					if c.Country == c.CountryCode || !c.HasLocation {
						t.Fatalf("city %+v has no country name or no location", c)
					}
				}
				if withPop < 6482 {
					t.Errorf("%d cities have a population, want at least the 6,482 real ones", withPop)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cities, st := mustReadFile(t, search.Large, datasetPath(t, tt.file), importer.ReaderOptions{})
			if st.Rows != tt.rows || st.Rejected != 0 || len(cities) != tt.rows {
				t.Fatalf("read %d rows, %d cities, %d rejected %v; want %d rows, all good", st.Rows, len(cities), st.Rejected, st.Rejections, tt.rows)
			}
			if st.UnknownCountries != 0 {
				t.Errorf("%d rows with unknown country codes %v", st.UnknownCountries, st.UnknownCodes)
			}
			for _, c := range cities {
				if !utf8.ValidString(c.Name) || c.Slug != search.Slug(c.Name) || strings.TrimSpace(c.Name) != c.Name {
					t.Fatalf("city %+v: name not valid, trimmed UTF-8 or slug not Slug(name)", c)
				}
			}
			tt.check(t, cities)
		})
	}
}

func TestMaxMindReaderReadsUTF8CopiesLikeLatin1(t *testing.T) {
	latin1, _ := mustReadFile(t, search.Large, datasetPath(t, "worldcitiespop-sample.txt"), importer.ReaderOptions{})
	utf8Copy, st := mustReadFile(t, search.Large, filepath.Join("testdata", "maxmind-utf8.txt"), importer.ReaderOptions{})
	if len(utf8Copy) != 12 || st.Rejected != 0 {
		t.Fatalf("read %d cities (%d rejected), want 12", len(utf8Copy), st.Rejected)
	}
	type where struct {
		region   string
		lat, lon float64
		slug     string
	}
	byPlace := make(map[where]string)
	for _, c := range latin1 {
		byPlace[where{c.Region, c.Lat, c.Lon, c.Slug}] = c.Name
	}
	for _, c := range utf8Copy {
		name, ok := byPlace[where{c.Region, c.Lat, c.Lon, c.Slug}]
		if !ok || name != c.Name {
			t.Errorf("UTF-8 copy gives %q, Latin-1 original gives %q", c.Name, name)
		}
	}
}

func TestMaxMindReaderDecodesEachField(t *testing.T) {
	tests := []struct {
		name       string
		accentCity string // raw bytes
		want       string
	}{
		{"ASCII", "Andorra la Vella", "Andorra la Vella"},
		{"Latin-1", "Aix\xe0s", "Aixàs"},
		{"Latin-1 outside ASCII letters", "\xd0akovica", "Ðakovica"},
		{"Latin-1 in the middle", "S\xe3o Paulo", "São Paulo"},
		{"UTF-8", "Aixàs", "Aixàs"},
		{"UTF-8 with a letter Latin-1 lacks", "İstanbul", "İstanbul"},
		{"Latin-1 that looks like UTF-8 is read as UTF-8", "Ã©", "Ã©"},
		{"spaces trimmed", "  bab el ahmar ", "bab el ahmar"},
		{"Latin-1 no-break space trimmed", "\xa0Foo", "Foo"},
		{"stray quote kept", `"Big" Town`, `"Big" Town`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cities, st := mustReadString(t, search.Large, maxmindHeader+"ad,x,"+tt.accentCity+",06,,42.5,1.5\n")
			if len(cities) != 1 || cities[0].Name != tt.want {
				t.Fatalf("read %q (rejections %v), want %q", names(cities), st.Rejections, tt.want)
			}
		})
	}
}

func TestMaxMindReaderReadsFixtureRows(t *testing.T) {
	cities, st := mustReadFile(t, search.Large, filepath.Join("testdata", "maxmind-malformed.txt"), importer.ReaderOptions{})
	wantNames := []string{"Andorra la Vella", "London", "Kampala", "La Massana", "Escàs", `"Big" Town`, "Foo", "Sant Julià", "Kralendijk", "Pal", "End"}
	if got := names(cities); !slices.Equal(got, wantNames) {
		t.Errorf("names = %q\nwant %q", got, wantNames)
	}
	if st.Rows != 18 {
		t.Errorf("Rows = %d, want 18", st.Rows)
	}
	wantRejections := []importer.RowError{
		{Line: 3, Reason: "wrong number of fields (6, want 7)"},
		{Line: 4, Reason: `invalid latitude "north"`},
		{Line: 8, Reason: `invalid population "12x"`},
		{Line: 10, Reason: "empty name"},
		{Line: 16, Reason: `name "?" has no letters or digits`},
		{Line: 17, Reason: `invalid latitude "95"`},
		{Line: 18, Reason: "wrong number of fields (8, want 7)"},
	}
	if st.Rejected != len(wantRejections) || !slices.Equal(st.Rejections, wantRejections) {
		t.Errorf("rejected %d: %v\nwant %v", st.Rejected, st.Rejections, wantRejections)
	}
	if st.UnknownCountries != 1 || !slices.Equal(st.UnknownCodes, []string{"qq"}) {
		t.Errorf("unknown countries %d %v, want 1 [qq]", st.UnknownCountries, st.UnknownCodes)
	}

	tests := []struct {
		name string
		want search.City
	}{
		{"London", search.City{Name: "London", Slug: "london", Country: "United Kingdom", CountryCode: "gb", Region: "H9", Population: 7421228, Lat: 51.514125, Lon: -0.093689, HasLocation: true}},
		{"Kampala", search.City{Name: "Kampala", Slug: "kampala", Country: "Uganda", CountryCode: "ug", Region: "C3", Population: 1353189, Lat: 0.316667, Lon: 32.5833333, HasLocation: true}},
		{"La Massana", search.City{Name: "La Massana", Slug: "la-massana", Country: "Andorra", CountryCode: "ad", Region: "04", Population: 0, Lat: 42.55, Lon: 1.5166667, HasLocation: true}},
		{"Foo", search.City{Name: "Foo", Slug: "foo", Country: "qq", CountryCode: "qq", Region: "00", Lat: 1, Lon: 1, HasLocation: true}},
		{"Sant Julià", search.City{Name: "Sant Julià", Slug: "sant-julia", Country: "Andorra", CountryCode: "ad", Region: "06", Lat: 42.4666667, Lon: 1.5, HasLocation: true}},
		{"Kralendijk", search.City{Name: "Kralendijk", Slug: "kralendijk", Country: "Netherlands Antilles", CountryCode: "an", Region: "00", Lat: 12.15, Lon: -68.2666667, HasLocation: true}},
		{"Pal", search.City{Name: "Pal", Slug: "pal", Country: "Andorra", CountryCode: "ad", Region: "04", Lat: 42.55, Lon: 1.5, HasLocation: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := findCity(t, cities, tt.name); !got.Equal(&tt.want) {
				t.Errorf("city = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestMaxMindReaderKeepsOnlyMaxReportedRejections(t *testing.T) {
	_, st := mustReadFile(t, search.Large, filepath.Join("testdata", "maxmind-malformed.txt"), importer.ReaderOptions{MaxReported: 2})
	if st.Rejected != 7 || !slices.Equal(lines(st.Rejections), []int{3, 4}) {
		t.Errorf("rejected %d, kept lines %v; want 7 rejected, lines [3 4] kept", st.Rejected, lines(st.Rejections))
	}
}

func TestMaxMindReaderStrictStopsAtFirstMalformedRow(t *testing.T) {
	in, err := importer.Open(filepath.Join("testdata", "maxmind-malformed.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r, err := importer.NewMaxMindReader(in, importer.ReaderOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	cities, err := search.ReadAll(r)
	mustRowError(t, err, 3)
	if len(cities) != 1 {
		t.Errorf("read %d cities before the error, want 1", len(cities))
	}
}

func TestMaxMindReaderNamesCountries(t *testing.T) {
	// What search.CountryName calls each code is part of the API: the CLI
	// and the HTTP answers show it, for every dataset alike.
	tests := []struct {
		code, want string
		known      bool
	}{
		{"tr", "Türkiye", true},
		{"gb", "United Kingdom", true},
		{"kr", "South Korea", true},
		{"kp", "North Korea", true},
		{"us", "United States", true},
		{"rs", "Serbia", true},
		{"ci", "Côte d'Ivoire", true},
		{"hk", "Hong Kong", true},
		{"ir", "Iran", true},
		{"ru", "Russia", true},
		{"an", "Netherlands Antilles", true}, // withdrawn from ISO, still in MaxMind's file
		{"qq", "qq", false},                  // user-assigned
		{"zz", "zz", false},                  // "Unknown Region" to ISO
		{"uk", "uk", false},                  // reserved for the United Kingdom, whose code is gb
		{"xy", "xy", false},                  // not a code at all
		{"q1", "q1", false},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			cities, st := mustReadString(t, search.Large, maxmindHeader+tt.code+",x,X,00,,1,1\n")
			if len(cities) != 1 || cities[0].Country != tt.want || cities[0].CountryCode != tt.code {
				t.Fatalf("cities = %+v, want Country %q", cities, tt.want)
			}
			if known := st.UnknownCountries == 0; known != tt.known {
				t.Errorf("known = %v, want %v", known, tt.known)
			}
		})
	}
}

func TestMaxMindReaderChecksTheHeader(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string
	}{
		{"exact", maxmindHeader, ""},
		{"lower case, BOM, CRLF, no final newline", "\ufeffcountry,city,accentcity,region,population,latitude,longitude\r", ""},
		{"an okfn file", "name,country,subcountry,geonameid\n", `unexpected header "name,country,subcountry,geonameid", want the MaxMind header "Country,City,AccentCity,Region,Population,Latitude,Longitude"`},
		{"a column missing", "Country,City,AccentCity,Region,Population,Latitude\n", "want the MaxMind header"},
		{"empty file", "", "empty file, want the MaxMind header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := importer.NewMaxMindReader(strings.NewReader(tt.data), importer.ReaderOptions{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrHeader saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestMaxMindReaderAllocatesOnlyNameAndSlugForASCIIRows(t *testing.T) {
	const row = "ad,andorra la vella,Andorra la Vella,07,20430,42.5,1.5166667\n"
	const runs = 20
	r, err := importer.NewMaxMindReader(strings.NewReader(maxmindHeader+strings.Repeat(row, 2000*(runs+1))), importer.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]search.City, 0, 2000)
	rows := 0
	allocs := testing.AllocsPerRun(runs, func() {
		if batch, err = r.ReadBatch(batch[:0]); err != nil {
			t.Fatal(err)
		}
		rows = len(batch)
	})
	if perRow := allocs / float64(rows); perRow > 2 {
		t.Errorf("ReadBatch allocates %.1f times per ASCII row, want 2 (Name and Slug)", perRow)
	}
}
