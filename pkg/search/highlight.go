package search

import (
	"sync"
	"unicode/utf8"

	"github.com/gosimple/unidecode"
)

// Span is the part of a name that a query matched, in code points (not
// bytes): runes [Start, End) of the name.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// MatchSpan returns the shortest span at the start of name whose slug covers
// the first n bytes of Slug(name): the letters a person typed to match it.
// Leading characters that fold to nothing (a MaxMind name's leading space)
// are left out of the span, but for letters of a script other than Latin
// that lead into it: the alif of "القاهرة" folds to nothing, and is typed
// all the same. The span is empty when n is 0.
//
// Names and slugs differ in length ("ß" → "ss", "Þ" → "th", "Xi'an" →
// "xian"), so the span is found by folding ever longer prefixes of name.
func MatchSpan(name string, n int) Span {
	return MatchSpanAt(name, 0, n)
}

// MatchSpanAt is MatchSpan for bytes [offset, offset+n) of Slug(name): the
// span of a match that starts at a later word ("paulo" in "São Paulo" is
// offset 4 of "sao-paulo", the runes 4..9).
func MatchSpanAt(name string, offset, n int) Span {
	if n <= 0 {
		return Span{}
	}
	if sp, ok := asciiSpan(name, offset, n); ok {
		return sp
	}
	return foldedSpan(name, offset, n)
}

// foldedSpan is MatchSpanAt for any name: it folds the name one rune at
// a time, counting the bytes that the slug of each prefix has (see
// slugLength), as AppendSlug transliterates rune by rune.
func foldedSpan(name string, offset, n int) Span {
	var folded slugLength
	start, runes := -1, 0
	lead := -1 // the first of the letters before start that fold to nothing
	for i, r := range name {
		runes++
		end := i + utf8.RuneLen(r)
		if r == utf8.RuneError {
			end = i + 1
		}
		folded.add(name[i:end])
		if start < 0 {
			if folded.n <= offset {
				switch {
				case folded.n < offset || !otherScriptLetter(r):
					lead = -1
				case lead < 0:
					lead = runes - 1
				}
				continue
			}
			start = runes - 1
			if lead >= 0 {
				start = lead
			}
		}
		if folded.n >= offset+n {
			return Span{Start: start, End: runes}
		}
	}
	if start < 0 {
		return Span{}
	}
	return Span{Start: start, End: runes}
}

// slugLength is the length of the slug of a text fed to it rune by rune:
// len(AppendSlug(nil, text)) without folding the text again for each rune
// (a prefix's slug is a prefix of the longer text's slug, but for the '-'
// of a gap, written only once a letter follows it).
type slugLength struct {
	n   int
	gap bool // a separator since the last letter or digit
}

// add feeds the text of one rune.
func (l *slugLength) add(r string) {
	if len(r) == 1 && r[0] < utf8.RuneSelf {
		l.addByte(r[0])
		return
	}
	t := transliterate(r)
	for i := 0; i < len(t); i++ {
		l.addByte(t[i])
	}
}

// transliterate returns unidecode.Unidecode(r) for the text of one rune:
// looked up for the letters of Latin names, whose transliteration
// otherwise costs an allocation each.
func transliterate(r string) string {
	if c, _ := utf8.DecodeRuneInString(r); c < latinEnd && len(r) > 1 {
		return latinTransliterations()[c]
	}
	return unidecode.Unidecode(r)
}

// latinEnd is where the Latin letters of the table end: Latin-1,
// Latin Extended-A and -B.
const latinEnd = 0x250

var latinTransliterations = sync.OnceValue(func() *[latinEnd]string {
	var t [latinEnd]string
	for c := rune(utf8.RuneSelf); c < latinEnd; c++ {
		t[c] = unidecode.Unidecode(string(c))
	}
	return &t
})

// addByte feeds one byte of a transliteration, as AppendSlug folds it.
func (l *slugLength) addByte(c byte) {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		if l.gap && l.n > 0 {
			l.n++ // the '-' that the gap becomes
		}
		l.gap = false
		l.n++
	case c == '\'' || c == '`':
	default:
		l.gap = true
	}
}

// asciiSpan is MatchSpanAt for a name whose letters are ASCII up to the
// end of the span, where a rune is a byte and the slug grows as AppendSlug
// writes it, one byte of the name at a time: no folding of ever longer
// prefixes, and no reading of the name past the span. ok is false when a
// byte of another rune comes first: then foldedSpan must fold the name.
// Up to that byte the two count alike, so a span found before it is the
// span foldedSpan finds.
func asciiSpan(name string, offset, n int) (sp Span, ok bool) {
	folded, start, gap := 0, -1, false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
			if gap && folded > 0 {
				folded++ // the '-' that the gap becomes
			}
			gap = false
			folded++
		case c >= utf8.RuneSelf:
			return Span{}, false
		case c == '\'' || c == '`':
			continue
		default:
			gap = true
			continue
		}
		if start < 0 {
			if folded <= offset {
				continue
			}
			start = i
		}
		if folded >= offset+n {
			return Span{Start: start, End: i + 1}, true
		}
	}
	if start < 0 {
		return Span{}, true
	}
	return Span{Start: start, End: len(name)}, true
}
