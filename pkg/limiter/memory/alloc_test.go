//go:build !race

// The race detector allocates on its own, so this test runs without it.

package memory_test

import (
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
)

func TestKnownClientAllocatesNothing(t *testing.T) {
	store := memory.New()
	ctx := t.Context()
	for _, tt := range []struct {
		name    string
		p       limiter.Policy
		allowed bool
	}{
		{"accepted", limiter.Policy{Max: 2000, Window: time.Hour}, true},
		{"rejected", limiter.Policy{Max: 1, Window: time.Hour}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := "192.0.2.1 " + tt.name
			if _, err := store.Allow(ctx, key, tt.p); err != nil {
				t.Fatal(err)
			}
			allocs := testing.AllocsPerRun(1000, func() {
				if d, _ := store.Allow(ctx, key, tt.p); d.Allowed != tt.allowed {
					t.Fatalf("unexpected decision %+v", d)
				}
			})
			if allocs != 0 {
				t.Fatalf("Allow on a known client: %v allocs, want 0", allocs)
			}
		})
	}
}
