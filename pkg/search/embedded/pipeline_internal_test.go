package embedded

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// batchReader hands out its batches one a call, then err.
type batchReader struct {
	batches [][]search.City
	err     error
}

func (r *batchReader) ReadBatch(dst []search.City) ([]search.City, error) {
	if len(r.batches) == 0 {
		return dst, r.err
	}
	dst = append(dst, r.batches[0]...)
	r.batches = r.batches[1:]
	return dst, nil
}

// TestReadAhead checks that a reader read ahead yields the batches of the
// reader in order, appended to what dst holds, then the reader's error for
// good, and ctx's error once ctx is done.
func TestReadAhead(t *testing.T) {
	errBroken := errors.New("broken")
	var batches [][]search.City
	for i := range 10 {
		var b []search.City
		for j := range i + 1 {
			b = append(b, search.City{Name: strconv.Itoa(i) + "/" + strconv.Itoa(j)})
		}
		batches = append(batches, b)
	}
	tests := []struct {
		name string
		keep bool // dst keeps the previous batches: cities = ReadBatch(cities)
	}{
		{"reused slice", false},
		{"growing slice", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := readAhead(t.Context(), &batchReader{batches: batches, err: errBroken})
			defer func() { <-a.done }()
			var got []search.City
			var err error
			for i, want := range batches {
				if !tt.keep {
					got = got[:0]
				}
				n := len(got)
				if got, err = a.ReadBatch(got); err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
				if len(got)-n != len(want) || got[n].Name != want[0].Name || got[len(got)-1].Name != want[len(want)-1].Name {
					t.Fatalf("batch %d: got %d cities from %q, want %d from %q", i, len(got)-n, got[n].Name, len(want), want[0].Name)
				}
			}
			for range 2 {
				before := len(got)
				if got, err = a.ReadBatch(got); !errors.Is(err, errBroken) || len(got) != before {
					t.Fatalf("after the last batch: %d cities more, %v; want none, %v", len(got)-before, err, errBroken)
				}
			}
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		many := make([][]search.City, 1000)
		for i := range many {
			many[i] = batches[0]
		}
		a := readAhead(ctx, &batchReader{batches: many, err: errBroken})
		cancel()
		<-a.done
		read := 0
		var err error
		for err == nil {
			_, err = a.ReadBatch(nil)
			read++
		}
		// What was read before the goroutine saw ctx done comes first.
		if !errors.Is(err, context.Canceled) || read > readBuffers+1 {
			t.Errorf("after %d batches: %v, want %v within %d", read-1, err, context.Canceled, readBuffers)
		}
	})
}
