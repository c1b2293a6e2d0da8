package memory_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) limiter.Store {
		store := memory.New(memory.WithClock(now))
		t.Cleanup(func() { _ = store.Close() })
		return store
	})
}

// After a flood of distinct clients and no request since, the background
// sweep alone forgets them once their windows have ended, and gives their
// memory back. The ticks and the clock are the test's: nothing sleeps.
func TestBackgroundSweepAfterAFlood(t *testing.T) {
	const clients = 50_000
	p := limiter.Policy{Max: 5, Window: 3 * time.Second}
	clock := storetest.NewClock(storetest.Start)
	ticks, swept := make(chan time.Time), make(chan struct{})
	store := memory.New(memory.WithClock(clock.Now), memory.WithTicks(ticks, swept))
	t.Cleanup(func() { _ = store.Close() })
	tick := func() {
		ticks <- clock.Now()
		<-swept
	}

	before := heapAlloc()
	allowKeys(t, store, "flood", clients, p)
	flooded := heapAlloc()

	clock.Advance(p.Window - 1)
	tick()
	if got := store.Len(); got != clients {
		t.Fatalf("a sweep 1ns before the flood's windows end left %d of %d clients, want all", got, clients)
	}
	clock.Advance(1)
	tick()
	if got := store.Len(); got != 0 {
		t.Fatalf("a sweep once the flood's windows have ended left %d clients, want 0", got)
	}
	after := heapAlloc()
	t.Logf("heap: %d kB before, %d kB with %d clients, %d kB after the sweep", before>>10, flooded>>10, clients, after>>10)
	if kept := after - before; kept > (flooded-before)/4 {
		t.Errorf("the sweep kept %d of the %d kB the flood took", kept>>10, (flooded-before)>>10)
	}
	// Still a working store, which the next client finds empty.
	if d := storetest.MustAllow(t, store, "flood-0", p); d.Remaining != p.Max-1 {
		t.Fatalf("a swept client's next request: %+v, want a fresh window", d)
	}
}

func TestCloseStopsTheBackgroundSweep(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	ticks, swept := make(chan time.Time), make(chan struct{})
	store := memory.New(memory.WithClock(clock.Now), memory.WithTicks(ticks, swept))
	p := limiter.Policy{Max: 1, Window: time.Second}
	allowKeys(t, store, "client", 10, p)
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	select {
	case ticks <- clock.Now():
		t.Fatal("the background sweep still takes ticks after Close")
	default:
	}
	// Allow still decides, and sweeps its own shard.
	storetest.MustAllow(t, store, "client-0", p)
	clock.Advance(p.Window)
	if d := storetest.MustAllow(t, store, "client-0", p); !d.Allowed {
		t.Fatalf("after Close and a window: %+v, want accepted", d)
	}
}

// heapAlloc returns the bytes of live heap objects, after a collection.
func heapAlloc() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

func TestSweepForgetsIdleClients(t *testing.T) {
	p := limiter.Policy{Max: 3, Window: 2 * time.Second}
	tests := []struct {
		name    string
		idle    time.Duration
		wantLen int
	}{
		{"still inside the window", p.Window - 1, 100},
		{"a whole window idle", p.Window, 0},
		{"long idle", time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := storetest.NewClock(storetest.Start)
			store := memory.New(memory.WithClock(clock.Now))
			allowKeys(t, store, "old", 100, p)
			clock.Advance(tt.idle)
			store.Sweep()
			if got := store.Len(); got != tt.wantLen {
				t.Fatalf("Len() after %s idle and Sweep = %d, want %d", tt.idle, got, tt.wantLen)
			}
		})
	}
}

// The amortised sweep runs per shard, on that shard's first request at least
// a window after its last sweep, so new clients spread over every shard
// clear out the idle ones without a call to Sweep.
func TestAllowSweepsIdleClients(t *testing.T) {
	const clients = 5000 // enough that every shard sees a new one
	p := limiter.Policy{Max: 3, Window: 2 * time.Second}
	tests := []struct {
		name    string
		idle    time.Duration
		wantLen int
	}{
		{"still inside the window", p.Window - 1, 2 * clients},
		{"a whole window idle", p.Window, clients},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := storetest.NewClock(storetest.Start)
			store := memory.New(memory.WithClock(clock.Now))
			allowKeys(t, store, "old", clients, p)
			clock.Advance(tt.idle)
			allowKeys(t, store, "new", clients, p)
			if got := store.Len(); got != tt.wantLen {
				t.Fatalf("Len() = %d, want %d", got, tt.wantLen)
			}
		})
	}
}

func TestSweepKeepsDecisions(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	store := memory.New(memory.WithClock(clock.Now))
	p := limiter.Policy{Max: 2, Window: time.Second}
	allowKeys(t, store, "client", 1, p)
	allowKeys(t, store, "client", 1, p)
	clock.Advance(time.Second)
	store.Sweep()
	if got := store.Len(); got != 0 {
		t.Fatalf("Len() = %d after a whole idle window, want 0", got)
	}
	// A forgotten client starts afresh, as it would have anyway.
	d, err := store.Allow(t.Context(), "client-0", p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (limiter.Decision{Allowed: true, Remaining: 1, NextSlot: time.Second, Reset: time.Second}); d != want {
		t.Fatalf("after the sweep: %+v, want %+v", d, want)
	}
}

// allowKeys makes one accepted request for each of the keys prefix-0 …
// prefix-(n-1).
func allowKeys(tb testing.TB, store *memory.Store, prefix string, n int, p limiter.Policy) {
	tb.Helper()
	for i := range n {
		key := fmt.Sprintf("%s-%d", prefix, i)
		d, err := store.Allow(tb.Context(), key, p)
		if err != nil {
			tb.Fatalf("Allow(%q): %v", key, err)
		}
		if !d.Allowed {
			tb.Fatalf("Allow(%q) rejected: %+v", key, d)
		}
	}
}

// benchPolicy's window outlasts any benchmark run, so known keys stay known
// and are never swept.
var benchPolicy = limiter.Policy{Max: 100, Window: time.Hour}

func BenchmarkAllow(b *testing.B) {
	b.Run("hot-key", func(b *testing.B) {
		store := memory.New()
		b.ReportAllocs()
		for b.Loop() {
			mustAllow(b, store, "192.0.2.1")
		}
	})
	b.Run("hot-key-parallel", func(b *testing.B) {
		store := memory.New()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				mustAllow(b, store, "192.0.2.1")
			}
		})
	})

	const distinct = 100_000
	keys := make([]string, distinct)
	for i := range keys {
		keys[i] = fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&0xff, i&0xff)
	}
	b.Run("100k-known-keys", func(b *testing.B) {
		store := memory.New()
		for _, k := range keys {
			mustAllow(b, store, k)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			mustAllow(b, store, keys[i%distinct])
			i++
		}
	})
	b.Run("100k-known-keys-parallel", func(b *testing.B) {
		store := memory.New()
		for _, k := range keys {
			mustAllow(b, store, k)
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(distinct) // so goroutines do not walk in step
			for pb.Next() {
				mustAllow(b, store, keys[i%distinct])
				i += 7919 // a prime, so every key gets its turn
			}
		})
	})
	b.Run("100k-new-keys", func(b *testing.B) {
		// Every request is a client's first until the keys run out.
		b.ReportAllocs()
		store := memory.New()
		i := 0
		for b.Loop() {
			if i == distinct {
				b.StopTimer()
				store = memory.New()
				i = 0
				b.StartTimer()
			}
			mustAllow(b, store, keys[i])
			i++
		}
	})
}

func mustAllow(b *testing.B, store *memory.Store, key string) {
	if _, err := store.Allow(b.Context(), key, benchPolicy); err != nil {
		b.Fatal(err)
	}
}

// A huge Max (a limiter configured out of the way) costs a client a small
// ring, not Max timestamps.
func TestHugeMaxStaysSmall(t *testing.T) {
	s := memory.New()
	p := limiter.Policy{Max: 1_000_000_000, Window: time.Second}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 1000 {
		if _, err := s.Allow(t.Context(), fmt.Sprintf("client-%d", i), p); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 10<<20 {
		t.Errorf("1,000 clients with Max 1e9 take %d MB", grown>>20)
	}
	for range 100 { // one client's ring grows as it needs
		d, err := s.Allow(t.Context(), "client-0", p)
		if err != nil || !d.Allowed || d.Remaining < p.Max-200 {
			t.Fatalf("decision %+v, %v", d, err)
		}
	}
}

// The session suite; one in-process store is all its replicas.
func TestSessions(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T, now func() time.Time, replicas int) []limiter.SessionStore {
		store := memory.New(memory.WithClock(now))
		t.Cleanup(func() { _ = store.Close() })
		stores := make([]limiter.SessionStore, replicas)
		for i := range stores {
			stores[i] = store
		}
		return stores
	})
}

// A client counting searches is forgotten only when it is as good as new:
// its window empty and its search's gap over. Forgotten earlier, its next
// keystroke would count as a new search.
func TestSweepKeepsAClientWithinItsGap(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepEvery(0))
	t.Cleanup(func() { _ = store.Close() })
	p := limiter.Policy{Max: 5, Window: time.Second}
	rule := limiter.Sessions{Gap: 2 * time.Second, MaxRequests: 10, MaxLength: 10}
	storetest.MustAllowSearch(t, store, "client", limiter.Search{Scope: "small", Text: "par"}, p, rule)
	clock.Advance(1500 * time.Millisecond) // the window is empty, the search goes on
	store.Sweep()
	if store.Len() != 1 {
		t.Fatalf("swept within the gap: %d clients held", store.Len())
	}
	if d := storetest.MustAllowSearch(t, store, "client", limiter.Search{Scope: "small", Text: "pari"}, p, rule); !d.Continued {
		t.Fatalf("after the sweep, the next letter is a new search: %+v", d)
	}
	clock.Advance(2 * time.Second)
	store.Sweep()
	if store.Len() != 0 {
		t.Fatalf("idle for the gap and the window: %d clients held", store.Len())
	}
}
