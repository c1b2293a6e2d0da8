package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ScriptMark starts the key of a name written in a script other than
// Latin (see AltKey). No slug starts with '-', so such keys sort apart and
// only queries in such a script reach them.
const ScriptMark = '-'

// AltKey returns the key of an alternate name: its slug, behind ScriptMark
// when the name has letters of a script other than Latin ("Москва" →
// "-moskva", "東京" → "-dong-jing"), or "" when the slug is empty. The
// transliterated forms of such names stay out of the way of queries typed
// in Latin letters: "lon" lists London, not Los Angeles through a Hindi
// name that transliterates to "los-enjeles".
func AltKey(name string) string {
	return string(AppendAltKey(nil, name))
}

// AppendAltKey appends AltKey(name) to dst.
func AppendAltKey(dst []byte, name string) []byte {
	start := len(dst)
	if !OtherScript(name) {
		return AppendSlug(dst, name)
	}
	dst = AppendSlug(append(dst, ScriptMark), name)
	if len(dst) == start+1 {
		return dst[:start]
	}
	return dst
}

// OtherScript reports whether s has a letter of a script other than Latin.
func OtherScript(s string) bool {
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unicode.IsLetter(r) && !unicode.Is(unicode.Latin, r) {
			return true
		}
		i += n
	}
	return false
}

// Unmarked returns a key without its ScriptMark: the slug it holds.
func Unmarked(key string) string {
	return strings.TrimPrefix(key, string(ScriptMark))
}

// NameKey is one way a query reaches a city: the slug of one of its names,
// or of the end of its name from a later word. A city has a key for its
// Name, one for each alternate name whose key is new (see AltKey), and
// one for each later word of its Name (see Keys); queries match keys by
// prefix.
type NameKey struct {
	// Slug is the folded text that queries match by prefix, behind
	// ScriptMark for an alternate name in a script other than Latin.
	Slug string
	// Alt is 0 for the city's Name, i for its AltNames[i-1].
	Alt int
	// Offset is where Slug starts in the slug of that name: 0 for the
	// whole name, more for a later word ("york-city" is offset 4 of
	// "new-york-city"). Only the main name has keys of later words.
	Offset int
}

// Word reports whether k starts at a later word of a name.
func (k NameKey) Word() bool { return k.Offset > 0 }

// Keys returns the keys of c: its slug, the key of each alternate name
// (see AltKey), then its slug from each later word, skipping any key that
// is empty or already a key.
func Keys(c *City) []NameKey {
	keys := make([]NameKey, 1, 1+len(c.AltNames)+strings.Count(c.Slug, "-"))
	keys[0] = NameKey{Slug: c.Slug}
	for i, alt := range c.AltNames {
		slug := AltKey(alt)
		if slug == "" || hasKey(keys, slug) {
			continue
		}
		keys = append(keys, NameKey{Slug: slug, Alt: i + 1})
	}
	for i := 0; i < len(c.Slug); i++ {
		if c.Slug[i] == '-' && i+1 < len(c.Slug) && !hasKey(keys, c.Slug[i+1:]) {
			keys = append(keys, NameKey{Slug: c.Slug[i+1:], Offset: i + 1})
		}
	}
	return keys
}

func hasKey(keys []NameKey, slug string) bool {
	for _, k := range keys {
		if k.Slug == slug {
			return true
		}
	}
	return false
}

// KeyName returns the name of c that key k folds: Name, or the alternate
// name it stands for.
func (c *City) KeyName(k NameKey) string {
	if k.Alt > 0 && k.Alt <= len(c.AltNames) {
		return c.AltNames[k.Alt-1]
	}
	return c.Name
}

// Found is a city that a store found for a query, with the key that
// reached it: of the city's keys that start with the query, the one that
// ranks it best (see CompareFound).
type Found struct {
	City
	Key NameKey
}
