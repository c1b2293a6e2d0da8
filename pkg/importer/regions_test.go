package importer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// regionsOKFN names the regions of a few places of regionsDump, as the
// okfn file does: the Democratic Republic of the Congo split its province
// 04 in 2015, so its cities there disagree.
const regionsOKFN = "name,country,subcountry,geonameid\n" +
	"Tokyo,Japan,Tokyo,1\n" +
	"Hachiōji,Japan,Tokyo,2\n" +
	"Yokohama,Japan,Kanagawa,3\n" +
	"Mbuji-Mayi,\"Congo, The Democratic Republic of the\",Kasai-Oriental,11\n" +
	"Kabinda,\"Congo, The Democratic Republic of the\",Lomami,12\n" +
	"Mwene-Ditu,\"Congo, The Democratic Republic of the\",Lomami,13\n" +
	"Lodja,\"Congo, The Democratic Republic of the\",Sankuru,14\n" +
	"London,United Kingdom,England,20\n" +
	"Belgrade,Serbia,Central Serbia,30\n" +
	"Singapore,Singapore,,40\n"

// regionsDump holds the places of regionsOKFN, with their codes, and others.
var regionsDump = func() string {
	var b strings.Builder
	for _, p := range []struct{ id, name, country, admin1, lat, lon string }{
		{"1", "Tokyo", "JP", "40", "35.69", "139.69"},
		{"2", "Hachioji", "JP", "40", "35.66", "139.33"},
		{"3", "Yokohama", "JP", "19", "35.44", "139.64"},
		{"4", "Fuchu", "JP", "40", "35.67", "139.48"},
		{"11", "Mbuji-Mayi", "CD", "04", "-6.14", "23.6"},
		{"12", "Kabinda", "CD", "04", "-6.13", "24.48"},
		{"13", "Mwene-Ditu", "CD", "04", "-7", "23.45"},
		{"14", "Lodja", "CD", "04", "-3.49", "23.42"},
		{"15", "Tshilenge", "CD", "04", "-6.25", "23.77"},
		{"20", "London", "GB", "ENG", "51.51", "-0.13"},
		{"21", "Oxford", "GB", "ENG", "51.75", "-1.26"},
		{"30", "Belgrade", "RS", "00", "44.8", "20.47"},
		{"31", "Zemun", "RS", "00", "44.84", "20.4"},
		{"40", "Singapore", "SG", "00", "1.29", "103.85"},
	} {
		b.WriteString(kolnRow().with("geonameid", p.id).with("name", p.name).with("asciiname", p.name).with("alternatenames", "").
			with("country code", p.country).with("admin1 code", p.admin1).with("latitude", p.lat).with("longitude", p.lon).String())
	}
	return b.String()
}()

func mustSubcountries(tb testing.TB, okfn string) *importer.Subcountries {
	tb.Helper()
	s, err := importer.ReadSubcountries(strings.NewReader(okfn))
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// A division takes the name its okfn cities agree on; an okfn city keeps
// its own; unknown codes name nothing.
func TestRegionNames(t *testing.T) {
	subs := mustSubcountries(t, regionsOKFN)
	if subs.Len() != 9 {
		t.Errorf("%d subcountries, want 9 (Singapore has none)", subs.Len())
	}
	g, err := importer.ReadGazetteer(strings.NewReader(regionsDump))
	if err != nil {
		t.Fatal(err)
	}
	names := g.RegionNames(subs)
	if names.Len() != 3 {
		t.Errorf("%d divisions named, want 3: JP 40, JP 19, GB ENG", names.Len())
	}
	for _, tc := range []struct {
		id              uint32
		country, admin1 string
		want            string
	}{
		{0, "jp", "40", "Tokyo"},
		{4, "jp", "40", "Tokyo"}, // Fuchū is no okfn city
		{3, "jp", "19", "Kanagawa"},
		{0, "gb", "ENG", "England"},
		{0, "cd", "04", ""},                // two of four say Lomami
		{11, "cd", "04", "Kasai-Oriental"}, // as the okfn file says
		{0, "rs", "00", ""},
		{30, "rs", "00", "Central Serbia"},
		{40, "sg", "00", ""},
		{0, "jp", "99", ""},
		{0, "", "40", ""},
	} {
		if got := names.Name(tc.id, tc.country, tc.admin1); got != tc.want {
			t.Errorf("Name(%d, %q, %q) = %q, want %q", tc.id, tc.country, tc.admin1, got, tc.want)
		}
	}
}

func TestOpenSubcountriesFailsOnBadFiles(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "world-cities.csv")
	if _, err := importer.OpenSubcountries(missing); err == nil || !strings.Contains(err.Error(), "okfn file "+missing+": ") {
		t.Errorf("a missing file: err = %v, want one naming it", err)
	}
	maxmind := writeTemp(t, "worldcitiespop.txt", maxmindHeader+"ad,x,X,07,,1,1\n")
	if _, err := importer.OpenSubcountries(maxmind); !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), maxmind) {
		t.Errorf("a MaxMind file: err = %v, want ErrHeader naming it", err)
	}
	garbage := writeTemp(t, "world-cities.csv", "name,country,subcountry,geonameid\n"+strings.Repeat("a,b\n", 10))
	if _, err := importer.OpenSubcountries(garbage); !errors.Is(err, importer.ErrMalformedRow) {
		t.Errorf("a file of malformed rows: err = %v, want ErrMalformedRow", err)
	}
}

func writeTemp(tb testing.TB, name, content string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// recordingStore is a memory store that also keeps the cities of its last
// Load as the import handed them over, in order, and holds the import's
// reader to the contract of search.CityReader. It embeds the memory store
// itself, not a search.Store, so it has every method of one.
type recordingStore struct {
	*memory.Store
	tb     testing.TB
	cities []search.City
}

func newRecordingStore(tb testing.TB) *recordingStore {
	return &recordingStore{Store: memory.New(), tb: tb}
}

func (s *recordingStore) Load(ctx context.Context, d search.Dataset, r search.CityReader, opts search.LoadOptions) (search.LoadStats, error) {
	rec := &recordingReader{tb: s.tb, r: r}
	stats, err := s.Store.Load(ctx, d, rec, opts)
	s.cities = rec.cities
	return stats, err
}

// recordingReader keeps a copy of the cities it passes on, and checks that
// each batch has a city or more, or else an error.
type recordingReader struct {
	tb     testing.TB
	r      search.CityReader
	cities []search.City
}

func (r *recordingReader) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	dst, err := r.r.ReadBatch(dst)
	if (err == nil) != (len(dst) > n) {
		r.tb.Errorf("the import's reader handed over %d cities, error %v: want some or an error", len(dst)-n, err)
	}
	r.cities = append(r.cities, dst[n:]...)
	return dst, err
}

// regions is what a test checks of imported cities: name, region code and
// region name.
func regions(cities []search.City) []string {
	var out []string
	for _, c := range cities {
		out = append(out, c.Name+"|"+c.Region+"|"+c.Subcountry)
	}
	return out
}

// A GeoNames dump imported as the large dataset names its regions from its
// own codes, learnt as its rows stream past: from a file and from a stream
// alike, as the dump is read once.
func TestImportNamesTheRegionsOfAGeoNamesDump(t *testing.T) {
	path := writeTemp(t, "cities500.txt", regionsDump)
	names := importer.Source{Name: writeTemp(t, "world-cities.csv", regionsOKFN)}
	want := []string{"Tokyo|40|Tokyo", "Hachioji|40|Tokyo", "Yokohama|19|Kanagawa", "Fuchu|40|Tokyo",
		"Mbuji-Mayi|04|Kasai-Oriental", "Kabinda|04|Lomami", "Mwene-Ditu|04|Lomami", "Lodja|04|Sankuru", "Tshilenge|04|",
		"London|ENG|England", "Oxford|ENG|England", "Belgrade|00|Central Serbia", "Zemun|00|", "Singapore|00|"}
	for _, tc := range []struct {
		name   string
		source importer.Source
	}{
		{"file", importer.Source{Name: path}},
		{"stream", importer.Source{Reader: stringsReader(regionsDump)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newRecordingStore(t)
			im := importer.Importer{Store: store}
			sum, err := im.Import(t.Context(), importer.Request{Dataset: search.Large, Source: tc.source, RegionNames: names})
			if err != nil {
				t.Fatal(err)
			}
			if got := regions(store.cities); !slices.Equal(got, want) {
				t.Errorf("cities\n%q\nwant\n%q", got, want)
			}
			if sum.Format != importer.FormatGeoNames || sum.Regions != 3 || sum.Named != 11 || !strings.Contains(sum.String(), ", 11 with region names)") {
				t.Errorf("summary %v: format %s, %d regions, %d named; want geonames, 3, 11", sum, sum.Format, sum.Regions, sum.Named)
			}
		})
	}

	// The cities held back until their regions are named come out as they
	// went in, but for their Subcountry.
	plain, named := newRecordingStore(t), newRecordingStore(t)
	dump := kolnRow().String() + kolnRow().with("geonameid", "2").with("alternatenames", "").with("population", "").String() +
		kolnRow().with("geonameid", "3").with("name", "Bonn").with("latitude", "-50.7").with("country code", "").String()
	for _, s := range []*recordingStore{plain, named} {
		req := importer.Request{Dataset: search.Large, Source: importer.Source{Reader: strings.NewReader(dump)}}
		if s == named {
			req.RegionNames = importer.Source{Reader: strings.NewReader("name,country,subcountry,geonameid\nKöln,Germany,North Rhine-Westphalia,2886242\n")}
		}
		if _, err := (&importer.Importer{Store: s}).Import(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	for i := range plain.cities {
		want := plain.cities[i]
		if want.CountryCode == "de" && want.Region == "07" {
			want.Subcountry = "North Rhine-Westphalia"
		}
		if i >= len(named.cities) || !named.cities[i].Equal(&want) {
			t.Errorf("city %d: %+v, want %+v", i, named.cities[min(i, len(named.cities)-1)], want)
		}
	}
}

// A MaxMind file's codes are not always GeoNames': its cities joined with a
// GeoNames place tell what the others of their code are called.
func TestImportNamesTheRegionsOfAMaxMindFile(t *testing.T) {
	path := writeTemp(t, "worldcitiespop.txt", maxmindHeader+
		"gb,barnet,Barnet,Q6,,51.65,-0.2\n"+ // before the city that tells what Q6 is
		"gb,london,London,Q6,7556900,51.51,-0.13\n"+
		"gb,oxford,Oxford,Q6,,51.75,-1.26\n"+
		"gb,cardiff,Cardiff,Z1,,51.48,-3.18\n"+ // nobody tells
		"jp,fuchu,Fuchu,40,,35.67,139.48\n"+
		"jp,kodaira,Kodaira,40,,35.73,139.48\n"+ // no GeoNames place, a GeoNames code
		"rs,belgrade,Belgrade,00,,44.8,20.47\n"+
		"rs,novi beograd,Novi Beograd,00,,44.81,20.42\n")
	names := importer.Source{Name: writeTemp(t, "world-cities.csv", regionsOKFN)}
	geonames := importer.Source{Name: writeTemp(t, "cities500.txt", regionsDump)}
	store := newRecordingStore(t)
	sum, err := importFile(t.Context(), store, path, importer.Request{Dataset: search.Large, RegionNames: names, GeoNames: geonames})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Barnet|Q6|England", "London|Q6|England", "Oxford|Q6|England", "Cardiff|Z1|",
		"Fuchu|40|Tokyo", "Kodaira|40|Tokyo", "Belgrade|00|Central Serbia", "Novi Beograd|00|"}
	if got := regions(store.cities); !slices.Equal(got, want) {
		t.Errorf("cities\n%q\nwant\n%q", got, want)
	}
	if sum.Format != importer.FormatMaxMind || sum.Regions != 3 || sum.Named != 6 || sum.Enriched != 4 {
		t.Errorf("summary %v: format %s, %d regions; want maxmind, 3 regions, 6 named, 4 enriched", sum, sum.Format, sum.Regions)
	}

	// Without GeoNames places nothing tells what MaxMind's codes are: the
	// region names are not read, and a warning says so.
	names.Name = filepath.Join(t.TempDir(), "missing.csv")
	sum, err = importFile(t.Context(), store, path, importer.Request{Dataset: search.Large, RegionNames: names})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Regions != 0 || sum.Named != 0 || store.cities[1].Subcountry != "" {
		t.Errorf("without GeoNames: %d regions, %d named (%+v), want none", sum.Regions, sum.Named, store.cities[1])
	}
	var ie *importer.InputError
	if len(sum.Warnings) != 1 || !errors.As(sum.Warnings[0], &ie) || ie.Role != importer.RoleRegionNames || !errors.Is(ie, importer.ErrUnusedInput) {
		t.Errorf("warnings %v, want one that the region names were of no use", sum.Warnings)
	}
}

// The large dataset's real sources: most cities get a region name, and the
// big ones the right one.
func TestImportNamesTheRegionsOfTheSharedFiles(t *testing.T) {
	names := importer.Source{Name: datasetPath(t, "world-cities.csv")}
	geonames := importer.Source{Name: datasetPath(t, "geonames-cities1000.txt.gz")}
	for _, tc := range []struct {
		file     string
		geonames importer.Source
		share    float64
		want     []string
	}{
		{"geonames-cities1000.txt.gz", importer.Source{}, 0.97, []string{"Tokyo|40|Tokyo", "London|ENG|England", "Zürich|ZH|Zurich"}},
		{"worldcitiespop-100k.txt.gz", geonames, 0.94, []string{"Tokyo|40|Tokyo", "London|Q6|England", "Zürich|ZH|Zurich"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			store := newRecordingStore(t)
			sum, err := importFile(t.Context(), store, datasetPath(t, tc.file), importer.Request{Dataset: search.Large, RegionNames: names, GeoNames: tc.geonames})
			if err != nil {
				t.Fatal(err)
			}
			if share := float64(sum.Named) / float64(len(store.cities)); share < tc.share {
				t.Errorf("%d of %d cities named (%.1f%%), want %.0f%% at least", sum.Named, len(store.cities), 100*share, 100*tc.share)
			}
			got := regions(store.cities)
			for _, w := range tc.want {
				if !slices.Contains(got, w) {
					t.Errorf("no city %s (name|code|region)", w)
				}
			}
		})
	}
}
