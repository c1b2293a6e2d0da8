package importer

import (
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

const (
	// maxCache bounds the per-value caches against files full of garbage
	// values; real files have about 250 countries and a few thousand
	// first-level divisions.
	maxCache = 4096
	// maxUnknownCodes bounds ReadStats.UnknownCodes, which the import
	// summary prints.
	maxUnknownCodes = 20
)

// countryName is the English short name of a lower-case ISO 3166 alpha-2
// code (search.CountryName, one naming for every dataset), or the code
// itself and false when it has none.
func countryName(code string) (string, bool) {
	if name := search.CountryName(code); name != "" {
		return name, true
	}
	return code, false
}

// appendCountryCode appends code in lower case to dst if it is two ASCII
// letters, or letters and digits when digits is set.
func appendCountryCode(dst, code []byte, digits bool) ([]byte, bool) {
	if len(code) != 2 {
		return dst, false
	}
	for _, c := range code {
		switch {
		case 'a' <= c && c <= 'z', digits && '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		default:
			return dst, false
		}
		dst = append(dst, c)
	}
	return dst, true
}

// country is what a reader knows about one country code.
type country struct {
	code, name string
	known      bool
}

// countryNames names lower-case country codes in English, once per code.
// It notes the code of each row whose code has no name, for an
// unknownCountries to count (see takeUnknown).
type countryNames struct {
	// byCode holds the codes looked up so far, by the index of their two
	// letters or digits (see codeIndex).
	byCode  [36 * 36]*country
	pending []string
}

// codeIndex numbers a two-character code of lower-case letters and digits.
func codeIndex(code []byte) int {
	n := 0
	for _, c := range code {
		if c <= '9' {
			n = n*36 + 26 + int(c-'0')
		} else {
			n = n*36 + int(c-'a')
		}
	}
	return n
}

// lookup returns the entry of a lower-case code of two letters or digits
// (see appendCountryCode) and notes a row with it.
func (c *countryNames) lookup(code []byte) country {
	i := codeIndex(code)
	if c.byCode[i] == nil {
		co := &country{code: string(code)}
		co.name, co.known = countryName(co.code)
		c.byCode[i] = co
	}
	co := *c.byCode[i]
	if !co.known {
		c.pending = append(c.pending, co.code)
	}
	return co
}

// takeUnknown appends the codes noted since the last call to dst, in the
// order of their rows.
func (c *countryNames) takeUnknown(dst []string) []string {
	dst = append(dst, c.pending...)
	c.pending = c.pending[:0]
	return dst
}

// unknownCountries counts the rows whose country code has no English name,
// and keeps the first maxUnknownCodes such codes in file order.
type unknownCountries struct {
	rows  int
	codes map[string]bool
}

// add counts the rows with these codes, in file order.
func (u *unknownCountries) add(codes []string) {
	u.rows += len(codes)
	for _, code := range codes {
		if u.codes == nil {
			u.codes = make(map[string]bool)
		}
		if len(u.codes) < maxUnknownCodes {
			u.codes[code] = true
		}
	}
}

// addTo fills the unknown-country counts of st.
func (u *unknownCountries) addTo(st *ReadStats) {
	st.UnknownCountries = u.rows
	for code := range u.codes {
		st.UnknownCodes = append(st.UnknownCodes, code)
	}
	slices.Sort(st.UnknownCodes)
}

// interner hands out one string per distinct value, so that the rows that
// repeat a value share its bytes. It converts bytes with conv when set, and
// stops remembering new values after maxCache.
type interner struct {
	m    map[string]string
	conv func([]byte) string
}

func (in *interner) get(b []byte) string {
	if s, ok := in.m[string(b)]; ok {
		return s
	}
	var s string
	if in.conv != nil {
		s = in.conv(b)
	} else {
		s = string(b)
	}
	if in.m == nil {
		in.m = make(map[string]string)
	}
	if len(in.m) < maxCache {
		in.m[string(b)] = s
	}
	return s
}
