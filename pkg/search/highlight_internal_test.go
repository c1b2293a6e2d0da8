package search

import (
	"testing"
	"unicode/utf8"
)

// The fast path for names ASCII up to the end of their span gives the
// spans that folding prefixes does, and leaves to folding only the names
// that have another rune before then.
func FuzzASCIISpan(f *testing.F) {
	for _, s := range []string{"Paris", " bab el ahmar", "Xi'an", "N'Djamena", "Par-is", "--a  b--", "São", "Sao Paulo é", "Ab ü", "a\xffb"} {
		f.Add(s, 0, 3)
	}
	f.Fuzz(func(t *testing.T, name string, offset, n int) {
		if offset < 0 || n < 1 || offset > 200 || n > 200 {
			return
		}
		got, ok := asciiSpan(name, offset, n)
		if !ok {
			if isASCIIText(name) {
				t.Fatalf("name %q offset %d n %d: ASCII, left to folding", name, offset, n)
			}
			return
		}
		if want := foldedSpan(name, offset, n); got != want {
			t.Fatalf("name %q offset %d n %d: ASCII path %+v, folding %+v", name, offset, n, got, want)
		}
	})
}

// isASCIIText reports whether s is all ASCII.
func isASCIIText(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// Folding rune by rune counts the bytes of the slug of every prefix of a
// name, as folding the prefix does: what foldedSpan counts on.
func FuzzSlugLength(f *testing.F) {
	for _, s := range []string{"Zürich", "São Paulo", "القاهرة", "東京", "Þórshöfn", " ßtraße-x", "a\xffb", "\ufffd é", "Xi'an--Ö"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		var l slugLength
		for i, r := range name {
			end := i + utf8.RuneLen(r)
			if r == utf8.RuneError {
				end = i + 1
			}
			l.add(name[i:end])
			if want := len(Slug(name[:end])); l.n != want {
				t.Fatalf("name %q to byte %d: rune by rune %d bytes, folded %d", name, end, l.n, want)
			}
		}
	})
}
