package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// maxmindColumns is the header of MaxMind's world cities file.
var maxmindColumns = []string{"Country", "City", "AccentCity", "Region", "Population", "Latitude", "Longitude"}

const (
	// maxLine bounds a line, so that a file without newlines is not read
	// into memory whole; real lines are under 200 bytes.
	maxLine = 1 << 20
	// maxCache bounds the per-code caches against files full of garbage
	// codes; real files have 234 countries and 397 regions.
	maxCache = 4096
)

// countryName is the English name that namer (display.English.Regions())
// gives a lower-case ISO 3166 alpha-2 code, or the code itself and false when
// there is none.
func countryName(namer display.Namer, code string) (string, bool) {
	if name, ok := countryNames[code]; ok {
		return name, true
	}
	reg, err := language.ParseRegion(code)
	if err != nil || !reg.IsCountry() {
		return code, false
	}
	if name := namer.Name(reg); name != "" {
		return name, true
	}
	return code, false
}

// countryNames holds English names for codes that golang.org/x/text cannot
// name because ISO withdrew them, though MaxMind still uses them.
var countryNames = map[string]string{
	"an": "Netherlands Antilles",
}

// country is what the reader knows about one country code.
type country struct {
	code, name string
	known      bool
}

// MaxMindReader reads MaxMind's world cities file (the large dataset): no
// quoting, columns Country,City,AccentCity,Region,Population,Latitude,
// Longitude, Latin-1 or UTF-8 per field (see the package doc). The header
// may differ in case; the last line may lack its newline; CRLF is accepted.
// A double quote is an ordinary character. Name is AccentCity, Country the
// English name of the code (from golang.org/x/text), CountryCode the code in
// lower case.
type MaxMindReader struct {
	br   *bufio.Reader
	line int    // physical line of the last line read
	long []byte // a line longer than the buffer, put together
	text []byte // Latin-1 → UTF-8 scratch
	slug []byte
	low  []byte // lower-cased country code scratch

	countries map[string]country
	regions   map[string]string
	unknown   map[string]bool
	unknownN  int
	names     display.Namer
	log       rowLog
}

var _ search.CityReader = (*MaxMindReader)(nil)

// NewMaxMindReader checks the header of r and returns a reader of its rows.
// A missing or different header is an error wrapping ErrHeader.
func NewMaxMindReader(r io.Reader, opts ReaderOptions) (*MaxMindReader, error) {
	mr := &MaxMindReader{
		br:        bufio.NewReaderSize(r, bufSize),
		countries: make(map[string]country),
		regions:   make(map[string]string),
		unknown:   make(map[string]bool),
		names:     display.English.Regions(),
		log:       newRowLog(opts),
	}
	if b, _ := mr.br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		mr.br.Discard(len(utf8BOM))
	}
	want := strings.Join(maxmindColumns, ",")
	for {
		line, err := mr.next()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: empty file, want the MaxMind header %q", ErrHeader, want)
		}
		if err != nil {
			return nil, fmt.Errorf("read MaxMind header: %w", err)
		}
		if len(line) == 0 {
			continue
		}
		if !headerMatches(strings.Split(string(line), ","), maxmindColumns) {
			return nil, fmt.Errorf("%w %q, want the MaxMind header %q", ErrHeader, line, want)
		}
		return mr, nil
	}
}

// Read returns the next well-formed row as a city, or io.EOF after the last.
func (r *MaxMindReader) Read() (search.City, error) {
	for {
		line, err := r.next()
		if err != nil {
			if err == io.EOF {
				return search.City{}, io.EOF
			}
			return search.City{}, fmt.Errorf("read MaxMind file: %w", err)
		}
		if len(line) == 0 {
			continue
		}
		r.log.rows++
		var c search.City
		var reason string
		if len(line) > maxLine {
			reason = fmt.Sprintf("line longer than %d bytes", maxLine)
		} else {
			c, reason = r.parse(line)
		}
		if reason == "" {
			return c, nil
		}
		if err := r.log.reject(r.line, reason); err != nil {
			return search.City{}, err
		}
	}
}

// Stats returns the counts so far.
func (r *MaxMindReader) Stats() ReadStats {
	st := r.log.stats()
	st.UnknownCountries = r.unknownN
	for code := range r.unknown {
		st.UnknownCodes = append(st.UnknownCodes, code)
	}
	slices.Sort(st.UnknownCodes)
	return st
}

// next returns the next line without its line ending. The slice is valid
// until the following call. A line longer than maxLine comes back with a
// length above maxLine but is not kept whole.
func (r *MaxMindReader) next() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = append(r.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.br.ReadSlice('\n')
			if len(r.long) <= maxLine {
				r.long = append(r.long, line...)
			}
		}
		line = r.long
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, err
	}
	r.line++
	// A missing final newline is fine: the next call gets io.EOF.
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	return line, nil
}

// parse turns a line into a city, or says why it cannot.
func (r *MaxMindReader) parse(line []byte) (search.City, string) {
	if n := bytes.Count(line, []byte{','}) + 1; n != len(maxmindColumns) {
		return search.City{}, fmt.Sprintf("wrong number of fields (%d, want %d)", n, len(maxmindColumns))
	}
	var f [7][]byte
	for i := range len(f) - 1 {
		j := bytes.IndexByte(line, ',')
		f[i], line = line[:j], line[j+1:]
	}
	f[6] = line

	var c search.City
	c.Name = strings.TrimSpace(r.decode(bytes.TrimSpace(f[2])))
	if c.Name == "" {
		return search.City{}, "empty name"
	}
	r.slug = search.AppendSlug(r.slug[:0], c.Name)
	if len(r.slug) == 0 {
		return search.City{}, fmt.Sprintf("name %q has no letters or digits", c.Name)
	}
	code := bytes.TrimSpace(f[0])
	if len(code) == 0 {
		return search.City{}, "empty country code"
	}
	if len(f[4]) > 0 {
		n, err := strconv.ParseInt(string(f[4]), 10, 64)
		if err != nil || n < 0 {
			return search.City{}, fmt.Sprintf("invalid population %q", f[4])
		}
		c.Population = n
	}
	var ok bool
	if c.Lat, ok = parseDegrees(f[5], 90); !ok {
		return search.City{}, fmt.Sprintf("invalid latitude %q", f[5])
	}
	if c.Lon, ok = parseDegrees(f[6], 180); !ok {
		return search.City{}, fmt.Sprintf("invalid longitude %q", f[6])
	}
	c.HasLocation = true
	c.Slug = string(r.slug)
	co := r.country(code)
	c.CountryCode, c.Country = co.code, co.name
	if !co.known {
		r.unknownN++
		if len(r.unknown) < maxCache {
			r.unknown[co.code] = true
		}
	}
	c.Region = r.region(f[3])
	return c, ""
}

// parseDegrees parses a latitude or longitude (".316667" and "-.093689" are
// fine) and checks it lies within ±limit.
func parseDegrees(b []byte, limit float64) (float64, bool) {
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(v) || v < -limit || v > limit {
		return 0, false
	}
	return v, true
}

// decode returns b as UTF-8 by the package's per-field rule: ASCII and valid
// UTF-8 are taken as they are, anything else is Latin-1.
func (r *MaxMindReader) decode(b []byte) string {
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	if i == len(b) || utf8.Valid(b[i:]) {
		return string(b)
	}
	r.text = append(r.text[:0], b[:i]...)
	for _, c := range b[i:] {
		r.text = utf8.AppendRune(r.text, rune(c)) // Latin-1 is the first 256 code points
	}
	return string(r.text)
}

// country returns the code's entry, naming it on first sight.
func (r *MaxMindReader) country(code []byte) country {
	for _, c := range code {
		if 'A' <= c && c <= 'Z' {
			r.low = append(r.low[:0], code...)
			for i, c := range r.low {
				if 'A' <= c && c <= 'Z' {
					r.low[i] = c + 'a' - 'A'
				}
			}
			code = r.low
			break
		}
	}
	if co, ok := r.countries[string(code)]; ok {
		return co
	}
	co := country{code: r.decode(code)}
	co.name, co.known = r.countryName(co.code)
	if len(r.countries) < maxCache {
		r.countries[co.code] = co
	}
	return co
}

// countryName is the English name of a lower-case code, or the code itself
// and false when there is none.
func (r *MaxMindReader) countryName(code string) (string, bool) {
	return countryName(r.names, code)
}

// region returns the region code as a string shared by every row with it.
func (r *MaxMindReader) region(b []byte) string {
	if s, ok := r.regions[string(b)]; ok {
		return s
	}
	s := r.decode(b)
	if len(r.regions) < maxCache {
		r.regions[s] = s
	}
	return s
}
