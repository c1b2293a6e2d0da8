package importer

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// okfnNoCountry starts the country value of rows whose country pycountry
// did not know ("No country found for alpha-2 code: XK").
const okfnNoCountry = "No country found for alpha-2 code: "

// okfnColumns is the header of the okfn world-cities CSV.
var okfnColumns = []string{"name", "country", "subcountry", "geonameid"}

var utf8BOM = []byte("\xef\xbb\xbf")

// OKFNReader reads the okfn "world cities" CSV (the small dataset): UTF-8
// with RFC 4180 quoting, columns name,country,subcountry,geonameid. A UTF-8
// BOM and CRLF line endings are accepted. The format has no multi-line
// fields, so a quoted field never runs past its line: a line whose quotes
// do not balance is one malformed row, and the next line is read as usual.
// Fields are trimmed of surrounding spaces, and the subcountry "N/A" that
// the 2016 file gives city-states becomes empty. Cities have no population
// and no location; CountryCode comes from the English country name (the
// file spells names as pycountry does: "Iran, Islamic Republic of"), and
// Country is that code's short name (search.CountryName: "Iran"), so that
// both datasets name a country alike. A name that maps to no code stays.
type OKFNReader struct {
	lineRows[search.City, *okfnParser]
}

// okfnParser makes cities of okfn lines; each reading goroutine has its own.
type okfnParser struct {
	split        csvLine
	countries    map[string]okfnCountry // by the file's country value
	subcountries interner
}

// okfnCountry is what a country value of the file stands for.
type okfnCountry struct{ name, code string }

var _ search.CityReader = (*OKFNReader)(nil)

// NewOKFNReader checks the header of r and returns a reader of its rows.
// A missing or different header is an error wrapping ErrHeader.
func NewOKFNReader(r io.Reader, opts ReaderOptions) (*OKFNReader, error) {
	lines, err := okfnLines(r)
	if err != nil {
		return nil, err
	}
	return &OKFNReader{newLineRows(lines, opts, "okfn csv", newOKFNParser())}, nil
}

// okfnLines checks the header of r and returns the lines after it.
func okfnLines(r io.Reader) (*lineReader, error) {
	lines := newLineReader(r)
	want := fmt.Sprintf("the okfn world-cities header %q", strings.Join(okfnColumns, ","))
	line, err := lines.firstLine(want)
	if err != nil {
		return nil, err
	}
	var split csvLine
	if err := split.split(line); err != nil {
		return nil, fmt.Errorf("%w %s: %w; want %s", ErrHeader, quote(line), err, want)
	}
	header := make([]string, len(split.fields))
	for i, f := range split.fields {
		header[i] = string(f)
	}
	if !headerMatches(header, okfnColumns) {
		return nil, fmt.Errorf("%w %s, want %s", ErrHeader, quote(line), want)
	}
	return lines, nil
}

func newOKFNParser() *okfnParser {
	return &okfnParser{countries: make(map[string]okfnCountry)}
}

// parse turns a line into a city, or says why it cannot.
func (r *okfnParser) parse(line []byte) (search.City, string) {
	if err := r.split.split(line); err != nil {
		return search.City{}, err.Error()
	}
	rec := r.split.fields
	if len(rec) != len(okfnColumns) {
		return search.City{}, fmt.Sprintf("wrong number of fields (%d, want %d)", len(rec), len(okfnColumns))
	}
	if reason := fieldTooLong(rec, okfnColumns, -1); reason != "" {
		return search.City{}, reason
	}
	for i, f := range rec {
		if !utf8.Valid(f) {
			return search.City{}, fmt.Sprintf("invalid UTF-8 in %s %s", okfnColumns[i], quote(f))
		}
	}
	var c search.City
	c.Name = string(bytes.TrimSpace(rec[0]))
	if c.Name == "" {
		return search.City{}, "empty name"
	}
	if id := bytes.TrimSpace(rec[3]); len(id) > 0 {
		n, err := strconv.ParseUint(string(id), 10, 32)
		if err != nil {
			return search.City{}, fmt.Sprintf("invalid geonameid %s", quote(rec[3]))
		}
		c.ID = uint32(n)
	}
	c.Slug = search.Slug(c.Name)
	if c.Slug == "" {
		return search.City{}, fmt.Sprintf("name %s has no letters or digits", quote(c.Name))
	}
	co := r.country(bytes.TrimSpace(rec[1]))
	c.Country, c.CountryCode = co.name, co.code
	if sub := bytes.TrimSpace(rec[2]); string(sub) != "N/A" { // the 2016 file's mark for city-states
		c.Subcountry = r.subcountries.get(sub)
	}
	return c, ""
}

// country names a country value of the file once per value. The current
// file's build script leaked an error message as the country of Kosovo's
// rows: the country is named from the code it gives. A name no library
// knows keeps an empty code and stays as it is; the city stays.
func (r *okfnParser) country(value []byte) okfnCountry {
	if co, ok := r.countries[string(value)]; ok {
		return co
	}
	co := okfnCountry{name: string(value)}
	if code, ok := strings.CutPrefix(co.name, okfnNoCountry); ok {
		co.name, _ = countryName(strings.ToLower(strings.TrimSpace(code)))
	}
	co.code, _ = search.CountryCode(co.name)
	if name := search.CountryName(co.code); name != "" {
		co.name = name
	}
	if len(r.countries) < maxCache {
		r.countries[string(value)] = co
	}
	return co
}

// csvLine splits one line of RFC 4180 CSV into fields. Unlike
// encoding/csv it never lets a quoted field run on into the next line.
type csvLine struct {
	fields [][]byte // slices of the line, or of buf for quoted fields
	buf    []byte   // quoted fields, unquoted
}

// split splits line into c.fields, valid until the next call and until the
// line changes. It fails with csv.ErrQuote when a quoted field is not closed
// on the line or is followed by something other than a comma, and with
// csv.ErrBareQuote when an unquoted field holds a quote.
func (c *csvLine) split(line []byte) error {
	c.fields = c.fields[:0]
	if cap(c.buf) < len(line) {
		c.buf = make([]byte, 0, len(line)) // so that appends never move what fields point at
	}
	c.buf = c.buf[:0]
	for {
		if len(line) > 0 && line[0] == '"' {
			line = line[1:]
			start := len(c.buf)
			for {
				i := bytes.IndexByte(line, '"')
				if i < 0 {
					return csv.ErrQuote
				}
				c.buf = append(c.buf, line[:i]...)
				line = line[i+1:]
				if len(line) == 0 || line[0] != '"' {
					break
				}
				c.buf = append(c.buf, '"') // "" stands for one quote
				line = line[1:]
			}
			c.fields = append(c.fields, c.buf[start:len(c.buf):len(c.buf)])
			if len(line) == 0 {
				return nil
			}
			if line[0] != ',' {
				return csv.ErrQuote
			}
			line = line[1:]
			continue
		}
		field, rest, more := bytes.Cut(line, []byte{','})
		if bytes.IndexByte(field, '"') >= 0 {
			return csv.ErrBareQuote
		}
		c.fields = append(c.fields, field)
		if !more {
			return nil
		}
		line = rest
	}
}
