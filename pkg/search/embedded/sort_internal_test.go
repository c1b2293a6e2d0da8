package embedded

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortByHead orders by slug, then by the tie-break, then by position, as a
// plain comparison sort does, for slugs that share long prefixes (up to 18
// bytes, beyond two heads) and slugs that repeat, and for slugs that all
// fall in one part of the split.
func TestSortByHead(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, n := range []int{0, 1, 2, 3, 17, 1000, 20000} {
		slugs := make([][]byte, n)
		for i := range slugs {
			s := []byte("santa-maria-de-la-")[:rng.IntN(19)]
			if n == 17 {
				s = []byte("sa") // one top digit: every slug in one part
			}
			for range rng.IntN(12) {
				s = append(s, "abz-09"[rng.IntN(6)])
			}
			if len(s) == 0 {
				s = []byte("x")
			}
			slugs[i] = s
		}
		tie := func(a, b uint32) int { return int(b%3) - int(a%3) } // not the input order, and ties
		// The keys cut the order in two: 2 before 0 and 1.
		cut := func(i uint32) uint64 { return uint64(min(1, 2-i%3)) }
		got, _ := sortByHead(n, func(i uint32) []byte { return slugs[i] }, tieBreak{key: cut, compare: tie})
		want := make([]uint32, n)
		for i := range want {
			want[i] = uint32(i)
		}
		slices.SortFunc(want, func(a, b uint32) int {
			if c := bytes.Compare(slugs[a], slugs[b]); c != 0 {
				return c
			}
			if c := tie(a, b); c != 0 {
				return c
			}
			return int(a) - int(b)
		})
		if !slices.Equal(got, want) {
			t.Errorf("%d slugs: got %s", n, fmt.Sprint(got[:min(n, 20)]))
		}
	}
}
