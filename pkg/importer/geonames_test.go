package importer_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// gnRow is a GeoNames row, column by column.
type gnRow [19]string

// kolnRow is Köln's row, its alternate names cut short and spaced as the
// real file spaces some.
func kolnRow() gnRow {
	return gnRow{"2886242", "Köln", "Koeln", "Cologne, Colonia,,Кёльн,Cologne,ケルン ", "50.93333", "6.95", "P", "PPLA2", "DE", "",
		"07", "053", "05315", "05315000", "963395", "", "58", "Europe/Berlin", "2013-03-06"}
}

// with returns the row with its column col (named as in the dump's readme)
// set to v.
func (r gnRow) with(col, v string) gnRow {
	i := slices.Index(importer.GeoNamesColumns, col)
	if i < 0 {
		panic("no GeoNames column " + col)
	}
	r[i] = v
	return r
}

// String is the row as a line of a dump, with its newline.
func (r gnRow) String() string { return strings.Join(r[:], "\t") + "\n" }

// first is the row's first n columns, tab-separated, without a newline.
func (r gnRow) first(n int) string { return strings.Join(r[:n], "\t") }

// mustReadPlaces reads every place of a GeoNames file, gzip, zip or plain.
func mustReadPlaces(tb testing.TB, path string, opts importer.ReaderOptions) ([]importer.Place, importer.ReadStats) {
	tb.Helper()
	in, err := importer.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	return mustReadPlacesFrom(tb, in, opts)
}

func mustReadPlacesFrom(tb testing.TB, r io.Reader, opts importer.ReaderOptions) ([]importer.Place, importer.ReadStats) {
	tb.Helper()
	gr, err := importer.NewGeoNamesReader(r, opts)
	if err != nil {
		tb.Fatal(err)
	}
	var places []importer.Place
	for {
		var err error
		places, err = gr.ReadBatch(places)
		if errors.Is(err, io.EOF) {
			return places, gr.Stats()
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
}

func findPlace(tb testing.TB, places []importer.Place, id uint32) importer.Place {
	tb.Helper()
	return findFirst(tb, places, fmt.Sprintf("place %d", id), func(p *importer.Place) bool { return p.ID == id })
}

// mustBeTidy fails unless a place holds what Place promises.
func mustBeTidy(tb testing.TB, p importer.Place) {
	tb.Helper()
	if p.ID == 0 || p.Name == "" || search.Slug(p.Name) == "" || strings.TrimSpace(p.Name) != p.Name {
		tb.Fatalf("place %+v: no id or no usable name", p)
	}
	if p.CountryCode != "" && (len(p.CountryCode) != 2 || strings.ToLower(p.CountryCode) != p.CountryCode) {
		tb.Fatalf("place %+v: country code not two lower-case letters", p)
	}
	if p.Lat < -90 || p.Lat > 90 || p.Lon < -180 || p.Lon > 180 || p.Population < 0 {
		tb.Fatalf("place %+v: out of range", p)
	}
	seen := make(map[string]bool)
	for _, s := range append([]string{p.Name, p.ASCIIName, p.FeatureClass, p.FeatureCode, p.Admin1}, p.AlternateNames...) {
		if !utf8.ValidString(s) {
			tb.Fatalf("place %+v: invalid UTF-8 %q", p, s)
		}
	}
	for _, a := range p.AlternateNames {
		if a == "" || strings.TrimSpace(a) != a || seen[a] || len(a) > importer.MaxField {
			tb.Fatalf("place %d: alternate name %q empty, untrimmed, repeated or too long in %q", p.ID, a, p.AlternateNames)
		}
		seen[a] = true
	}
}

func TestGeoNamesReaderReadsTheSharedFile(t *testing.T) {
	places, st := mustReadPlaces(t, datasetPath(t, "geonames-cities1000.txt.gz"), importer.ReaderOptions{})
	if st.Rows != 138398 || st.Rejected != 0 || len(places) != 138398 {
		t.Fatalf("read %d rows, %d places, %d rejected %v; want 138,398 rows, all good", st.Rows, len(places), st.Rejected, st.Rejections)
	}
	alternates := 0
	for _, p := range places {
		mustBeTidy(t, p)
		alternates += len(p.AlternateNames)
	}
	// The file has 466,572 comma-separated entries; trimmed, without the
	// empty one and the repeats within a row, 466,221 remain (counted
	// with Python's str.strip).
	if alternates != 466221 {
		t.Errorf("%d alternate names, want 466,221", alternates)
	}

	koln := findPlace(t, places, 2886242)
	if koln.Name != "Köln" || koln.ASCIIName != "Koeln" || koln.CountryCode != "de" || koln.Admin1 != "07" ||
		koln.Population != 963395 || koln.Lat != 50.93333 || koln.Lon != 6.95 || koln.FeatureClass != "P" || koln.FeatureCode != "PPLA2" {
		t.Errorf("Köln = %+v", koln)
	}
	if !slices.Contains(koln.AlternateNames, "Cologne") || !slices.Contains(koln.AlternateNames, "Кёльн") || len(koln.AlternateNames) != 80 {
		t.Errorf("Köln's %d alternate names %q, want 80 with Cologne and Кёльн", len(koln.AlternateNames), koln.AlternateNames)
	}
	tokyo := findPlace(t, places, 1850147)
	if tokyo.Name != "Tokyo" || tokyo.CountryCode != "jp" || tokyo.FeatureCode != "PPLC" || !slices.Contains(tokyo.AlternateNames, "東京") {
		t.Errorf("Tokyo = %+v", tokyo)
	}
	if p := findPlace(t, places, 3039163); p.Name != "Sant Julià de Lòria" || p.ASCIIName != "Sant Julia de Loria" {
		t.Errorf("Sant Julià de Lòria = %+v", p)
	}
}

func TestGeoNamesReaderSplitsAlternateNames(t *testing.T) {
	tests := []struct {
		name  string
		field string
		want  []string
	}{
		{"none", "", nil},
		{"only commas and spaces", " , ,, ", nil},
		{"one", "Cologne", []string{"Cologne"}},
		{"trimmed and empty ones dropped", " Cologne ,,Colonia ,", []string{"Cologne", "Colonia"}},
		{"repeats dropped, first order kept", "b,a,b, a,c", []string{"b", "a", "c"}},
		{"case matters", "Koln,koln", []string{"Koln", "koln"}},
		{"every script", "Кёльн,ケルン,科隆,쾰른", []string{"Кёльн", "ケルン", "科隆", "쾰른"}},
		{"many repeats", strings.Repeat("x,y,", 500) + "z", []string{"x", "y", "z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			places, st := mustReadPlacesFrom(t, stringsReader(kolnRow().with("alternatenames", tt.field).String()), importer.ReaderOptions{})
			if len(places) != 1 || st.Rejected != 0 {
				t.Fatalf("read %d places, rejections %v", len(places), st.Rejections)
			}
			if got := places[0].AlternateNames; !slices.Equal(got, tt.want) || (tt.want == nil) != (got == nil) {
				t.Errorf("alternate names = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestGeoNamesReaderRejectsMalformedRows(t *testing.T) {
	tests := []struct {
		name       string
		line       string
		wantReason string
	}{
		{"a field missing", kolnRow().first(18) + "\n", "wrong number of fields (18, want 19)"},
		{"a field too many", kolnRow().first(19) + "\tx\n", "wrong number of fields (20, want 19)"},
		{"a CSV line", "Tirana,Albania,Tirana,3183875\n", "wrong number of fields (1, want 19)"},
		{"a word for an id", kolnRow().with("geonameid", "abc").String(), `invalid geonameid "abc"`},
		{"id 0", kolnRow().with("geonameid", "0").String(), `invalid geonameid "0"`},
		{"a negative id", kolnRow().with("geonameid", "-1").String(), `invalid geonameid "-1"`},
		{"an id over 32 bits", kolnRow().with("geonameid", "4294967296").String(), `invalid geonameid "4294967296"`},
		{"empty name", kolnRow().with("name", " ").String(), "empty name"},
		{"a name without letters", kolnRow().with("name", "---").String(), `name "---" has no letters or digits`},
		{"invalid UTF-8", kolnRow().with("asciiname", "K\xf6ln").String(), `invalid UTF-8 in asciiname "K\xf6ln"`},
		{"latitude over 90", kolnRow().with("latitude", "90.5").String(), `invalid latitude "90.5"`},
		{"latitude a word", kolnRow().with("latitude", "north").String(), `invalid latitude "north"`},
		{"latitude empty", kolnRow().with("latitude", "").String(), `invalid latitude ""`},
		// Plain decimals only: strconv.ParseFloat reads these as 16 and 10.
		{"latitude in hexadecimal", kolnRow().with("latitude", "0x1p4").String(), `invalid latitude "0x1p4"`},
		{"longitude with an underscore", kolnRow().with("longitude", "1_0").String(), `invalid longitude "1_0"`},
		{"latitude with an exponent", kolnRow().with("latitude", "5e1").String(), `invalid latitude "5e1"`},
		{"longitude NaN", kolnRow().with("longitude", "NaN").String(), `invalid longitude "NaN"`},
		{"longitude over 180", kolnRow().with("longitude", "-180.01").String(), `invalid longitude "-180.01"`},
		{"negative population", kolnRow().with("population", "-5").String(), `invalid population "-5"`},
		{"population with a unit", kolnRow().with("population", "12k").String(), `invalid population "12k"`},
		{"population as a float", kolnRow().with("population", "1e3").String(), `invalid population "1e3"`},
		{"a three-letter country", kolnRow().with("country code", "DEU").String(), `invalid country code "DEU"`},
		{"a digit in the country", kolnRow().with("country code", "D1").String(), `invalid country code "D1"`},
		{"an alternate name too long", kolnRow().with("alternatenames", "a,"+strings.Repeat("b", importer.MaxField+1)).String(), "alternate name longer than 1024 bytes"},
		{"a field too long", kolnRow().with("asciiname", strings.Repeat("b", importer.MaxField+1)).String(), "asciiname longer than 1024 bytes"},
		{"a line too long", kolnRow().with("alternatenames", strings.Repeat("b,", importer.MaxLine)).String(), "line longer than 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := kolnRow().String() + "\n" + tt.line + kolnRow().with("geonameid", "1").String()
			places, st := mustReadPlacesFrom(t, stringsReader(data), importer.ReaderOptions{})
			if len(places) != 2 || places[1].ID != 1 {
				t.Fatalf("read %d places, want Köln and the row after the bad one", len(places))
			}
			if st.Rows != 3 || st.Rejected != 1 || st.Rejections[0].Line != 3 || !strings.Contains(st.Rejections[0].Reason, tt.wantReason) {
				t.Fatalf("%d rows, rejections %.300q; want line 3 saying %q", st.Rows, st.Rejections, tt.wantReason)
			}
			mustBeShortAndSafe(t, st.Rejections[0].Error())

			gr, err := importer.NewGeoNamesReader(stringsReader(data), importer.ReaderOptions{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			// The row before the bad one comes first, the error next.
			if places, err := gr.ReadBatch(nil); err != nil || len(places) != 1 {
				t.Fatalf("first batch: %d places, %v; want Köln alone", len(places), err)
			}
			_, err = gr.ReadBatch(nil)
			mustRowError(t, err, 3)
		})
	}
}

func TestGeoNamesReaderReadsOptionalColumnsEmpty(t *testing.T) {
	row := kolnRow()
	for _, col := range []string{"population", "country code", "asciiname", "feature class", "feature code", "admin1 code"} {
		row = row.with(col, "")
	}
	places, st := mustReadPlacesFrom(t, stringsReader(row.String()), importer.ReaderOptions{})
	if st.Rejected != 0 || len(places) != 1 {
		t.Fatalf("rejections %v", st.Rejections)
	}
	p := places[0]
	if p.Population != 0 || p.CountryCode != "" || p.ASCIIName != "" || p.FeatureClass != "" || p.Admin1 != "" {
		t.Errorf("place = %+v, want the empty columns empty", p)
	}
	if c := p.City(); c.Country != "" || c.CountryCode != "" || c.Population != 0 {
		t.Errorf("city = %+v, want no country and no population", c)
	}
}

func TestNewGeoNamesReaderChecksTheFirstLine(t *testing.T) {
	tests := []struct {
		name, data, wantErr string
	}{
		{"empty file", "", "empty file, want a GeoNames row"},
		{"blank lines only", "\n\r\n", "empty file"},
		{"an okfn file", "name,country,subcountry,geonameid\nTirana,Albania,Tirana,3183875\n", `the first line "name,country,subcountry,geonameid", want a GeoNames row (19 tab-separated fields, a numeric id first)`},
		{"a MaxMind file", maxmindHeader, "want a GeoNames row"},
		{"a row with a word for id", kolnRow().with("geonameid", "id").String(), "want a GeoNames row"},
		{"a tab-separated header", strings.Join(make([]string, 19), "geonameid\t") + "\n", "want a GeoNames row"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := importer.NewGeoNamesReader(strings.NewReader(tt.data), importer.ReaderOptions{})
			if !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want ErrHeader saying %q", err, tt.wantErr)
			}
		})
	}
	// Blank lines before the first row are skipped and still counted.
	places, st := mustReadPlacesFrom(t, strings.NewReader("\n\n"+kolnRow().String()+"x\n"), importer.ReaderOptions{})
	if len(places) != 1 || st.Rows != 2 || !slices.Equal(lines(st.Rejections), []int{4}) {
		t.Errorf("read %d places, %d rows, rejections %v; want Köln, then line 4 rejected", len(places), st.Rows, st.Rejections)
	}
}

func TestPlaceCity(t *testing.T) {
	tests := []struct {
		name  string
		place importer.Place
		want  search.City
	}{
		{
			name: "Köln",
			place: importer.Place{ID: 2886242, Name: "Köln", ASCIIName: "Koeln", AlternateNames: []string{"Cologne"}, Lat: 50.93333, Lon: 6.95,
				FeatureClass: "P", FeatureCode: "PPLA2", CountryCode: "de", Admin1: "07", Population: 963395},
			want: search.City{ID: 2886242, Name: "Köln", Slug: "koln", Country: "Germany", CountryCode: "de", Region: "07",
				Population: 963395, Lat: 50.93333, Lon: 6.95, HasLocation: true, AltNames: []string{"Koeln", "Cologne"}},
		},
		{
			name:  "a code x/text cannot name",
			place: importer.Place{ID: 1, Name: "Foo", CountryCode: "qq"},
			want:  search.City{ID: 1, Name: "Foo", Slug: "foo", Country: "qq", CountryCode: "qq", HasLocation: true},
		},
		{
			name:  "Kosovo",
			place: importer.Place{ID: 786714, Name: "Pristina", CountryCode: "xk", Admin1: "03", Lat: 42.67272, Lon: 21.16688},
			want:  search.City{ID: 786714, Name: "Pristina", Slug: "pristina", Country: "Kosovo", CountryCode: "xk", Region: "03", Lat: 42.67272, Lon: 21.16688, HasLocation: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.place.City(); !got.Equal(&tt.want) {
				t.Errorf("City() = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestGeoNamesCityReaderNamesCountriesAsPlaceCityDoes(t *testing.T) {
	data := kolnRow().String() + kolnRow().with("geonameid", "2").with("country code", "QQ").String() + kolnRow().with("geonameid", "3").with("country code", "jp").String()
	places, _ := mustReadPlacesFrom(t, strings.NewReader(data), importer.ReaderOptions{})
	cr, err := importer.NewGeoNamesCityReader(strings.NewReader(data), importer.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cities, err := search.ReadAll(cr)
	if err != nil {
		t.Fatal(err)
	}
	if len(cities) != len(places) {
		t.Fatalf("%d cities from %d places", len(cities), len(places))
	}
	for i := range places {
		if want := places[i].City(); !cities[i].Equal(&want) {
			t.Errorf("city %d = %+v, want %+v", i, cities[i], want)
		}
	}
	if st := cr.Stats(); st.Rows != 3 || st.UnknownCountries != 1 || !slices.Equal(st.UnknownCodes, []string{"qq"}) {
		t.Errorf("stats = %+v, want 3 rows, one with the unknown code qq", st)
	}
}

// mustZip writes an archive holding files (name → content, in order; a
// nil content is a directory) and returns its path.
func mustZip(tb testing.TB, name string, method uint16, files ...string) string {
	tb.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: files[i], Method: method})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := io.WriteString(w, files[i+1]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return mustWriteFile(tb, name, b.Bytes())
}

func TestOpenReadsZipArchives(t *testing.T) {
	dump := kolnRow().String() + kolnRow().with("geonameid", "2").with("name", "Zwei").String()
	tests := []struct {
		name       string
		path       func(t *testing.T) string
		wantMember string
	}{
		{"the member named like the archive", func(t *testing.T) string {
			return mustZip(t, "cities500.zip", zip.Deflate, "readme.txt", "not data", "cities500.txt", dump)
		}, "cities500.txt"},
		{"the only .txt member, whatever the archive's name", func(t *testing.T) string {
			return mustZip(t, "download.tmp", zip.Deflate, "dir/", "", "cities15000.txt", dump, "notes.md", "x")
		}, "cities15000.txt"},
		{"a stored member", func(t *testing.T) string {
			return mustZip(t, "allCountries.zip", zip.Store, "allCountries.txt", dump)
		}, "allCountries.txt"},
		{"a member in a folder, any case", func(t *testing.T) string {
			return mustZip(t, "DE.zip", zip.Deflate, "readme.txt", "x", "export/de.TXT", dump)
		}, "export/de.TXT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			in, err := importer.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.Member() != tt.wantMember || in.Gzipped() {
				t.Errorf("Member() = %q, Gzipped() = %v; want %q, false", in.Member(), in.Gzipped(), tt.wantMember)
			}
			if f, err := in.Format(); err != nil || f != importer.FormatGeoNames {
				t.Errorf("Format() = %q, %v; want geonames", f, err)
			}
			places, st := mustReadPlacesFrom(t, in, importer.ReaderOptions{})
			if len(places) != 2 || places[1].Name != "Zwei" || st.Rejected != 0 {
				t.Errorf("read %d places (%v), want Köln and Zwei", len(places), st.Rejections)
			}
			if fi, err := os.Stat(path); err != nil || in.Consumed() != fi.Size() || in.Size() != fi.Size() {
				t.Errorf("Consumed() = %d, Size() = %d at the end, want the archive's size (%v)", in.Consumed(), in.Size(), err)
			}
		})
	}
}

func TestOpenFailsOnZipArchivesWithoutOneDataMember(t *testing.T) {
	dump := kolnRow().String()
	tests := []struct {
		name    string
		path    func(t *testing.T) string
		wantErr string
	}{
		{"no .txt member", func(t *testing.T) string {
			return mustZip(t, "cities500.zip", zip.Deflate, "cities500.csv", dump)
		}, "no .txt member among its 1 files"},
		{"two .txt members, none named like the archive", func(t *testing.T) string {
			return mustZip(t, "cities500.zip", zip.Deflate, "a.txt", dump, "b.txt", dump)
		}, `2 .txt members ("a.txt", "b.txt") and none named "cities500.txt"`},
		{"an empty archive", func(t *testing.T) string {
			return mustZip(t, "x.zip", zip.Deflate, "a.csv", "")
		}, "no .txt member"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.path(t)
			in, err := importer.Open(path)
			if err == nil {
				in.Close()
				t.Fatal("Open succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want it to name the file and say %q", err, tt.wantErr)
			}
		})
	}
}

func TestZipArchiveChecksItsContent(t *testing.T) {
	path := mustZip(t, "cities500.zip", zip.Store, "cities500.txt", kolnRow().String())
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("Köln"))
	copy(data[i:], "Kolm") // same length, different checksum
	in, err := importer.NewInput(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(in); !errors.Is(err, zip.ErrChecksum) {
		t.Errorf("reading a corrupt member: %v, want zip.ErrChecksum", err)
	}
	in.Close()

	// From a stream, which cannot seek to the archive's directory, the
	// archive is read from a temporary copy, checked alike and removed.
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	in, err = importer.NewInput(io.MultiReader(bytes.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadAll(in); !errors.Is(err, zip.ErrChecksum) {
		t.Errorf("reading a corrupt member from a stream: %v, want zip.ErrChecksum", err)
	}
	if in.Size() != int64(len(data)) {
		t.Errorf("size %d of the copied archive, want %d", in.Size(), len(data))
	}
	in.Close()
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the copy of the archive is left behind: %v", left)
	}
}

func TestImportGeoNamesAsADataset(t *testing.T) {
	store := memory.New()
	dump := kolnRow().String() + kolnRow().with("geonameid", "2").with("country code", "IT").with("population", "10").String() +
		kolnRow().with("geonameid", "3").with("latitude", "x").String()
	path := mustZip(t, "cities1000.zip", zip.Deflate, "cities1000.txt", dump)
	var p recorder
	sum, err := importFile(t.Context(), store, path, importer.Request{Dataset: search.Large, Format: importer.FormatGeoNames, Progress: following(&p), AllowShrink: true}) // a third of its rows bad
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read != 3 || sum.Imported != 2 || sum.Rejected != 1 || sum.Rejections[0].Line != 3 {
		t.Errorf("summary %v, rejections %v; want 3 read, 2 imported, line 3 rejected", sum, sum.Rejections)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.bytes != fi.Size() || p.rows != 3 {
		t.Errorf("progress heard %d bytes, %d rows; want %d, 3", p.bytes, p.rows, fi.Size())
	}
	cities, err := store.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: "koln", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(cities) != 2 || cities[0].Country != "Germany" || cities[0].Population != 963395 || cities[1].Country != "Italy" {
		t.Errorf("search koln = %+v, want Köln in Germany, then Italy", cities)
	}
}

// A GeoNames dump imports its populated places with their alternate names,
// and skips its other places (allCountries has mountains, rivers …).
func TestImportGeoNamesSkipsOtherThanPopulatedPlaces(t *testing.T) {
	store := memory.New()
	dump := kolnRow().String() +
		kolnRow().with("geonameid", "2").with("name", "Kölner Bucht").with("feature class", "L").String() +
		kolnRow().with("geonameid", "3").with("name", "Rhein").with("feature class", "H").with("latitude", "x").String() +
		kolnRow().with("geonameid", "4").with("name", "Bonn").with("asciiname", "Bonn").with("alternatenames", "Bonna,BONN, ,Бонн,ボン,BN").String()
	sum, err := importStream(t.Context(), store, strings.NewReader(dump), importer.Request{Dataset: search.Large, Format: importer.FormatGeoNames, AllowShrink: true}) // a bad row of four
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read != 4 || sum.Imported != 2 || sum.Skipped != 1 || sum.Rejected != 1 ||
		!strings.Contains(sum.String(), "(1 rejected, 0 duplicates, 1 not populated places skipped)") {
		t.Errorf("summary %v, want 4 rows, 2 imported, 1 skipped, 1 rejected", sum)
	}
	found, err := store.Search(t.Context(), nil, search.Query{Dataset: search.Large, Prefix: "bonn", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	// BONN folds like Bonn; Бонн does too, but in another script (see
	// search.AltKey); BN is a code.
	if len(found) != 1 || !slices.Equal(found[0].AltNames, []string{"Bonna", "Бонн", "ボン"}) {
		t.Errorf("search bonn = %+v, want Bonn with its alternate names Bonna, Бонн and ボン", found)
	}
}

func TestImportTheSharedGeoNamesFile(t *testing.T) {
	store := memory.New()
	sum, err := importFile(t.Context(), store, datasetPath(t, "geonames-cities1000.txt.gz"),
		importer.Request{Dataset: search.Large, Format: importer.FormatGeoNames})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read != 138398 || sum.Rejected != 0 || sum.UnknownCountries != 0 || sum.Imported+sum.Duplicates != sum.Read {
		t.Errorf("summary %v (unknown codes %v), want 138,398 rows, none rejected", sum, sum.UnknownCodes)
	}
	if found := mustSearch(t, store, search.Large, "tokyo"); len(found) == 0 || found[0] != "Tokyo" {
		t.Errorf("search tokyo = %q, want Tokyo first", found)
	}
}
