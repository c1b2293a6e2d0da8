package embedded

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// What a chunked buffer is given after each reserve reads back in place at
// the offsets it had when written: in a chunk's middle, across the end of
// one (the write moves to the next), and larger than a chunk.
func TestChunkedReadsWritesInPlace(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		sizes []int
	}{
		{"small writes", []int{1, 7, 32, 100, 65535}},
		{"a write past a chunk's end", []int{chunkSize - 10, 20, 5}},
		{"a write that fills a chunk", []int{chunkSize, 1, chunkSize}},
		{"a write larger than a chunk", []int{3, 2*chunkSize + 17, 40, chunkSize - 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var c chunked
			var offs []int
			for i, n := range tt.sizes {
				c.reserve(n)
				offs = append(offs, c.len())
				c.write(bytes.Repeat([]byte{byte('a' + i)}, n))
				if c.len() != offs[i]+n {
					t.Fatalf("write %d: offset %d after %d bytes at %d", i, c.len(), n, offs[i])
				}
			}
			for i, n := range tt.sizes {
				if got := c.at(offs[i], n); !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + i)}, n)) {
					t.Errorf("write %d of %d bytes at %d reads back otherwise", i, n, offs[i])
				}
			}
		})
	}
}

// The cities a builder reads are its own in place: the records and
// strings readOrder returns are those of the cities added, across many
// chunks.
func TestReadOrderAgreesWithCitiesAdded(t *testing.T) {
	t.Parallel()
	b := newBuilder()
	var cities []search.City
	for i := range 200_000 {
		name := fmt.Sprintf("Place %d of a long name that fills chunks %s", i, bytes.Repeat([]byte("x"), i%300))
		c := search.City{ID: uint32(i + 1), Name: name, Slug: search.Slug(name), Country: "Country", CountryCode: "cc",
			Region: fmt.Sprint(i % 7), Population: int64(i), AltNames: []string{fmt.Sprintf("Alt %d", i)}}
		if err := b.add(&c); err != nil {
			t.Fatal(err)
		}
		cities = append(cities, c)
	}
	if len(b.arena.chunks) < 3 {
		t.Fatalf("the cities fill %d chunks: the test shows nothing", len(b.arena.chunks))
	}
	src := b.asRead()
	for i, c := range cities {
		k := uint32(i)
		rec := src.rec(k)
		if rec.id() != c.ID || string(src.slug(k)) != c.Slug || string(src.name(k)) != c.Name || src.pop(k) != c.Population {
			t.Fatalf("city %d reads back as id %d, slug %q, name %q, population %d; want %+v", i, rec.id(), src.slug(k), src.name(k), src.pop(k), c)
		}
		if got := src.arena.at(int(rec.slugOff()), len(c.Slug)+len(c.Name)+len(c.AltNames[0])); !slices.Equal(got, []byte(c.Slug+c.Name+c.AltNames[0])) {
			t.Fatalf("city %d: its strings do not lie together: %q", i, got)
		}
	}
}
