package embedded

import (
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// starts4Searched is the definition of the 4-byte starts of buildGrams,
// found another way: for each entry of each chunk, a binary search of all
// the keys for the first whose 4-byte floor is not less than the entry's
// 4-byte string.
func starts4Searched(x *index, g grams) []uint32 {
	const width = trigramSymbols + 1
	want := make([]uint32, len(g.starts4))
	for c3, ch := range g.chunk {
		if ch == 0 {
			continue
		}
		for sym := range width {
			code := c3*trigramSymbols + sym
			want[int(ch-1)*width+sym] = uint32(sort.Search(x.n, func(i int) bool { return gramFloor(x.slug(uint32(i)), 4) >= code }))
		}
	}
	return want
}

// The 4-byte starts that buildGrams finds range by range are those that a
// binary search of all the keys finds, for the keys of whole names and of later words, on
// real names (alternate names in other scripts among them) and on slugs
// made to sit at the edges of the ranges ("abc" before "abc-", "abd"
// after "abcz"). TestSnapshotBytes checks those of the GeoNames dump.
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
			assertGramsAgree(t, s)
		})
	}
}

// assertGramsAgree checks the 4-byte starts of both of s's indexes
// against those a binary search finds.
func assertGramsAgree(t *testing.T, s *snapshot) {
	t.Helper()
	for _, x := range []*index{&s.names, &s.words} {
		if len(x.grams.starts4) == 0 && x.n > 100 {
			t.Errorf("no long range among %d keys (words: %t): the test shows nothing", x.n, x.words)
		}
		if want := starts4Searched(x, x.grams); !slices.Equal(x.grams.starts4, want) {
			t.Errorf("words %t: the 4-byte starts differ from those a binary search finds", x.words)
		}
		for code := range len(x.grams.starts3) {
			if want := uint32(sort.Search(x.n, func(i int) bool { return gramFloor(x.slug(uint32(i)), 3) >= code })); x.grams.starts3[code] != want {
				t.Fatalf("words %t: the start of 3-byte string %d is key %d, a binary search finds %d", x.words, code, x.grams.starts3[code], want)
			}
		}
	}
}
