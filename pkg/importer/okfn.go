package importer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/language/display"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// okfnColumns is the header of the okfn world-cities CSV.
// okfnNoCountry starts the country value of rows whose country pycountry
// did not know ("No country found for alpha-2 code: XK").
const okfnNoCountry = "No country found for alpha-2 code: "

var okfnColumns = []string{"name", "country", "subcountry", "geonameid"}

var utf8BOM = []byte("\xef\xbb\xbf")

// OKFNReader reads the okfn "world cities" CSV (the small dataset): UTF-8
// with RFC 4180 quoting, columns name,country,subcountry,geonameid. A UTF-8
// BOM and CRLF line endings are accepted. Fields are trimmed of surrounding
// spaces, and the subcountry "N/A" that the 2016 file gives city-states
// becomes empty. Cities have no CountryCode (the file has English country
// names only, spelt as pycountry spells them), no population and no location.
type OKFNReader struct {
	csv   *csv.Reader
	log   rowLog
	codes map[string]string // country name → ISO code, "" when unknown
}

var _ search.CityReader = (*OKFNReader)(nil)

// NewOKFNReader checks the header of r and returns a reader of its rows.
// A missing or different header is an error wrapping ErrHeader.
func NewOKFNReader(r io.Reader, opts ReaderOptions) (*OKFNReader, error) {
	br := bufio.NewReaderSize(r, bufSize) // r itself when it is already a big enough bufio.Reader
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1 // rows with the wrong count are ours to report
	cr.ReuseRecord = true
	want := strings.Join(okfnColumns, ",")
	header, err := cr.Read()
	switch {
	case err == io.EOF:
		return nil, fmt.Errorf("%w: empty file, want the okfn world-cities header %q", ErrHeader, want)
	case err != nil:
		return nil, fmt.Errorf("%w: want the okfn world-cities header %q: %w", ErrHeader, want, err)
	case !headerMatches(header, okfnColumns):
		return nil, fmt.Errorf("%w %q, want the okfn world-cities header %q", ErrHeader, strings.Join(header, ","), want)
	}
	return &OKFNReader{csv: cr, log: newRowLog(opts)}, nil
}

// Read returns the next well-formed row as a city, or io.EOF after the last.
func (r *OKFNReader) Read() (search.City, error) {
	for {
		rec, err := r.csv.Read()
		if err != nil {
			if err == io.EOF {
				return search.City{}, io.EOF
			}
			var pe *csv.ParseError
			if errors.As(err, &pe) && isSyntaxError(pe.Err) {
				// encoding/csv has consumed the bad record, so reading goes on.
				r.log.rows++
				if err := r.log.reject(pe.StartLine, pe.Err.Error()); err != nil {
					return search.City{}, err
				}
				continue
			}
			return search.City{}, fmt.Errorf("read okfn csv: %w", err)
		}
		r.log.rows++
		c, reason := parseOKFN(rec)
		if reason == "" {
			c.CountryCode = r.countryCode(c.Country)
			return c, nil
		}
		line, _ := r.csv.FieldPos(0)
		if err := r.log.reject(line, reason); err != nil {
			return search.City{}, err
		}
	}
}

// Stats returns the counts so far.
func (r *OKFNReader) Stats() ReadStats { return r.log.stats() }

func isSyntaxError(err error) bool {
	return errors.Is(err, csv.ErrQuote) || errors.Is(err, csv.ErrBareQuote) || errors.Is(err, csv.ErrFieldCount)
}

// countryCode maps the file's English country names to ISO codes, once per
// name. A name no library knows keeps an empty code; the city stays.
func (r *OKFNReader) countryCode(name string) string {
	code, ok := r.codes[name]
	if !ok {
		code, _ = search.CountryCode(name)
		if r.codes == nil {
			r.codes = make(map[string]string)
		}
		r.codes[name] = code
	}
	return code
}

// parseOKFN turns a record into a city, or says why it cannot.
func parseOKFN(rec []string) (search.City, string) {
	if len(rec) != len(okfnColumns) {
		return search.City{}, fmt.Sprintf("wrong number of fields (%d, want %d)", len(rec), len(okfnColumns))
	}
	for i, f := range rec {
		if !utf8.ValidString(f) {
			return search.City{}, fmt.Sprintf("invalid UTF-8 in %s %q", okfnColumns[i], f)
		}
	}
	c := search.City{
		Name:       strings.TrimSpace(rec[0]),
		Country:    strings.TrimSpace(rec[1]),
		Subcountry: strings.TrimSpace(rec[2]),
	}
	if c.Name == "" {
		return search.City{}, "empty name"
	}
	if c.Subcountry == "N/A" { // the 2016 file's mark for city-states
		c.Subcountry = ""
	}
	// The current file's build script leaked an error message as the
	// country of Kosovo's rows: name the country from the code it gives.
	if code, ok := strings.CutPrefix(c.Country, okfnNoCountry); ok {
		c.Country, _ = countryName(display.English.Regions(), strings.ToLower(strings.TrimSpace(code)))
	}
	if id := strings.TrimSpace(rec[3]); id != "" {
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			return search.City{}, fmt.Sprintf("invalid geonameid %q", rec[3])
		}
		c.ID = uint32(n)
	}
	c.Slug = search.Slug(c.Name)
	if c.Slug == "" {
		return search.City{}, fmt.Sprintf("name %q has no letters or digits", c.Name)
	}
	return c, ""
}
