package embedded

import (
	"log/slog"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// starts4Everywhere is the definition of the 4-byte starts of buildGrams,
// computed the long way: every 4-byte string of the alphabet, in code
// order, gets the first key whose slug is not less than it.
func starts4Everywhere(x *index, g grams) []uint32 {
	const n3 = trigramSymbols * trigramSymbols * trigramSymbols
	const width = trigramSymbols + 1
	want := make([]uint32, len(g.starts4))
	gramStarts(x, 4, n3*trigramSymbols, func(code int, v uint32, _ []uint32) {
		c3, sym := code/trigramSymbols, code%trigramSymbols
		if c3 < n3 && g.chunk[c3] != 0 {
			want[int(g.chunk[c3]-1)*width+sym] = v
		}
		if sym == 0 && c3 > 0 && g.chunk[c3-1] != 0 {
			want[int(g.chunk[c3-1]-1)*width+trigramSymbols] = v
		}
	})
	return want
}

// The 4-byte starts that buildGrams finds range by range are those of
// every 4-byte string, for the keys of whole names and of later words, on
// real names (alternate names in other scripts among them) and on slugs
// made to sit at the edges of the ranges ("abc" before "abc-", "abd"
// after "abcz").
func TestGramsAgreeWithEveryFourByteString(t *testing.T) {
	edges := []string{"abc", "abc-", "abc-d", "abc0", "abca", "abcz", "abczz", "abd", "abd", "abd-x", "zzz", "zzzz", "zzzzz", "-ab", "-abc"}
	var made []search.City
	for i, slug := range edges {
		for j := range 5 { // more than denseGram keys per 3-byte string
			made = append(made, search.City{ID: uint32(1 + 10*i + j), Name: slug, Slug: slug, Country: "X", CountryCode: "xx", Population: int64(j)})
		}
	}
	for _, tc := range []struct {
		name   string
		cities []search.City
	}{
		{"reference cities", storetest.ReferenceCities(3000)},
		{"edges", made},
		{"GeoNames", geoNamesCities(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x"+FileExt)
			b := build{scanLimit: DefaultScanLimit, listCap: search.MaxLimit, enter: func(string) {}}
			if _, err := buildFile(t.Context(), &search.SliceReader{Cities: tc.cities}, path, b, slog.New(slog.DiscardHandler)); err != nil {
				t.Fatal(err)
			}
			s, err := openSnapshot(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range []*index{&s.names, &s.words} {
				if len(x.grams.starts4) == 0 && x.n > 100 {
					t.Errorf("no long range among %d keys (words: %t): the test shows nothing", x.n, x.words)
				}
				if want := starts4Everywhere(x, x.grams); !slices.Equal(x.grams.starts4, want) {
					t.Errorf("words %t: the 4-byte starts differ from those of every 4-byte string", x.words)
				}
			}
		})
	}
}
