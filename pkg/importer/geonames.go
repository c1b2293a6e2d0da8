package importer

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// geonamesColumns names the 19 columns of the GeoNames "geoname" table, as
// its readme (download.geonames.org/export/dump/readme.txt) does.
var geonamesColumns = []string{
	"geonameid", "name", "asciiname", "alternatenames", "latitude", "longitude",
	"feature class", "feature code", "country code", "cc2",
	"admin1 code", "admin2 code", "admin3 code", "admin4 code",
	"population", "elevation", "dem", "timezone", "modification date",
}

// GeoNamesDumpURL is where GeoNames publishes its dumps (CC BY 4.0).
const GeoNamesDumpURL = "https://download.geonames.org/export/dump/"

// GeoNamesSources name the GeoNames dumps that hold cities, as zip
// archives under GeoNamesDumpURL: the places with at least 500, 1,000,
// 5,000 or 15,000 people (about 230k, 170k, 70k and 30k of them), and
// every place of the world (allCountries: 13 million, 5 million of them
// populated places; about 400 MB).
var GeoNamesSources = []string{"cities500", "cities1000", "cities5000", "cities15000", "allCountries"}

// GeoNamesURL is the URL of the dump that source names (one of
// GeoNamesSources).
func GeoNamesURL(source string) string { return GeoNamesDumpURL + source + ".zip" }

// The columns a Place takes, by index.
const (
	gnID         = 0
	gnName       = 1
	gnASCIIName  = 2
	gnAlternates = 3
	gnLat        = 4
	gnLon        = 5
	gnClass      = 6
	gnCode       = 7
	gnCountry    = 8
	gnAdmin1     = 10
	gnPopulation = 14
)

// dedupeByMap is the number of alternate names from which deduplication
// uses a map rather than comparing each pair.
const dedupeByMap = 16

// Place is one row of a GeoNames dump: the columns the app uses.
type Place struct {
	// ID is the geonameid, never 0.
	ID uint32
	// Name is the name in UTF-8, trimmed, never empty; it has letters or
	// digits (search.Slug of it is not empty).
	Name string
	// ASCIIName is the name in plain ASCII as GeoNames gives it; it may be
	// empty.
	ASCIIName string
	// AlternateNames are the names in other languages and scripts, trimmed,
	// without empty ones or repeats, in the file's order; nil when none.
	AlternateNames []string
	// Lat and Lon are decimal degrees (WGS84).
	Lat, Lon float64
	// FeatureClass and FeatureCode say what the place is ("P" and "PPLC"
	// for a capital city; see geonames.org/export/codes.html).
	FeatureClass, FeatureCode string
	// CountryCode is the ISO 3166 alpha-2 code in lower case, like
	// search.City.CountryCode; empty for places in no country.
	CountryCode string
	// Admin1 is the first-level division's code ("ENG", "NY", "07").
	Admin1 string
	// Population is 0 when unknown.
	Population int64
}

// City returns the place as a search.City: Name, Slug (search.Slug of the
// name), Country (search.CountryName of the code, or the code when it has
// none, as MaxMindReader names it),
// CountryCode, Region (the admin1 code), Population, location, ID, and as
// AltNames its ASCII and alternate names, one per slug and none folding
// like the name (see Gazetteer.Enrich for the names left out).
func (p *Place) City() search.City {
	name, _ := countryName(p.CountryCode)
	var t nameTidier
	return p.city(name, &t)
}

func (p *Place) city(country string, t *nameTidier) search.City {
	names, keys := t.tidy(p.Name, p.ASCIIName, p.AlternateNames)
	slug, key := t.slug(p.Name, names, keys, 0), ""
	if len(names) > 0 && names[0] == p.Name {
		key = keys[0] // the name's own, marked when in another script
	}
	return search.City{
		ID:          p.ID,
		Name:        p.Name,
		Slug:        slug,
		Country:     country,
		CountryCode: p.CountryCode,
		Region:      p.Admin1,
		Population:  p.Population,
		Lat:         p.Lat,
		Lon:         p.Lon,
		HasLocation: true,
		AltNames:    otherNames(names, keys, key),
	}
}

// GeoNamesReader reads the "geoname" table of a GeoNames dump
// (allCountries.txt, cities500.txt … cities15000.txt, or one country's
// file): tab-separated UTF-8 with no header and no quoting, 19 columns (see
// the dump's readme). Wrap the file in an Input to read it from .gz or .zip.
// The first line must be a GeoNames row, which tells the file from others;
// the rows after it that are not are malformed rows. ReadBatch hands the
// places over in batches, under the contract of search.CityReader.
type GeoNamesReader struct {
	lineRows[Place, *geonamesParser]
}

// geonamesParser makes places of GeoNames lines; each reading goroutine
// has its own.
type geonamesParser struct {
	slug   []byte
	code   []byte
	values interner // feature classes and codes, country and admin1 codes
}

// geonamesRowShape describes a GeoNames row in messages.
var geonamesRowShape = fmt.Sprintf("a GeoNames row (%d tab-separated fields, a numeric id first)", len(geonamesColumns))

// NewGeoNamesReader checks that the first line of r is a GeoNames row and
// returns a reader of its rows. An empty file or another first line is an
// error wrapping ErrHeader.
func NewGeoNamesReader(r io.Reader, opts ReaderOptions) (*GeoNamesReader, error) {
	lines, err := geonamesLines(r)
	if err != nil {
		return nil, err
	}
	return &GeoNamesReader{newLineRows(lines, opts, "GeoNames file", &geonamesParser{})}, nil
}

// geonamesLines checks that the first line of r is a GeoNames row and
// returns the lines from it on.
func geonamesLines(r io.Reader) (*lineReader, error) {
	lines := newLineReader(r)
	line, err := lines.firstLine(geonamesRowShape)
	if err != nil {
		return nil, err
	}
	if !isGeoNamesRow(line) {
		return nil, fmt.Errorf("%w: the first line %s, want %s", ErrHeader, quote(line), geonamesRowShape)
	}
	lines.unread()
	return lines, nil
}

// isGeoNamesRow reports whether line has the shape of a GeoNames row: 19
// tab-separated fields, the first a number.
func isGeoNamesRow(line []byte) bool {
	id, _, _ := bytes.Cut(line, []byte{'\t'})
	if len(id) == 0 || len(id) > 10 || bytes.Count(line, []byte{'\t'}) != len(geonamesColumns)-1 {
		return false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// parse turns a line into a place, or says why it cannot.
func (r *geonamesParser) parse(line []byte) (Place, string) {
	var f [19][]byte
	if n := splitFields(f[:], line, '\t'); n != len(geonamesColumns) {
		return Place{}, fmt.Sprintf("wrong number of fields (%d, want %d)", n, len(geonamesColumns))
	}
	if reason := fieldTooLong(f[:], geonamesColumns, gnAlternates); reason != "" {
		return Place{}, reason
	}
	for i := range f {
		if !utf8.Valid(f[i]) {
			return Place{}, fmt.Sprintf("invalid UTF-8 in %s %s", geonamesColumns[i], quote(f[i]))
		}
	}

	var p Place
	id, err := strconv.ParseUint(string(f[gnID]), 10, 32)
	if err != nil || id == 0 {
		return Place{}, fmt.Sprintf("invalid geonameid %s", quote(f[gnID]))
	}
	p.ID = uint32(id)
	name := bytes.TrimSpace(f[gnName])
	if len(name) == 0 {
		return Place{}, "empty name"
	}
	p.Name = string(name)
	if r.slug = search.AppendSlug(r.slug[:0], p.Name); len(r.slug) == 0 {
		return Place{}, fmt.Sprintf("name %s has no letters or digits", quote(name))
	}
	var ok bool
	if p.Lat, ok = parseDegrees(f[gnLat], 90); !ok {
		return Place{}, fmt.Sprintf("invalid latitude %s", quote(f[gnLat]))
	}
	if p.Lon, ok = parseDegrees(f[gnLon], 180); !ok {
		return Place{}, fmt.Sprintf("invalid longitude %s", quote(f[gnLon]))
	}
	if pop := f[gnPopulation]; len(pop) > 0 {
		if p.Population, err = strconv.ParseInt(string(pop), 10, 64); err != nil || p.Population < 0 {
			return Place{}, fmt.Sprintf("invalid population %s", quote(pop))
		}
	}
	if cc := bytes.TrimSpace(f[gnCountry]); len(cc) > 0 {
		if r.code, ok = appendCountryCode(r.code[:0], cc, false); !ok {
			return Place{}, fmt.Sprintf("invalid country code %s", quote(cc))
		}
		p.CountryCode = r.values.get(r.code)
	}
	var reason string
	if p.AlternateNames, reason = alternateNames(f[gnAlternates]); reason != "" {
		return Place{}, reason
	}
	p.ASCIIName = p.Name
	if ascii := bytes.TrimSpace(f[gnASCIIName]); !bytes.Equal(ascii, name) {
		p.ASCIIName = string(ascii)
	}
	p.FeatureClass = r.values.get(bytes.TrimSpace(f[gnClass]))
	p.FeatureCode = r.values.get(bytes.TrimSpace(f[gnCode]))
	p.Admin1 = r.values.get(bytes.TrimSpace(f[gnAdmin1]))
	return p, ""
}

// alternateNames splits the comma-separated alternate names, trims them and
// drops empty ones and repeats, or says why it cannot.
func alternateNames(field []byte) ([]string, string) {
	if len(bytes.TrimSpace(field)) == 0 {
		return nil, ""
	}
	all := string(field) // one allocation that every name shares
	names := make([]string, 0, strings.Count(all, ",")+1)
	var seen map[string]bool
	if cap(names) > dedupeByMap {
		seen = make(map[string]bool, cap(names))
	}
	for name := range strings.SplitSeq(all, ",") {
		name = strings.TrimSpace(name)
		switch {
		case name == "":
			continue
		case len(name) > MaxField:
			return nil, fmt.Sprintf("alternate name longer than %d bytes: %s", MaxField, quote(name))
		case seen != nil:
			if seen[name] {
				continue
			}
			seen[name] = true
		case slices.Contains(names, name):
			continue
		}
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil, ""
	}
	return slices.Clip(names), ""
}

// GeoNamesCityReader reads a GeoNames dump as cities (see Place.City), for
// an import: its populated places (feature class P), which are all the
// places of the cities500 … cities15000 files; the others are skipped (see
// ReadStats.Skipped). It counts the rows whose country code has no English
// name.
type GeoNamesCityReader struct {
	lineRows[search.City, *geonamesCityParser]
}

// geonamesCityParser makes cities of GeoNames lines; each reading
// goroutine has its own.
type geonamesCityParser struct {
	places    geonamesParser
	countries countryNames
	tidy      nameTidier
	code      []byte
}

var _ search.CityReader = (*GeoNamesCityReader)(nil)

// NewGeoNamesCityReader returns a reader of the cities of the GeoNames dump
// r; see NewGeoNamesReader.
func NewGeoNamesCityReader(r io.Reader, opts ReaderOptions) (*GeoNamesCityReader, error) {
	lines, err := geonamesLines(r)
	if err != nil {
		return nil, err
	}
	return &GeoNamesCityReader{newLineRows(lines, opts, "GeoNames file", newGeoNamesCityParser())}, nil
}

func newGeoNamesCityParser() *geonamesCityParser {
	return &geonamesCityParser{}
}

func (r *geonamesCityParser) takeUnknown(dst []string) []string { return r.countries.takeUnknown(dst) }

// parse turns a line into a city, or says why it cannot.
func (r *geonamesCityParser) parse(line []byte) (search.City, string) {
	p, reason := r.places.parse(line)
	if reason != "" {
		return search.City{}, reason
	}
	if p.FeatureClass != "P" {
		return search.City{}, skipRow
	}
	if p.CountryCode == "" {
		return p.city("", &r.tidy), ""
	}
	r.code = append(r.code[:0], p.CountryCode...)
	return p.city(r.countries.lookup(r.code).name, &r.tidy), ""
}
