package importer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// nameTidier keeps the names of a place worth matching: one per key (see
// search.AltKey), the first given; none whose key is empty, none longer
// than MaxAltNameRunes, no links, and no alternate name that reads as a
// code or a machine transliteration (see codeLike, uncapitalised). Every
// script is kept: "Москва" beside "Moskva".
type nameTidier struct {
	buf []byte
}

// tidy returns the names of a place worth matching and their keys.
func (t *nameTidier) tidy(name, ascii string, alternates []string) (names, keys []string) {
	keep := func(n string) {
		if n == "" || strings.Contains(n, "://") || utf8.RuneCountInString(n) > MaxAltNameRunes {
			return
		}
		t.buf = search.AppendAltKey(t.buf[:0], n)
		if len(t.buf) == 0 || slices.Contains(keys, string(t.buf)) {
			return
		}
		names = append(names, n)
		keys = append(keys, string(t.buf))
	}
	keep(name)
	if ascii != name {
		keep(ascii)
	}
	for _, n := range alternates {
		if !codeLike(n) && !uncapitalised(n) {
			keep(n)
		}
	}
	return slices.Clip(names), slices.Clip(keys)
}

// codeLike reports whether an alternate name reads as a code rather than a
// name: 2 to 4 capital ASCII letters, as GeoNames lists airport and
// abbreviated names ("LON", "NYC", "SP"). A query would find London as
// "LON" before any place whose name starts so.
func codeLike(name string) bool {
	if len(name) < 2 || len(name) > 4 {
		return false
	}
	for i := range len(name) {
		if name[i] < 'A' || name[i] > 'Z' {
			return false
		}
	}
	return true
}

// uncapitalised reports whether an alternate name is in Latin letters
// none of which is a capital: GeoNames lists machine transliterations so
// ("toripori" for Tripoli, "bei luo ao li cang te" for Belo Horizonte),
// which no one types, where the names people use are capitalised.
func uncapitalised(name string) bool {
	if search.OtherScript(name) {
		return false
	}
	letters := false
	for _, r := range name {
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			return false
		}
		letters = letters || unicode.IsLetter(r)
	}
	return letters
}

// slug returns the slug of name: that of names[k], whose key is keys[k],
// when it is name.
func (t *nameTidier) slug(name string, names, keys []string, k int) string {
	if k < len(names) && names[k] == name {
		return search.Unmarked(keys[k])
	}
	return search.Slug(name)
}

// otherNames are the names of a place (see nameTidier) for a city whose
// slug is slug: every name but the one whose key is slug. The slice may be
// shared between the cities of the place, and has no room to grow, so that
// appending to it copies.
func otherNames(names, slugs []string, slug string) []string {
	for k, s := range slugs {
		if s != slug {
			continue
		}
		if k == 0 {
			return clip(names[1:])
		}
		out := make([]string, 0, len(names)-1)
		return append(append(out, names[:k]...), names[k+1:]...)
	}
	return clip(names)
}

func clip(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s[:len(s):len(s)]
}
