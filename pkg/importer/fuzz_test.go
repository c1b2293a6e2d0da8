package importer_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// fuzzRows feeds header+rows to the format's reader and checks that it
// never panics, that every city it returns is storable, that the counts add
// up and that messages stay short and printable; and that an import's
// parallel reader reads them alike.
func fuzzRows(t *testing.T, f importer.Format, header string, rows []byte, strict bool) {
	fuzzReader(t, f, header, rows, strict, newFormatReader)
	mustReadAlike(t, f, append([]byte(header), rows...), importer.ReaderOptions{Strict: strict})
}

func fuzzReader(t *testing.T, f importer.Format, header string, rows []byte, strict bool,
	open func(importer.Format, io.Reader, importer.ReaderOptions) (rowReader, error)) {
	r, err := open(f, bytes.NewReader(append([]byte(header), rows...)), importer.ReaderOptions{Strict: strict})
	if err != nil {
		t.Fatalf("header rejected: %v", err)
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		if !strict || !errors.Is(err, importer.ErrMalformedRow) {
			t.Fatalf("ReadBatch: %v", err)
		}
		mustBeShortAndSafe(t, err.Error())
	}
	n := 0
	for _, c := range cities {
		n++
		if c.Name == "" || c.Slug == "" || c.Slug != search.Slug(c.Name) {
			t.Fatalf("city %+v has no name or a wrong slug", c)
		}
		for _, s := range []string{c.Name, c.Country, c.CountryCode, c.Subcountry, c.Region} {
			if !utf8.ValidString(s) {
				t.Fatalf("city %+v holds invalid UTF-8 %q", c, s)
			}
		}
	}
	st := r.Stats()
	if st.Rows != n+st.Rejected || len(st.Rejections) > importer.DefaultMaxReported {
		t.Fatalf("%d rows, %d cities, %d rejected, %d kept: counts do not add up", st.Rows, n, st.Rejected, len(st.Rejections))
	}
	for _, re := range st.Rejections {
		if re.Line < 2 || re.Reason == "" {
			t.Fatalf("rejection %+v", re)
		}
		mustBeShortAndSafe(t, re.Error())
	}
}

func FuzzOKFNRow(f *testing.F) {
	for _, s := range []string{
		"Tirana,Albania,Tirana,3183875\n",
		"\"Mianzhu, Deyang, Sichuan\",China,Sichuan,12492662\r\n",
		"İstanbul,Turkey,Istanbul,745044",
		"Durrës,Albania,3185728\n,Albania,Elbasan,1\n",
		"Vlor\xeb,Albania,Vlorë,3344952\n",
		"Lezh\"ë,Albania,Lezhë,1\n\"open,quote\n",
		"---,x,y,99999999999\n",
		"Berat,Albania,\"Berat\nCounty\",3344947\n",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, rows []byte, strict bool) {
		fuzzRows(t, importer.FormatOKFN, "name,country,subcountry,geonameid\n", rows, strict)
	})
}

func FuzzMaxMindRow(f *testing.F) {
	for _, s := range []string{
		"ad,sant julia de loria,Sant Juli\xe0 de L\xf2ria,06,8020,42.4666667,1.5\n",
		"rs,\xd0akovica,\xd0akovica,00,,42.380278,20.430833",
		"gb,london,London,H9,7421228,51.514125,-.093689\r\n",
		"ug,kampala,Kampala,C3,,.316667,32.5833333\n",
		"ad,canillo,Canillo,02,,42.5666667\n",
		"us,\"big\" town,\"Big\" Town,NY,,40.7,-74\n",
		"ad,?,?,04,,NaN,Inf\n",
		"AD,x,Aixàs,06,-1,1e3,0x1p-2\n\n",
		"qq,x,\xa0,06,,1,1\n",
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, rows []byte, strict bool) {
		fuzzRows(t, importer.FormatMaxMind, "Country,City,AccentCity,Region,Population,Latitude,Longitude\n", rows, strict)
	})
}

func FuzzGeoNamesRow(f *testing.F) {
	for _, s := range []string{
		kolnRow().String(),
		kolnRow().with("alternatenames", " a, ,b,a,,").with("population", "").with("country code", "").String(),
		kolnRow().with("geonameid", "4294967296").String() + kolnRow().first(18) + "\r\n",
		kolnRow().with("latitude", "-.5").with("longitude", "NaN").String(),
		kolnRow().with("name", "K\xf6ln").with("country code", "de").String(),
		kolnRow().with("name", "---").with("population", "-1").String(),
		"\n" + kolnRow().with("country code", "D1").first(19),
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, rows []byte, strict bool) {
		fuzzReader(t, importer.FormatGeoNames, kolnRow().String(), rows, strict, newTidyPlaceReader(t))
		dump := append([]byte(kolnRow().String()), rows...)
		mustReadAlike(t, importer.FormatGeoNames, dump, importer.ReaderOptions{Strict: strict})
	})
}

// tidyPlaces reads places, checks each with mustBeTidy, and returns them as
// cities.
type tidyPlaces struct {
	tb     testing.TB
	r      *importer.GeoNamesReader
	places []importer.Place
}

func newTidyPlaceReader(tb testing.TB) func(importer.Format, io.Reader, importer.ReaderOptions) (rowReader, error) {
	return func(_ importer.Format, r io.Reader, opts importer.ReaderOptions) (rowReader, error) {
		gr, err := importer.NewGeoNamesReader(r, opts)
		return &tidyPlaces{tb: tb, r: gr}, err
	}
}

func (p *tidyPlaces) ReadBatch(dst []search.City) ([]search.City, error) {
	var err error
	if p.places, err = p.r.ReadBatch(p.places[:0]); err != nil {
		return dst, err
	}
	for _, pl := range p.places {
		mustBeTidy(p.tb, pl)
		dst = append(dst, pl.City())
	}
	return dst, nil
}

func (p *tidyPlaces) Stats() importer.ReadStats { return p.r.Stats() }
