package memory_test

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
)

// flood makes one request for each of the keys prefix-0 … prefix-(n-1) and
// returns how many were accepted, failing if the store ever holds more than
// limit clients.
func flood(tb testing.TB, store *memory.Store, prefix string, n, limit int, p limiter.Policy) int {
	tb.Helper()
	accepted := 0
	for i := range n {
		d, err := store.Allow(tb.Context(), fmt.Sprintf("%s-%d", prefix, i), p)
		if err != nil {
			tb.Fatal(err)
		}
		if d.Allowed {
			accepted++
		}
		if l := store.Len(); l > limit {
			tb.Fatalf("after %d new clients the store holds %d, over the cap of %d", i+1, l, limit)
		}
	}
	return accepted
}

func TestMaxClientsBoundsTheStore(t *testing.T) {
	const maxClients, clients = 1000, 50_000
	clock := storetest.NewClock(storetest.Start)
	store := memory.New(memory.WithClock(clock.Now), memory.WithMaxClients(maxClients))
	p := limiter.Policy{Max: 5, Window: 3 * time.Second}

	if got := flood(t, store, "flood", clients, maxClients, p); got != maxClients {
		t.Errorf("%d new clients at one instant: %d accepted, want the cap, %d", clients, got, maxClients)
	}
	// A refused client is told to come back after a window.
	d, err := store.Allow(t.Context(), "latecomer", p)
	if err != nil {
		t.Fatal(err)
	}
	if want := (limiter.Decision{RetryAfter: p.Window, NextSlot: p.Window}); d != want {
		t.Errorf("refused client: %+v, want %+v", d, want)
	}
}

// The cap never makes room by forgetting a client that still has requests
// in its window: that would reset its limit, and a client could then
// escape its own limit by flooding the store with made-up addresses.
func TestMaxClientsNeverResetsACounter(t *testing.T) {
	const maxClients = 100
	clock := storetest.NewClock(storetest.Start)
	store := memory.New(memory.WithClock(clock.Now), memory.WithMaxClients(maxClients))
	p := limiter.Policy{Max: 3, Window: 10 * time.Second}

	allow := func(key string) limiter.Decision {
		t.Helper()
		d, err := store.Allow(t.Context(), key, p)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for range p.Max {
		allow("attacker")
	}
	for round := range 5 {
		clock.Advance(time.Second)
		flood(t, store, fmt.Sprintf("round%d", round), 10*maxClients, maxClients, p)
		if d := allow("attacker"); d.Allowed {
			t.Fatalf("round %d: the attacker got through after flooding the store: %+v", round, d)
		}
	}
	// Its window ends 10s after its first requests, like any other client's.
	clock.Set(storetest.Start.Add(p.Window))
	if d := allow("attacker"); !d.Allowed {
		t.Fatalf("after its window: %+v, want accepted", d)
	}
}

// Clients idle for a whole window make room for new ones without a call to
// Sweep: each shard sweeps when a new client finds the store full.
func TestMaxClientsMakesRoomFromIdleClients(t *testing.T) {
	const maxClients = 1000
	clock := storetest.NewClock(storetest.Start)
	store := memory.New(memory.WithClock(clock.Now), memory.WithMaxClients(maxClients))
	p := limiter.Policy{Max: 2, Window: 2 * time.Second}

	flood(t, store, "old", maxClients, maxClients, p)
	clock.Advance(p.Window - 1)
	if got := flood(t, store, "early", maxClients, maxClients, p); got != 0 {
		t.Fatalf("%d new clients accepted while every tracked one is inside its window, want 0", got)
	}
	clock.Advance(1)
	if got := flood(t, store, "new", maxClients, maxClients, p); got != maxClients {
		t.Fatalf("a window later: %d of %d new clients accepted, want all", got, maxClients)
	}
}

func TestMaxClientsConcurrentFlood(t *testing.T) {
	const maxClients, goroutines, perGoroutine = 500, 16, 2000
	store := memory.New(memory.WithMaxClients(maxClients)) // real time: nothing goes idle within the test
	p := limiter.Policy{Max: 1, Window: time.Hour}
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				d, err := store.Allow(t.Context(), fmt.Sprintf("g%d-%d", g, i), p)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					accepted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if got := accepted.Load(); got != maxClients {
		t.Errorf("%d concurrent new clients: %d accepted, want exactly the cap, %d", goroutines*perGoroutine, got, maxClients)
	}
	if got := store.Len(); got != maxClients {
		t.Errorf("Len() = %d, want %d", got, maxClients)
	}
}

// The heap stays small under a flood of distinct clients when the store is
// capped, however many arrive.
func TestMaxClientsBoundsMemory(t *testing.T) {
	const maxClients, clients = 1000, 200_000
	p := limiter.Policy{Max: 5, Window: time.Hour}
	heap := func(store *memory.Store) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		flood(t, store, "flood", clients, clients, p)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(store)
		return after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
	}
	capped := heap(memory.New(memory.WithMaxClients(maxClients)))
	uncapped := heap(memory.New())
	t.Logf("heap after %d distinct clients: %d KiB capped at %d, %d KiB uncapped", clients, capped>>10, maxClients, uncapped>>10)
	if capped > 4<<20 {
		t.Errorf("capped store grew the heap by %d KiB, want under 4 MiB", capped>>10)
	}
	if capped*10 > uncapped {
		t.Errorf("capped store uses %d KiB, not a tenth of the uncapped %d KiB", capped>>10, uncapped>>10)
	}
}
