package embedded

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// geoNamesSnapshot builds and opens the snapshot of the shared GeoNames
// dump, with its alternate names (keys in other scripts among them).
func geoNamesSnapshot(t *testing.T) *snapshot {
	t.Helper()
	path := filepath.Join(t.TempDir(), "large"+FileExt)
	b := build{scanLimit: DefaultScanLimit, listCap: search.MaxLimit, source: search.Source{Name: "cities1000.txt.gz"}, enter: func(string) {}}
	if _, err := buildFile(t.Context(), &search.SliceReader{Cities: geoNamesCities(t)}, path, b, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	s, err := openSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	<-s.aidsBuilt
	if s.jumps.Load() == nil {
		t.Fatal("no jump lists")
	}
	return s
}

// Each jump list names exactly the nodes of its depth that the trie
// continues with its string, in order: checked against every path of the
// trie, with 16-bit indexes and with 32.
func TestJumpListsHoldEveryDescent(t *testing.T) {
	s := geoNamesSnapshot(t)
	// want[d][code]: the nodes of depth d followed by the string of code.
	want := make([]map[uint32][]uint32, jumpMax+1)
	wantLands := make([]map[uint32][]uint32, jumpMax+1) // the nodes the jumps land on
	for d := range want {
		want[d], wantLands[d] = map[uint32][]uint32{}, map[uint32][]uint32{}
	}
	var walk func(d int, k uint32, path []int)
	walk = func(d int, k uint32, path []int) {
		if from := d - jumpLen; from >= jumpMin && from <= jumpMax {
			code := uint32((path[from]*trigramSymbols+path[from+1])*trigramSymbols + path[from+2])
			want[from][code] = append(want[from][code], s.nodeAt(path[:from]))
			wantLands[from][code] = append(wantLands[from][code], k)
		}
		if d == jumpMax+jumpLen {
			return
		}
		w := s.trie.node(d, k)
		c := uint32(w >> indexShift)
		for set := w & childMask; set != 0; set &= set - 1 {
			walk(d+1, c, append(path, trailing(set)))
			c++
		}
	}
	walk(0, 0, nil)
	for _, narrow := range []int{jumpNarrow, 0} {
		t.Run(fmt.Sprintf("16-bit indexes up to %d nodes", narrow), func(t *testing.T) {
			defer func(n int) { jumpNarrow = n }(jumpNarrow)
			jumpNarrow = narrow
			j := buildJumps(s.trie)
			for d := jumpMin; d <= jumpMax; d++ {
				l := j.lists[d]
				if l == nil {
					t.Fatalf("depth %d: no list", d)
				}
				if (l.nodes16 != nil) != (len(s.trie.levels[d])/wordSize <= narrow) {
					t.Errorf("depth %d: 16-bit indexes %t for %d nodes", d, l.nodes16 != nil, len(s.trie.levels[d])/wordSize)
				}
				n := 0
				for code := range uint32(jumpGrams) {
					var got, lands []uint32
					for i := l.starts[code]; i < l.starts[code+1]; i++ {
						lands = append(lands, l.lands[i])
						if l.nodes16 != nil {
							got = append(got, uint32(l.nodes16[i]))
						} else {
							got = append(got, l.nodes32[i])
						}
					}
					n += len(got)
					if !slices.Equal(got, want[d][code]) {
						t.Fatalf("depth %d, string %d: %v, want %v", d, code, got, want[d][code])
					}
					if !slices.Equal(lands, wantLands[d][code]) {
						t.Fatalf("depth %d, string %d: lands on %v, want %v", d, code, lands, wantLands[d][code])
					}
				}
				t.Logf("depth %d: %d nodes of %d followed by %d strings", d, n, len(s.trie.levels[d])/wordSize, len(want[d]))
			}
		})
	}
}

// nodeAt returns the index in its level of the trie node whose path is
// the symbols path.
func (s *snapshot) nodeAt(path []int) uint32 {
	k := uint32(0)
	for d, sym := range path {
		k = child(s.trie.node(d, k), sym)
	}
	return k
}

func trailing(set uint64) int {
	for i := range 64 {
		if set&(1<<i) != 0 {
			return i
		}
	}
	return -1
}

// The walk that jumps over spent nodes finds what the walk that follows
// them finds, the same corrections with the same edits and keys, and the
// same range of prefix matches: on thousands of misspelled prefixes of real
// names, main and alternate, within two edits (the walks of one do not
// jump), with one walker reused across them all (as the pool reuses it),
// with the jump lists' 16-bit indexes and with 32-bit ones.
func TestJumpsFindWhatTheWalkFinds(t *testing.T) {
	s := geoNamesSnapshot(t)
	n := 4000
	if testing.Short() {
		n = 400
	}
	queries := append(misspelledSlugs(rand.New(rand.NewPCG(26, 2)), s, n),
		// Repeated letters, whose positions land on the same nodes.
		"aaaaaaaaaa", "abababababab", "annanannanan", "mississippi", "lalalala",
		// Short ones, whose positions reach the end within a jump.
		"parsi", "lodnon", "brelin", "tokoy",
		// Transpositions at the start.
		"aprisfrance", "lnodonderry", "ohkaido-japan")
	for _, narrow := range []int{jumpNarrow, 0} {
		t.Run(fmt.Sprintf("16-bit indexes up to %d nodes", narrow), func(t *testing.T) {
			defer func(n int) { jumpNarrow = n }(jumpNarrow)
			jumpNarrow = narrow
			lists := buildJumps(s.trie)
			defer s.jumps.Store(s.jumps.Load())
			w, ref := new(typoWalk), new(typoWalk)
			jumped := 0
			for _, q := range queries {
				s.jumps.Store(lists)
				got := walkCorrections(w, s, q, maxTypoEdits)
				jumped += len(w.aside)
				s.jumps.Store(nil)
				if want := walkCorrections(ref, s, q, maxTypoEdits); !slices.Equal(got, want) {
					t.Fatalf("%q: the walk that jumps finds\n%v\nthe walk that follows\n%v", q, got, want)
				}
			}
			if jumped == 0 {
				t.Fatal("no walk jumped")
			}
			t.Logf("%d queries, %d nodes on the paths of jumps", len(queries), jumped)
		})
	}
}

// walkCorrections walks s with w for query within edits, and describes the
// corrections it finds and its range of prefix matches, sorted.
func walkCorrections(w *typoWalk, s *snapshot, query string, edits int) []string {
	w.init(s, query, edits, false)
	w.run()
	found, arena := w.corrections()
	out := make([]string, 0, len(found)+1)
	for _, c := range found {
		out = append(out, fmt.Sprintf("%s %d edits, keys %d-%d", arena[c.off:c.off+c.depth], c.edits, c.lo, c.hi))
	}
	slices.Sort(out)
	lo, hi := w.prefixed()
	return append(out, fmt.Sprintf("prefix matches %d-%d", lo, hi))
}

// misspelledSlugs returns n prefixes of the keys of s, of 5 to 21 bytes,
// each with one or two random insertions, deletions, substitutions or
// transpositions, as typoWalk takes them (bytes of the slug alphabet).
func misspelledSlugs(rng *rand.Rand, s *snapshot, n int) []string {
	var out []string
	for len(out) < n {
		slug := string(s.slug(uint32(rng.IntN(s.count))))
		if len(slug) < 5 {
			continue
		}
		if q := misspell(rng, []byte(slug[:5+rng.IntN(min(len(slug), 22)-4)])); len(q) >= 5 && isSlug(string(q)) {
			out = append(out, string(q))
		}
	}
	return out
}

// misspell makes one or two random insertions, deletions, substitutions or
// transpositions in q, which it may reuse, and returns the result.
func misspell(rng *rand.Rand, q []byte) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz0123456789"
	for range 1 + rng.IntN(2) {
		i := rng.IntN(len(q))
		switch rng.IntN(4) {
		case 0:
			q = slices.Insert(q, i, alphabet[rng.IntN(len(alphabet))])
		case 1:
			q = slices.Delete(q, i, i+1)
		case 2:
			q[i] = alphabet[rng.IntN(len(alphabet))]
		default:
			if i+1 < len(q) {
				q[i], q[i+1] = q[i+1], q[i]
			}
		}
	}
	return q
}
