package importer_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

func TestOKFNReaderReadsTheSharedFiles(t *testing.T) {
	tests := []struct {
		file  string
		rows  int
		check func(t *testing.T, cities []search.City)
	}{
		{
			file: "world-cities-2016.csv",
			rows: 23018,
			check: func(t *testing.T, cities []search.City) {
				ist := findCity(t, cities, "İstanbul")
				want := search.City{Name: "İstanbul", Slug: "istanbul", Country: "Türkiye", CountryCode: "tr", Subcountry: "Istanbul", ID: 745044}
				if !ist.Equal(&want) {
					t.Errorf("İstanbul = %+v, want %+v", ist, want)
				}
				if dc := findCity(t, cities, "Washington, D.C."); dc.Subcountry != "Washington, D.C." || dc.Country != "United States" {
					t.Errorf("Washington, D.C. = %+v", dc)
				}
				// The file's "Bonaire, Saint Eustatius and Saba " with a trailing space.
				if k := findCity(t, cities, "Kralendijk"); k.Country != "Caribbean Netherlands" || k.CountryCode != "bq" {
					t.Errorf("Kralendijk's country = %q (%q), want Caribbean Netherlands (bq)", k.Country, k.CountryCode)
				}
				for _, c := range cities {
					if c.Subcountry == "N/A" {
						t.Fatalf("%s keeps subcountry N/A, want it empty", c.Name)
					}
				}
			},
		},
		{
			file: "world-cities.csv",
			rows: 34032,
			check: func(t *testing.T, cities []search.City) {
				korea := 0
				for _, c := range cities {
					if c.Country == "South Korea" { // "Korea, Republic of" in the file
						korea++
					}
					if c.CountryCode == "" {
						t.Fatalf("%+v has no country code", c)
					}
					if c.Population != 0 || c.HasLocation {
						t.Fatalf("%+v has fields the okfn file does not carry", c)
					}
				}
				if korea == 0 {
					t.Error(`no city in "South Korea"`)
				}
				for _, name := range []string{"Mianzhu, Deyang, Sichuan", "Sant Pere, Santa Caterina i La Ribera", "Misato, Saitama"} {
					findCity(t, cities, name)
				}
				// The file names Kosovo's country "No country found for alpha-2 code: XK".
				if c := findCity(t, cities, "Istok"); c.Country != "Kosovo" {
					t.Errorf("Istok's country = %q, want Kosovo", c.Country)
				}
				for _, c := range cities {
					if strings.HasPrefix(c.Country, "No country found") {
						t.Fatalf("%s keeps the country %q", c.Name, c.Country)
					}
				}
				if c := findCity(t, cities, "Warīsān"); c.Slug != "warisan" || c.ID != 290503 {
					t.Errorf("Warīsān = %+v", c)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cities, st := mustReadFile(t, search.Small, datasetPath(t, tt.file), importer.ReaderOptions{})
			if st.Rows != tt.rows || st.Rejected != 0 || len(cities) != tt.rows {
				t.Fatalf("read %d rows, %d cities, %d rejected %v; want %d rows, all good", st.Rows, len(cities), st.Rejected, st.Rejections, tt.rows)
			}
			tt.check(t, cities)
		})
	}
}

func TestOKFNReaderReadsFixtures(t *testing.T) {
	tests := []struct {
		name       string
		file       string
		wantNames  []string
		wantRows   int
		wantLines  []int
		wantReason []string
	}{
		{
			name:      "BOM and CRLF",
			file:      "okfn-bom-crlf.csv",
			wantNames: []string{"Tirana", "Seoul", "Washington, D.C.", "İstanbul"},
			wantRows:  4,
		},
		{
			name:      "malformed rows are skipped and reported",
			file:      "okfn-malformed.csv",
			wantNames: []string{"Tirana", "Korçë", "Sarandë"},
			wantRows:  11,
			wantLines: []int{3, 4, 5, 6, 8, 9, 10, 13},
			wantReason: []string{
				"wrong number of fields (3, want 4)",
				"empty name",
				`invalid UTF-8 in name "Vlor\xeb"`,
				`invalid geonameid "abc"`,
				`extraneous or missing " in quoted-field`, // a field may not span lines
				`bare " in non-quoted-field`,
				`bare " in non-quoted-field`,
				`name "---" has no letters or digits`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cities, st := mustReadFile(t, search.Small, filepath.Join("testdata", tt.file), importer.ReaderOptions{})
			if got := names(cities); !slices.Equal(got, tt.wantNames) {
				t.Errorf("names = %q, want %q", got, tt.wantNames)
			}
			if st.Rows != tt.wantRows {
				t.Errorf("Rows = %d, want %d", st.Rows, tt.wantRows)
			}
			if st.Rejected != len(tt.wantLines) || !slices.Equal(lines(st.Rejections), tt.wantLines) {
				t.Errorf("rejected %d at lines %v, want lines %v", st.Rejected, lines(st.Rejections), tt.wantLines)
			}
			for i, want := range tt.wantReason {
				if i < len(st.Rejections) && st.Rejections[i].Reason != want {
					t.Errorf("line %d: reason %q, want %q", st.Rejections[i].Line, st.Rejections[i].Reason, want)
				}
			}
			for _, c := range cities {
				if strings.ContainsAny(c.Name+c.Country+c.Subcountry, "\r\ufeff") || c.Slug == "" {
					t.Errorf("city %+v keeps a CR or BOM, or has no slug", c)
				}
			}
		})
	}
}

func TestOKFNReaderKeepsFieldsApart(t *testing.T) {
	cities, _ := mustReadFile(t, search.Small, filepath.Join("testdata", "okfn-bom-crlf.csv"), importer.ReaderOptions{})
	want := []search.City{
		{Name: "Tirana", Slug: "tirana", Country: "Albania", CountryCode: "al", Subcountry: "Tirana", ID: 3183875},
		{Name: "Seoul", Slug: "seoul", Country: "South Korea", CountryCode: "kr", Subcountry: "Seoul", ID: 1835848},
		{Name: "Washington, D.C.", Slug: "washington-d-c", Country: "United States", CountryCode: "us", Subcountry: "Washington, D.C.", ID: 4140963},
		{Name: "İstanbul", Slug: "istanbul", Country: "Türkiye", CountryCode: "tr", Subcountry: "Istanbul", ID: 745044},
	}
	if !slices.EqualFunc(cities, want, func(a, b search.City) bool { return a.Equal(&b) }) {
		t.Errorf("cities =\n%+v\nwant\n%+v", cities, want)
	}
	malformed, _ := mustReadFile(t, search.Small, filepath.Join("testdata", "okfn-malformed.csv"), importer.ReaderOptions{})
	if k := findCity(t, malformed, "Korçë"); k.ID != 0 {
		t.Errorf("Korçë has ID %d, want 0 for an empty geonameid", k.ID)
	}
}

func TestOKFNReaderStrictStopsAtFirstMalformedRow(t *testing.T) {
	in, err := importer.Open(filepath.Join("testdata", "okfn-malformed.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r, err := importer.NewOKFNReader(in, importer.ReaderOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	// The rows before the bad one come first, the error next.
	if cities, err := r.ReadBatch(nil); err != nil || !slices.Equal(names(cities), []string{"Tirana"}) {
		t.Fatalf("first batch = %q, %v; want Tirana", names(cities), err)
	}
	_, err = r.ReadBatch(nil)
	mustRowError(t, err, 3)
	if want := "malformed row: line 3: wrong number of fields (3, want 4)"; err.Error() != want {
		t.Errorf("err = %q, want %q", err, want)
	}
}

func TestOKFNReaderChecksTheHeader(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		wantErr string // "" when the header is fine
	}{
		{"exact", "name,country,subcountry,geonameid\n", ""},
		{"case and spaces differ", " Name , COUNTRY,subcountry,GeonameID\r\n", ""},
		{"other columns", "city,country,region,id\nTirana,Albania,Tirana,1\n", `unexpected header "city,country,region,id", want the okfn world-cities header "name,country,subcountry,geonameid"`},
		{"a MaxMind file", "Country,City,AccentCity,Region,Population,Latitude,Longitude\n", "want the okfn world-cities header"},
		{"empty file", "", `empty file, want the okfn world-cities header "name,country,subcountry,geonameid"`},
		{"broken quoting", "\"name,country\n", "want the okfn world-cities header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := importer.NewOKFNReader(strings.NewReader(tt.data), importer.ReaderOptions{})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.ReadBatch(nil); !errors.Is(err, io.EOF) {
					t.Fatalf("ReadBatch after a lone header = %v, want io.EOF", err)
				}
				return
			}
			if !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrHeader saying %q", err, tt.wantErr)
			}
		})
	}
}

func TestOKFNReaderKeepsQuotesWithinTheirLine(t *testing.T) {
	const header = "name,country,subcountry,geonameid\n"
	tests := []struct {
		name       string
		rows       string
		wantNames  []string
		wantLines  []int
		wantReason string // of the first rejection
	}{
		{
			name:       "an unclosed quote in the middle",
			rows:       "Tirana,Albania,Tirana,1\n\"Bad Town,France,Ile,123\nParis,France,Ile-de-France,2\n\"Mianzhu, Deyang, Sichuan\",China,Sichuan,3\n",
			wantNames:  []string{"Tirana", "Paris", "Mianzhu, Deyang, Sichuan"},
			wantLines:  []int{3},
			wantReason: `extraneous or missing " in quoted-field`,
		},
		{
			name:       "an unclosed quote on the last line",
			rows:       "Tirana,Albania,Tirana,1\nBad,\"France,Ile,123",
			wantNames:  []string{"Tirana"},
			wantLines:  []int{3},
			wantReason: `extraneous or missing " in quoted-field`,
		},
		{
			name:       "an unclosed quote with CRLF",
			rows:       "Tirana,Albania,Tirana,1\r\nBad,\"France\r\nParis,France,Ile-de-France,2\r\n",
			wantNames:  []string{"Tirana", "Paris"},
			wantLines:  []int{3},
			wantReason: `extraneous or missing " in quoted-field`,
		},
		{
			name:      "quoted fields with commas, quotes and CRLF",
			rows:      "\"Washington, D.C.\",United States,\"Washington, D.C.\",4140963\r\n\"The \"\"Big\"\" Town\",\"Korea, Republic of\",\"\",5\r\n",
			wantNames: []string{"Washington, D.C.", `The "Big" Town`},
		},
		{
			name:       "text after a closing quote",
			rows:       "\"Bad\"x,France,Ile,1\nParis,France,Ile-de-France,2\n",
			wantNames:  []string{"Paris"},
			wantLines:  []int{2},
			wantReason: `extraneous or missing " in quoted-field`,
		},
		{
			name:       "a quote inside an unquoted field",
			rows:       "Lezh\"ë,Albania,Lezhë,1\nParis,France,Ile-de-France,2\n",
			wantNames:  []string{"Paris"},
			wantLines:  []int{2},
			wantReason: `bare " in non-quoted-field`,
		},
		{
			name:      "a field split over two lines is two bad rows",
			rows:      "Berat,Albania,\"Berat\nCounty\",3344947\nParis,France,Ile-de-France,2\n",
			wantNames: []string{"Paris"},
			wantLines: []int{2, 3},
		},
		{
			name:      "a line of quotes",
			rows:      strings.Repeat(`"`, 1001) + "\nParis,France,Ile-de-France,2\n",
			wantNames: []string{"Paris"},
			wantLines: []int{2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cities, st := mustReadString(t, search.Small, header+tt.rows)
			if got := names(cities); !slices.Equal(got, tt.wantNames) {
				t.Errorf("names = %q, want %q", got, tt.wantNames)
			}
			if st.Rows != len(tt.wantNames)+len(tt.wantLines) || !slices.Equal(lines(st.Rejections), tt.wantLines) {
				t.Errorf("%d rows, rejections %v; want lines %v", st.Rows, st.Rejections, tt.wantLines)
			}
			if tt.wantReason != "" && (len(st.Rejections) == 0 || st.Rejections[0].Reason != tt.wantReason) {
				t.Errorf("rejections %v, want the first saying %q", st.Rejections, tt.wantReason)
			}
		})
	}
}

// A stray quote in the real file rejects its own line only: every other row
// is kept (it once swallowed the rest of the file).
func TestOKFNReaderSurvivesAStrayQuoteInTheSharedFile(t *testing.T) {
	data, err := os.ReadFile(datasetPath(t, "world-cities.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// The recipe: the first three lines, a bad line, then the remaining
	// lines without the ones that hold a quote.
	all := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	for _, l := range all[:3] {
		b.WriteString(l)
	}
	b.WriteString("\"Bad Town,France,Ile,123\n")
	good := 2
	for _, l := range all[3:] {
		if l != "" && !strings.Contains(l, `"`) {
			b.WriteString(l)
			good++
		}
	}
	cities, st := mustReadString(t, search.Small, b.String())
	if len(cities) != good || st.Rows != good+1 || st.Rejected != 1 || st.Rejections[0].Line != 4 {
		t.Fatalf("read %d cities of %d rows, rejections %v; want %d cities and line 4 rejected", len(cities), st.Rows, st.Rejections, good)
	}
	if last := cities[len(cities)-1]; last.Name != "Harare Western Suburbs" || last.Country != "Zimbabwe" {
		t.Errorf("last city = %+v, want the file's last row", last)
	}
}
