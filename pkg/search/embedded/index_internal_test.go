package embedded

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// The range bounds finds for a prefix, through the gram tables and a
// binary search, is exactly the keys that start with it: checked against
// a brute-force scan in both indexes, for every prefix of every key; and
// so is the names' range descend finds in the trie.
func TestBoundsHoldEveryKey(t *testing.T) {
	s, err := Open(t.TempDir(), Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cities := storetest.ReferenceCities(3000)
	// After a 'z' the next string starts with a shorter one: "abd" and
	// "ac" follow "abcz" and "abz", whose ranges must not take them in;
	// "abc" has more keys than a range needs to be split by its fourth.
	for _, name := range []string{"Abz", "Ac", "Abcz", "Abd", "Ab"} {
		cities = append(cities, storetest.City(name, "X", "", 0))
	}
	for i := range denseGram + 1 {
		cities = append(cities, storetest.City(fmt.Sprintf("Abcq %d", i), "X", "", 0))
	}
	storetest.MustLoad(t, s, search.Large, cities...)
	snap := s.snaps[search.Large]
	for _, x := range []*index{&snap.names, &snap.words} {
		prefixes := map[string]bool{}
		for k := range uint32(x.n) {
			slug := x.slug(k)
			if k > 0 && bytes.Compare(x.slug(k-1), slug) > 0 {
				t.Fatalf("keys %d and %d out of order: %q, %q", k-1, k, x.slug(k-1), slug)
			}
			for n := 1; n <= len(slug); n++ {
				prefixes[string(slug[:n])] = true
			}
		}
		for p := range prefixes {
			lo, hi := x.bounds(p)
			wantLo, wantHi := -1, -1
			for k := range x.n {
				if bytes.HasPrefix(x.slug(uint32(k)), []byte(p)) {
					if wantLo < 0 {
						wantLo = k
					}
					wantHi = k + 1
				}
			}
			if lo != wantLo || hi != wantHi {
				t.Errorf("words %v: bounds(%q) = [%d, %d), want [%d, %d)", x.words, p, lo, hi, wantLo, wantHi)
			}
			if x.words {
				continue
			}
			// The names' range from the trie (see find), and none for a
			// prefix of no key that differs from one in its last byte.
			if lo, hi := x.descend([]byte(p)); lo != wantLo || hi != wantHi {
				t.Errorf("descend(%q) = [%d, %d), want [%d, %d)", p, lo, hi, wantLo, wantHi)
			}
			if miss := p[:len(p)-1] + "x"; !prefixes[miss] {
				if lo, hi := x.descend([]byte(miss)); lo != hi {
					t.Errorf("descend(%q) = [%d, %d), want none", miss, lo, hi)
				}
			}
		}
	}
}

// A snapshot whose header was damaged (the checksum covers only what
// follows it) is refused or read, never a panic, whatever byte changed;
// one whose body was damaged is refused by its checksum.
func TestParseSurvivesDamage(t *testing.T) {
	s, err := Open(t.TempDir(), Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cities := storetest.ReferenceCities(300)
	storetest.MustLoad(t, s, search.Large, cities...)
	data, err := os.ReadFile(s.Path(search.Large))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseSnapshot(data); err != nil {
		t.Fatal(err)
	}
	for i := range headerSize {
		for _, v := range []byte{0, 1, 0x7f, 0xff, data[i] ^ 0x10} {
			damaged := slices.Clone(data)
			damaged[i] = v
			parseSnapshot(damaged) // must not panic
		}
	}
	damaged := slices.Clone(data)
	damaged[headerSize+(len(data)-headerSize)/2] ^= 1
	if _, err := parseSnapshot(damaged); !errors.Is(err, errCorrupt) {
		t.Errorf("a flipped bit in the body: err = %v, want errCorrupt", err)
	}
}

// readStats, which reads a snapshot file through a buffer, describes it as
// the snapshot read into memory does, and refuses a damaged one.
func TestReadStats(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	src := search.Source{Name: "cities.txt", Size: 1234}
	if _, err := s.Load(t.Context(), search.Large, &search.SliceReader{Cities: storetest.ReferenceCities(300)}, search.LoadOptions{Source: src}); err != nil {
		t.Fatal(err)
	}
	path := s.Path(search.Large)
	got, err := readStats(path)
	if want := s.snaps[search.Large].stats(); err != nil || got.Cities != want.Cities || !got.Imported.Equal(want.Imported) || got.Source != src {
		t.Errorf("readStats = %+v, %v; want %+v", got, err, want)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 1
	damaged := filepath.Join(dir, "damaged.cfs")
	if err := os.WriteFile(damaged, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readStats(damaged); !errors.Is(err, errCorrupt) {
		t.Errorf("readStats of a damaged file: err = %v, want errCorrupt", err)
	}
}

// A fixedBox keeps exactly the stored coordinates whose degrees, as
// recordView.location reads them, search.Box.Contains keeps: checked at
// and around each edge of boxes whose edges are and are not whole steps
// of the fixed point, and for a record without a location.
func TestFixedBoxAgreesWithBox(t *testing.T) {
	for _, b := range []search.Box{
		{MinLon: -25, MinLat: 34, MaxLon: 45, MaxLat: 72},
		{MinLon: -91.51, MinLat: 36.97, MaxLon: -87.49, MaxLat: 42.51},
		{MinLon: -73.5346, MinLat: -35.6958, MaxLon: -67.7854, MaxLat: -31.2042}, // 250 km around Santiago de Chile
		{MinLon: 0.1e-7, MinLat: -1.00000005, MaxLon: 0.3e-7, MaxLat: 1.00000005},
		{MinLon: -180, MinLat: -90, MaxLon: 180, MaxLat: 90},
		{MinLon: 2.35, MinLat: 48.85, MaxLon: 2.35, MaxLat: 48.85},
		{MinLon: 2.35, MinLat: 1.00000005, MaxLon: 2.35, MaxLat: 1.00000005}, // between two steps: holds nothing
	} {
		t.Run(fmt.Sprint(b), func(t *testing.T) {
			fb := newFixedBox(&b)
			edges := []float64{b.MinLat, b.MaxLat, b.MinLon, b.MaxLon}
			rec := make(recordView, recordSize)
			for _, lat := range edges {
				for _, lon := range edges {
					for dLat := int32(-3); dLat <= 3; dLat++ {
						for dLon := int32(-3); dLon <= 3; dLon++ {
							c := cityRecord{lat: fixedDegrees(lat) + dLat, lon: fixedDegrees(lon) + dLon}
							c.put(rec)
							rLat, rLon, _ := rec.location()
							if got, want := fb.contains(rec), b.Contains(rLat, rLon); got != want {
								t.Fatalf("(%d, %d): contains = %v, Box.Contains(%v, %v) = %v", c.lat, c.lon, got, rLat, rLon, want)
							}
						}
					}
				}
			}
			c := cityRecord{lat: noLocation}
			c.put(rec)
			if fb.contains(rec) {
				t.Error("a record without a location is in the box")
			}
		})
	}
}
