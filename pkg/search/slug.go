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
// allocates nothing when dst has room, for ASCII input and for the letters
// of Latin names (see latinTransliterations).
func AppendSlug[S ~string | ~[]byte](dst []byte, s S) []byte {
	start, gap := len(dst), false
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return appendTransliterated(dst, start, gap, viewString(s)[i:])
		}
		dst, gap = foldSlugByte(dst, start, gap, s[i])
	}
	return dst
}

// appendTransliterated goes on with AppendSlug where s, the rest of its
// input, starts with a rune beyond ASCII, dst[start:] being the slug so
// far and gap whether a '-' is due before its next letter. Each rune is
// transliterated on its own, as unidecode.Unidecode does, from the table
// of Latin letters while it lasts; from the first rune beyond it, the rest
// goes to unidecode.Unidecode at once (one allocation, not one a rune).
func appendTransliterated(dst []byte, start int, gap bool, s string) []byte {
	latin := latinTransliterations()
	for i, c := range s {
		t := s[i : i+1]
		switch {
		case c < utf8.RuneSelf:
		case c < latinEnd:
			t = latin[c]
		default:
			dst, _ = foldSlugText(dst, start, gap, unidecode.Unidecode(s[i:]))
			return dst
		}
		dst, gap = foldSlugText(dst, start, gap, t)
	}
	return dst
}

// foldSlugText folds each byte of the ASCII text t (see foldSlugByte).
func foldSlugText(dst []byte, start int, gap bool, t string) ([]byte, bool) {
	for i := 0; i < len(t); i++ {
		dst, gap = foldSlugByte(dst, start, gap, t[i])
	}
	return dst, gap
}

// viewString returns s as a string without copying its bytes, for a
// function that reads the string only while it runs.
func viewString[S ~string | ~[]byte](s S) string {
	switch v := any(s).(type) {
	case []byte:
		return unsafe.String(unsafe.SliceData(v), len(v))
	case string:
		return v
	}
	return string(s)
}

// foldSlugByte appends the ASCII byte c of a transliterated name to its
// slug dst[start:]: letters lower-cased, digits as they are, apostrophes
// dropped ("Xi'an" is one word: xian), any other byte a gap, which becomes
// one '-' before the next letter or digit if one came before it. It
// returns dst and whether a gap is due.
func foldSlugByte(dst []byte, start int, gap bool, c byte) ([]byte, bool) {
	switch {
	case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
	case 'A' <= c && c <= 'Z':
		c += 'a' - 'A'
	case c == '\'' || c == '`':
		return dst, gap
	default:
		return dst, true
	}
	if gap && len(dst) > start {
		dst = append(dst, '-')
	}
	return append(dst, c), false
}
