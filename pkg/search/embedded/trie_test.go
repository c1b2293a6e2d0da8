package embedded

import (
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// The trie holds exactly the prefixes of the keys down to its depth, each
// node's children in byte order, and each node's range of keys: those
// that start with its path, once the keys shorter than its depth are
// trimmed from the end.
func TestTrieHoldsEveryPrefix(t *testing.T) {
	keys := []string{"a", "ab", "abc", "abcd", "abcde", "abcdz", "abd", "b", "b-c", "ba9", "zz", "zzzzzz"}
	const depth = 3
	sec := buildTrie(len(keys), func(i uint32) []byte { return []byte(keys[i]) }, depth)
	tr, err := parseTrie(sec, len(keys))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, k := range keys {
		for n := 1; n <= min(len(k), depth); n++ {
			want[k[:n]] = true
		}
	}
	got := map[string]bool{}
	var walk func(d int, k uint32, path string)
	walk = func(d int, k uint32, path string) {
		w := tr.node(d, k)
		if d > 0 {
			lo, hi := tr.keysAt(d, k)
			for hi > lo && len(keys[hi-1]) < d {
				hi--
			}
			want := slices.IndexFunc(keys, func(key string) bool { return strings.HasPrefix(key, path) })
			wantHi := want
			for wantHi < len(keys) && strings.HasPrefix(keys[wantHi], path) {
				wantHi++
			}
			if int(lo) != want || int(hi) != wantHi {
				t.Errorf("node %q holds keys [%d, %d), want [%d, %d)", path, lo, hi, want, wantHi)
			}
		}
		if d == depth {
			lo, hi := tr.keys(k)
			for i := lo; i < hi; i++ {
				if len(keys[i]) >= depth && !strings.HasPrefix(keys[i], path) {
					t.Errorf("node %q holds key %q", path, keys[i])
				}
			}
			if !strings.HasPrefix(keys[lo], path) {
				t.Errorf("node %q starts at key %q", path, keys[lo])
			}
			return
		}
		for set := w & childMask; set != 0; set &= set - 1 {
			sym := bits.TrailingZeros64(set)
			p := path + string(search.SlugBytes[sym])
			got[p] = true
			walk(d+1, child(w, sym), p)
		}
	}
	walk(0, 0, "")
	if !mapsEqual(got, want) {
		t.Errorf("trie holds %v, want %v", sorted(got), sorted(want))
	}
}

// A key with a byte outside the slug alphabet leaves the dataset without a
// trie (its typo lookups take the Service's walk), and a damaged section
// is refused.
func TestTrieRefusesWhatItCannotHold(t *testing.T) {
	if sec := buildTrie(2, func(i uint32) []byte { return []byte([]string{"ab", "a_c"}[i]) }, 2); sec != nil {
		t.Errorf("a key with '_' gave a trie section of %d bytes", len(sec))
	}
	keys := []string{"abc", "abd", "b"}
	sec := buildTrie(len(keys), func(i uint32) []byte { return []byte(keys[i]) }, 2)
	for _, bad := range []func([]byte) []byte{
		func(b []byte) []byte { return b[:len(b)-1] },            // truncated
		func(b []byte) []byte { b[0] = 99; return b },            // depth
		func(b []byte) []byte { b[len(b)-1] = 0xff; return b },   // the sentinel's key index
		func(b []byte) []byte { b[4+4+8+4+7] |= 0x40; return b }, // a child index of level 1
		func(b []byte) []byte { b[4+4+8+4] ^= 1; return b },      // a child set of level 1
	} {
		if _, err := parseTrie(bad(slices.Clone(sec)), len(keys)); err == nil {
			t.Errorf("a damaged trie section was accepted")
		}
	}
}

func mapsEqual(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func sorted(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
