package importer

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// maxmindColumns is the header of MaxMind's world cities file.
var maxmindColumns = []string{"Country", "City", "AccentCity", "Region", "Population", "Latitude", "Longitude"}

// MaxMindReader reads MaxMind's world cities file (the large dataset): no
// quoting, columns Country,City,AccentCity,Region,Population,Latitude,
// Longitude, Latin-1 or UTF-8 per field (see the package doc). The header
// may differ in case; the last line may lack its newline; CRLF is accepted.
// A double quote is an ordinary character. Name is AccentCity, Country the
// English short name of the code (search.CountryName, or the code itself
// when it has none), CountryCode the code in lower case; a row whose code
// is not two ASCII letters or digits is malformed.
type MaxMindReader struct {
	lineRows[search.City, *maxmindParser]
}

// maxmindParser makes cities of MaxMind lines; each reading goroutine has
// its own.
type maxmindParser struct {
	text      []byte // Latin-1 → UTF-8 scratch
	names     []byte // scratch of a row's name then its slug, made one string
	strings   stringChunks
	code      []byte // lower-cased country code scratch
	countries countryNames
	regions   interner
}

var _ search.CityReader = (*MaxMindReader)(nil)

// NewMaxMindReader checks the header of r and returns a reader of its rows.
// A missing or different header is an error wrapping ErrHeader.
func NewMaxMindReader(r io.Reader, opts ReaderOptions) (*MaxMindReader, error) {
	lines, err := maxmindLines(r)
	if err != nil {
		return nil, err
	}
	return &MaxMindReader{newLineRows(lines, opts, "MaxMind file", newMaxMindParser())}, nil
}

// maxmindLines checks the header of r and returns the lines after it.
func maxmindLines(r io.Reader) (*lineReader, error) {
	lines := newLineReader(r)
	want := fmt.Sprintf("the MaxMind header %q", strings.Join(maxmindColumns, ","))
	line, err := lines.firstLine(want)
	if err != nil {
		return nil, err
	}
	if !headerMatches(strings.Split(string(line), ","), maxmindColumns) {
		return nil, fmt.Errorf("%w %s, want %s", ErrHeader, quote(line), want)
	}
	return lines, nil
}

func newMaxMindParser() *maxmindParser {
	p := &maxmindParser{}
	p.regions.conv = p.decode
	return p
}

func (r *maxmindParser) takeUnknown(dst []string) []string { return r.countries.takeUnknown(dst) }

// parse turns a line into a city, or says why it cannot.
func (r *maxmindParser) parse(line []byte) (search.City, string) {
	var f [7][]byte
	if n := splitShortFields(f[:], line, ','); n != len(maxmindColumns) {
		return search.City{}, fmt.Sprintf("wrong number of fields (%d, want %d)", n, len(maxmindColumns))
	}
	if reason := fieldTooLong(f[:], maxmindColumns, -1); reason != "" {
		return search.City{}, reason
	}

	var c search.City
	r.text = appendDecoded(r.text[:0], bytes.TrimSpace(f[2]))
	name := bytes.TrimSpace(r.text)
	if len(name) == 0 {
		return search.City{}, "empty name"
	}
	r.names = search.AppendSlug(append(r.names[:0], name...), name)
	if len(r.names) == len(name) {
		return search.City{}, fmt.Sprintf("name %s has no letters or digits", quote(name))
	}
	code := bytes.TrimSpace(f[0])
	if len(code) == 0 {
		return search.City{}, "empty country code"
	}
	var ok bool
	if r.code, ok = appendCountryCode(r.code[:0], code, true); !ok {
		return search.City{}, fmt.Sprintf("invalid country code %s", quote(code))
	}
	if len(f[4]) > 0 {
		n, err := strconv.ParseInt(string(f[4]), 10, 64)
		if err != nil || n < 0 {
			return search.City{}, fmt.Sprintf("invalid population %s", quote(f[4]))
		}
		c.Population = n
	}
	if c.Lat, ok = parseDegrees(f[5], 90); !ok {
		return search.City{}, fmt.Sprintf("invalid latitude %s", quote(f[5]))
	}
	if c.Lon, ok = parseDegrees(f[6], 180); !ok {
		return search.City{}, fmt.Sprintf("invalid longitude %s", quote(f[6]))
	}
	c.HasLocation = true
	names := r.strings.text(r.names) // the name and the slug, in a chunk of many rows'
	c.Name, c.Slug = names[:len(name)], names[len(name):]
	co := r.countries.lookup(r.code)
	c.CountryCode, c.Country = co.code, co.name
	c.Region = r.regions.get(f[3])
	return c, ""
}

// splitFields splits line at each sep into f and returns how many fields
// the line has, which may be more than f holds.
func splitFields(f [][]byte, line []byte, sep byte) int {
	n := 0
	for {
		i := bytes.IndexByte(line, sep)
		if i < 0 {
			if n < len(f) {
				f[n] = line
			}
			return n + 1
		}
		if n < len(f) {
			f[n] = line[:i]
		}
		line = line[i+1:]
		n++
	}
}

// stringChunks makes strings of bytes, many in each chunk of memory that
// it allocates: a row's name and slug cost no allocation of their own. A
// chunk's bytes are never written again once made a string; it lives as
// long as any of its strings (the store copies them, and drops the rows).
type stringChunks struct {
	buf []byte
}

// stringChunk is the size of a stringChunks chunk: the strings of some
// 500 MaxMind rows.
const stringChunk = 16 << 10

// text returns the bytes of b as a string.
func (s *stringChunks) text(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(s.buf)-len(s.buf) < len(b) {
		s.buf = make([]byte, 0, max(stringChunk, len(b)))
	}
	off := len(s.buf)
	s.buf = append(s.buf, b...)
	return unsafe.String(&s.buf[off], len(b))
}

// splitShortFields is splitFields for lines of short fields, such as
// MaxMind's 40 bytes in 7 fields: one loop over the bytes costs less there
// than a call of bytes.IndexByte a field (GeoNames' long fields of
// alternate names are the other way round).
func splitShortFields(f [][]byte, line []byte, sep byte) int {
	n, start := 0, 0
	for i, c := range line {
		if c != sep {
			continue
		}
		if n < len(f) {
			f[n] = line[start:i]
		}
		n++
		start = i + 1
	}
	if n < len(f) {
		f[n] = line[start:]
	}
	return n + 1
}

// parseDegrees parses a latitude or longitude (".316667" and "-.093689" are
// fine; "0x1p4" and "1_0" are not) and checks it lies within ±limit.
func parseDegrees(b []byte, limit float64) (float64, bool) {
	v, ok := parseDecimal(b)
	if !ok {
		// More digits than parseDecimal takes, or no plain decimal at all
		// (hexadecimal, underscores, exponents), which ParseDecimal refuses.
		if v, ok = search.ParseDecimal(string(b)); !ok {
			return 0, false
		}
	}
	if math.IsNaN(v) || v < -limit || v > limit {
		return 0, false
	}
	return v, true
}

// exactPow10 are the powers of ten that a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseDecimal parses the plain decimals that coordinates are written in,
// [-]digits[.digits] with at most 15 digits, to the very value
// strconv.ParseFloat gives (the digits and the power of ten are exact
// float64s, and one division rounds correctly); it reports false for
// anything else, which search.ParseDecimal then reads or refuses.
func parseDecimal(b []byte) (float64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var m uint64
	digits, frac := 0, -1
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			m = m*10 + uint64(c-'0')
			digits++
			if frac >= 0 {
				frac++
			}
		case c == '.' && frac < 0:
			frac = 0
		default:
			return 0, false
		}
	}
	if digits == 0 || digits >= len(exactPow10) {
		return 0, false
	}
	v := float64(m) / exactPow10[max(frac, 0)]
	if neg {
		v = -v
	}
	return v, true
}

// decode returns b as UTF-8 by the package's per-field rule: ASCII and valid
// UTF-8 are taken as they are, anything else is Latin-1.
func (r *maxmindParser) decode(b []byte) string {
	r.text = appendDecoded(r.text[:0], b)
	return string(r.text)
}

// appendDecoded appends b to dst as UTF-8, by decode's rule.
func appendDecoded(dst, b []byte) []byte {
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	if i == len(b) || utf8.Valid(b[i:]) {
		return append(dst, b...)
	}
	return appendLatin1(append(dst, b[:i]...), b[i:])
}

// appendLatin1 appends the Latin-1 bytes b to dst as UTF-8.
func appendLatin1(dst, b []byte) []byte {
	for _, c := range b {
		dst = utf8.AppendRune(dst, rune(c)) // Latin-1 is the first 256 code points
	}
	return dst
}
