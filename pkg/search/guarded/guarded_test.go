package guarded_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/guarded"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// A guarded store is a store like any other, typo search included.
func TestStore(t *testing.T) {
	storetest.RunWrapped(t, func(t *testing.T) search.Store {
		return guarded.New(memory.New(), breaker.New(breaker.Config{}))
	})
}

// fakeClock is a clock that moves only when told.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// hungStore is a loaded memory store whose backing service can be made to
// hang: each call then waits delay and fails with search.ErrUnavailable,
// as MongoDB's store does when its query timeout passes.
func hungStore(t *testing.T, hung *atomic.Bool, reached *atomic.Int64, delay time.Duration) search.Store {
	t.Helper()
	m := memory.New()
	cities := []search.City{{Name: "London", Slug: "london", CountryCode: "gb", Population: 8_000_000}}
	if _, err := m.Load(t.Context(), search.Small, &search.SliceReader{Cities: cities}, search.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	return storetest.Wrap(m, func(ctx context.Context, c storetest.Call) error {
		reached.Add(1)
		if !hung.Load() {
			return nil
		}
		select {
		case <-time.After(delay):
			return fmt.Errorf("%s: %w: server selection timeout", c.Method, search.ErrUnavailable)
		case <-ctx.Done():
			return ctx.Err()
		}
	})
}

// Once the backing service has failed three calls in a row, searches fail
// at once, without reaching it, until the cool-down is over; then one call
// probes, and finding the service back, lets every search through again.
func TestGuardedStoreSkipsAHungService(t *testing.T) {
	const delay = 100 * time.Millisecond
	var hung atomic.Bool
	var reached atomic.Int64
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	b := breaker.New(breaker.Config{Threshold: 3, Cooldown: 5 * time.Second, Now: clock.Now})
	s := guarded.New(hungStore(t, &hung, &reached, delay), b)
	q := search.Query{Dataset: search.Small, Prefix: "lon", Limit: 10}

	hung.Store(true)
	for i := range 3 {
		if _, err := s.Search(t.Context(), nil, q); !errors.Is(err, search.ErrUnavailable) || errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("search %d on the hung service: %v, want it to wait and fail unavailable", i, err)
		}
	}
	before := reached.Load()
	start := time.Now()
	for range 100 {
		_, err := s.Search(t.Context(), nil, q)
		if !errors.Is(err, search.ErrUnavailable) || !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("search with the breaker open: %v, want unavailable and open", err)
		}
		if _, err := s.Stats(t.Context(), search.Small); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("stats with the breaker open: %v", err)
		}
	}
	if took := time.Since(start); took > delay {
		t.Errorf("100 searches and stats with the breaker open took %s, more than one hung call (%s)", took, delay)
	}
	if n := reached.Load() - before; n != 0 {
		t.Errorf("%d calls reached the hung service while the breaker was open", n)
	}

	hung.Store(false)
	clock.now = clock.now.Add(5 * time.Second)
	found, err := s.Search(t.Context(), nil, q)
	if err != nil || len(found) != 1 || found[0].City.Name != "London" {
		t.Fatalf("the probe after the cool-down = %v, %v; want London", found, err)
	}
	if st := b.Stats(); st.State != breaker.Closed || st.Opened != 1 || st.Rejected != 200 {
		t.Errorf("breaker after recovery: %+v", st)
	}
}

// Only a service that cannot answer trips the breaker: answers that are
// errors of the dataset or the query, and clients that leave, do not.
func TestGuardedStoreCountsOnlyUnavailable(t *testing.T) {
	gone, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		err   error
		opens bool
	}{
		{"unavailable", t.Context(), fmt.Errorf("read: %w", search.ErrUnavailable), true},
		{"empty dataset", t.Context(), search.EmptyDatasetError(search.Small), false},
		{"corrupt dataset", t.Context(), fmt.Errorf("open: %w", search.ErrCorrupt), false},
		{"invalid query", t.Context(), fmt.Errorf("q: %w", search.ErrInvalidQuery), false},
		{"a client that left", gone, fmt.Errorf("read: %w", search.ErrUnavailable), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := breaker.New(breaker.Config{Threshold: 2})
			s := guarded.New(storetest.Wrap(memory.New(), func(context.Context, storetest.Call) error { return tt.err }), b)
			for range 2 {
				if _, err := s.Stats(tt.ctx, search.Small); !errors.Is(err, tt.err) {
					t.Fatalf("Stats = %v, want the store's %v", err, tt.err)
				}
			}
			if open := b.Stats().State == breaker.Open; open != tt.opens {
				t.Errorf("after two such errors the breaker is open: %v, want %v", open, tt.opens)
			}
		})
	}
}
