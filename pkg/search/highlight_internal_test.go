package search

import "testing"

// The fast path for ASCII names gives the spans that folding prefixes does.
func FuzzASCIISpan(f *testing.F) {
	for _, s := range []string{"Paris", " bab el ahmar", "Xi'an", "N'Djamena", "Par-is", "--a  b--", "São"} {
		f.Add(s, 0, 3)
	}
	f.Fuzz(func(t *testing.T, name string, offset, n int) {
		if !isASCII(name) || offset < 0 || n < 1 || offset > 200 || n > 200 {
			return
		}
		if got, want := asciiSpan(name, offset, n), foldedSpan(name, offset, n); got != want {
			t.Fatalf("name %q offset %d n %d: ASCII path %+v, folding %+v", name, offset, n, got, want)
		}
	})
}
