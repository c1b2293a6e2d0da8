package importer

import (
	"math/rand/v2"
	"testing"
)

// TestHeadTable checks the table against a map through several growths,
// with hashes that share their top bits, so that probes run long.
func TestHeadTable(t *testing.T) {
	tests := []struct {
		name string
		hash func(i uint64) uint64
	}{
		{"random", func(i uint64) uint64 { return rand.New(rand.NewPCG(i, 1)).Uint64() }},
		{"low bits only", func(i uint64) uint64 { return i }},
		{"high bits only", func(i uint64) uint64 { return i << 40 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var table headTable
			want := map[uint64]int32{}
			for i := range uint64(20_000) {
				h := tt.hash(i % 15_000) // some hashes twice
				if got, w := table.head(h), headOf(want, h); got != w {
					t.Fatalf("head(%#x) = %d before set %d, want %d", h, got, i, w)
				}
				table.set(h, int32(i))
				want[h] = int32(i)
			}
			for h, w := range want {
				if got := table.head(h); got != w {
					t.Fatalf("head(%#x) = %d, want %d", h, got, w)
				}
			}
			if got := table.head(1<<63 + 12345); got != -1 {
				t.Errorf("head of a hash never set = %d, want -1", got)
			}
		})
	}
}

func headOf(m map[uint64]int32, h uint64) int32 {
	if v, ok := m[h]; ok {
		return v
	}
	return -1
}
