package search

import "testing"

// TestIDTable checks claim against a map through several growths: an id
// goes to the first hash that claims it, and claiming it again answers
// that hash whoever asks.
func TestIDTable(t *testing.T) {
	var table idTable
	want := map[uint32]uint64{}
	for i := range uint64(30_000) {
		id := DerivedIDBase + uint32(i*7919%20_000) // most ids claimed more than once
		h := i%3 + 1
		w, ok := want[id]
		if !ok {
			w = h
			want[id] = h
		}
		if got := table.claim(id, h).hash; got != w {
			t.Fatalf("claim(%d, %d) = %d, want %d", id, h, got, w)
		}
	}
	if table.used != len(want) {
		t.Errorf("%d ids held, want %d", table.used, len(want))
	}
}
