package limiter

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// A RateLimit field made up front is the field formatted for that
// decision, and a decision outside the table is formatted.
func TestRateLimitFieldsAreTheFormattedOnes(t *testing.T) {
	for _, p := range []Policy{{Max: 5, Window: 3 * time.Second}, {Max: 1, Window: 500 * time.Millisecond}, {Max: 1_000_000, Window: time.Second}} {
		t.Run(fmt.Sprintf("%d in %v", p.Max, p.Window), func(t *testing.T) {
			l, err := New(nopStore{}, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []int{0, 1, p.Max - 1, p.Max, p.Max + 1, -1} {
				for _, next := range []time.Duration{0, time.Millisecond, time.Second, p.Window, p.Window + time.Second, -time.Second} {
					d := Decision{Remaining: r, NextSlot: next}
					want := []string{fmt.Sprintf(`"search";r=%d;t=%d`, r, ceilSeconds(next))}
					if got := l.rateLimitField(d); !slices.Equal(got, want) {
						t.Errorf("rateLimitField(%+v) = %q, want %q", d, got, want)
					}
				}
			}
		})
	}
}

// nopStore is a Store that is never asked.
type nopStore struct{}

func (nopStore) Allow(context.Context, string, Policy) (Decision, error) { return Decision{}, nil }
