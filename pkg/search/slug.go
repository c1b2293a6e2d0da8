package search

import (
	"unicode/utf8"
	"unsafe"

	"github.com/gosimple/unidecode"
)

// SlugBytes is every byte a slug can hold, in byte order.
const SlugBytes = "-0123456789abcdefghijklmnopqrstuvwxyz"

// Slug folds a name or a query into the form that matching compares:
// transliterated to ASCII by github.com/gosimple/unidecode ("İstanbul" →
// "Istanbul", "Łódź" → "Lodz", "Þórshöfn" → "Thorshofn", "Straße" →
// "Strasse"), lower-cased, apostrophes dropped ("Xi'an" → "xian"), and every
// other run of characters that are not ASCII letters or digits turned into a
// single '-' with none at either end ("São Paulo" → "sao-paulo",
// "SAO_P" → "sao-p"). Queries are folded with the same function, so a query
// matches a name when Slug(name) starts with Slug(query).
func Slug(s string) string {
	return string(AppendSlug(nil, s))
}

// AppendSlug appends Slug(s) to dst, for s a string or its bytes; it
// allocates nothing for ASCII input when dst has room.
func AppendSlug[S ~string | ~[]byte](dst []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return appendASCIISlug(dst, unidecode.Unidecode(viewString(s)))
		}
	}
	return appendASCIISlug(dst, s)
}

// viewString returns s as a string without copying its bytes, for a
// function that reads the string only while it runs (unidecode.Unidecode).
func viewString[S ~string | ~[]byte](s S) string {
	switch v := any(s).(type) {
	case []byte:
		return unsafe.String(unsafe.SliceData(v), len(v))
	case string:
		return v
	}
	return string(s)
}

// appendASCIISlug is AppendSlug for s of ASCII bytes.
func appendASCIISlug[S ~string | ~[]byte](dst []byte, s S) []byte {
	start := len(dst)
	gap := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '\'' || c == '`':
			continue // "Xi'an" is one word: xian
		default:
			gap = true
			continue
		}
		if gap && len(dst) > start {
			dst = append(dst, '-')
		}
		gap = false
		dst = append(dst, c)
	}
	return dst
}
