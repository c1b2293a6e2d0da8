package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Counting what a person typed. Matching compares folded text (see Slug),
// but how long a query is, for the minimum length and for the typo budget,
// is a question about what the person typed, and folding changes lengths
// by script: unidecode drops the Arabic alif ("القا", four letters, folds
// to "lq"), and turns a Chinese character into a syllable of two to six
// letters ("東京", two characters, folds to "dong-jing").

// typoLetters counts the letters of text, a query as typed or folded,
// that the typo budget goes by (see MaxEdits): what a person typed, but
// never more than the letters it folds to, on which the edits are made.
// A letter or mark of a script other than Latin is one character typed
// (a syllable or a word in Han, kana or hangul; a letter or a vowel sign
// in Cyrillic, Arabic or Devanagari), any other character as many as it
// folds to ("ß" is two). So "東京" counts two though it folds to eight
// letters ("dong-jing"), "Щёлк" four though it folds to eight
// ("shchiolk"), and "القاهرة" four, the letters of "lqhr", though seven were
// typed. Text in Latin letters, or already folded, counts its folded
// letters.
func typoLetters(text string) int {
	typed, folded := 0, 0
	var buf [16]byte
	for i := 0; i < len(text); {
		if c := text[i]; c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
				typed++
				folded++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		n := len(AppendSlug(buf[:0], text[i:i+size])) // one character folds to no '-'
		folded += n
		if otherScript(r) && (unicode.IsLetter(r) || unicode.IsMark(r)) {
			typed++
		} else {
			typed += n
		}
		i += size
	}
	return min(typed, folded)
}

// queryLetters counts the letters of text, a query as typed, whose slug is
// folded, for the minimum length (see MinQueryLetters): the letters and
// digits of folded, or the letters typed in a script other than Latin when
// they are more. "القا" has four letters though it folds to "lq"; "東京"
// folds to eight ("dong-jing"). Text in Latin letters counts exactly its
// folded letters, and a text that folds to nothing counts none.
func queryLetters(text, folded string) int {
	n := letters(folded)
	if n == 0 {
		return 0
	}
	typed := 0
	for _, r := range text {
		if otherScriptLetter(r) {
			typed++
		}
	}
	return max(n, typed)
}

// otherScriptLetter reports whether r is a letter of a script other than
// Latin; modifier letters such as 'ʻ' are of no script.
func otherScriptLetter(r rune) bool {
	return otherScript(r) && unicode.IsLetter(r)
}

// otherScript reports whether r is of a script other than Latin, and of
// one script: not of those shared by all (digits, punctuation, the kana
// length mark, combining accents).
func otherScript(r rune) bool {
	return r >= utf8.RuneSelf && !unicode.In(r, unicode.Latin, unicode.Common, unicode.Inherited)
}

// preferScript makes each prefix match of hits that matched an alternate
// name in a script other than that of text, the query as typed, show an
// alternate name of the city in the query's script instead, when one
// matches the folded query prefix just as well: "Моск" lists Moscow as
// "Москва", not as the Greek "Μόσχα" that folds to a key sorting before
// it. Every name in a script other than Latin shares one key space (see
// AltKey), so the store picks between such keys by their letters alone.
// The order of hits stays: a name that matches as well (both the whole
// key or both a prefix of it) weighs the same (see Weight).
func preferScript(hits []Hit, text, prefix string) {
	script := scriptOf(text)
	if script == nil {
		return
	}
	for i := range hits {
		h := &hits[i]
		if h.Edits > 0 || h.Matched == nil || inScript(h.Matched.Name, script) {
			continue
		}
		whole := AltKey(h.Matched.Name) == prefix
		for _, alt := range h.AltNames {
			if !inScript(alt, script) {
				continue
			}
			if key := AltKey(alt); strings.HasPrefix(key, prefix) && (key == prefix) == whole {
				h.Matched = &NameMatch{Name: alt, Span: MatchSpan(alt, len(prefix)-1)}
				break
			}
		}
	}
}

// scriptOf returns the script of the first letter of text in a script
// other than Latin, or nil when there is none.
func scriptOf(text string) *unicode.RangeTable {
	for _, r := range text {
		if !otherScriptLetter(r) {
			continue
		}
		for _, t := range unicode.Scripts {
			if unicode.Is(t, r) {
				return t
			}
		}
	}
	return nil
}

// inScript reports whether the first letter of name in a script other
// than Latin is of script.
func inScript(name string, script *unicode.RangeTable) bool {
	for _, r := range name {
		if otherScriptLetter(r) {
			return unicode.Is(script, r)
		}
	}
	return false
}
