// Package storetest is the conformance suite that every limiter.Store
// backend runs, so that all backends decide alike.
package storetest

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// Clock is a fake clock that stands still until moved. Safe for concurrent
// use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a Clock stopped at t.
func NewClock(t time.Time) *Clock {
	return &Clock{t: t}
}

// Now returns the clock's time; pass it to a store as its clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Start is where the suite's clocks start.
var Start = time.Date(2026, time.January, 2, 3, 4, 5, 0, time.UTC)

// Opener returns a new, empty store that reads the time from now. It
// registers any cleanup with t. A store whose clock is elsewhere takes now
// through a test option (the Redis store passes it to its script instead of
// reading Redis's TIME), so the whole suite runs on the fake clock, without
// sleeping.
type Opener func(t *testing.T, now func() time.Time) limiter.Store

// Run runs the conformance suite against the stores that open returns.
func Run(t *testing.T, open Opener) {
	t.Run("Decisions", func(t *testing.T) { testDecisions(t, open) })
	t.Run("ClientsAreIndependent", func(t *testing.T) { testClientsAreIndependent(t, open) })
	t.Run("KeysAreOpaque", func(t *testing.T) { testKeysAreOpaque(t, open) })
	t.Run("ConcurrentRequestsNeverExceedMax", func(t *testing.T) { testConcurrent(t, open) })
	t.Run("InvalidPolicy", func(t *testing.T) { testInvalidPolicy(t, open) })
}

// step is one request of a scenario and the decision it must get.
type step struct {
	at     time.Duration  // since Start
	policy limiter.Policy // zero means the scenario's
	want   limiter.Decision
}

// allowed is an accepted request's decision; RetryAfter is nextSlot when
// no request remains, else 0.
func allowed(remaining int, nextSlot, reset time.Duration) limiter.Decision {
	d := limiter.Decision{Allowed: true, Remaining: remaining, NextSlot: nextSlot, Reset: reset}
	if remaining == 0 {
		d.RetryAfter = nextSlot
	}
	return d
}

// rejected is a rejected request's decision: nothing remains, and the next
// slot is the one the client waits for.
func rejected(retryAfter, reset time.Duration) limiter.Decision {
	return limiter.Decision{RetryAfter: retryAfter, NextSlot: retryAfter, Reset: reset}
}

const (
	ms = time.Millisecond
	s  = time.Second
)

func testDecisions(t *testing.T, open Opener) {
	tests := []struct {
		name   string
		policy limiter.Policy
		steps  []step
	}{
		{
			name:   "five in three seconds, then blocked until the oldest leaves the window",
			policy: limiter.Policy{Max: 5, Window: 3 * s},
			steps: []step{
				{at: 0, want: allowed(4, 3*s, 3*s)},
				{at: 1 * s, want: allowed(3, 2*s, 3*s)},
				{at: 1 * s, want: allowed(2, 2*s, 3*s)},
				{at: 2 * s, want: allowed(1, 1*s, 3*s)},
				{at: 2 * s, want: allowed(0, 1*s, 3*s)},
				{at: 2500 * ms, want: rejected(500*ms, 2500*ms)},
				{at: 3*s - 1, want: rejected(1, 2*s+1)},
				// Exactly one window after the oldest: it leaves, one slot frees.
				{at: 3 * s, want: allowed(0, 1*s, 3*s)},
				{at: 3 * s, want: rejected(1*s, 3*s)},
				// Both requests made at 1s have left: room for two. The
				// next slot frees when the request made at 2s leaves.
				{at: 4 * s, want: allowed(1, 1*s, 3*s)},
				{at: 4 * s, want: allowed(0, 1*s, 3*s)},
				{at: 4 * s, want: rejected(1*s, 3*s)},
				// A client back after a long pause has its whole allowance.
				{at: 1000 * s, want: allowed(4, 3*s, 3*s)},
			},
		},
		{
			name:   "rejected requests do not extend the block",
			policy: limiter.Policy{Max: 2, Window: 1 * s},
			steps: []step{
				{at: 0, want: allowed(1, 1*s, 1*s)},
				{at: 0, want: allowed(0, 1*s, 1*s)},
				{at: 100 * ms, want: rejected(900*ms, 900*ms)},
				{at: 500 * ms, want: rejected(500*ms, 500*ms)},
				{at: 1*s - 1, want: rejected(1, 1)},
				{at: 1 * s, want: allowed(1, 1*s, 1*s)},
				{at: 1 * s, want: allowed(0, 1*s, 1*s)},
			},
		},
		{
			name:   "one per one and a half seconds",
			policy: limiter.Policy{Max: 1, Window: 1500 * ms},
			steps: []step{
				{at: 0, want: allowed(0, 1500*ms, 1500*ms)},
				{at: 1500*ms - 1, want: rejected(1, 1)},
				{at: 1500 * ms, want: allowed(0, 1500*ms, 1500*ms)},
				{at: 5 * s, want: allowed(0, 1500*ms, 1500*ms)},
			},
		},
		{
			name:   "a larger max makes room at once",
			policy: limiter.Policy{Max: 2, Window: 10 * s},
			steps: []step{
				{at: 0, want: allowed(1, 10*s, 10*s)},
				{at: 1 * s, want: allowed(0, 9*s, 10*s)},
				{at: 2 * s, want: rejected(8*s, 9*s)},
				{at: 2 * s, policy: limiter.Policy{Max: 3, Window: 10 * s}, want: allowed(0, 8*s, 10*s)},
			},
		},
		{
			name:   "a smaller max keeps the newest requests",
			policy: limiter.Policy{Max: 3, Window: 10 * s},
			steps: []step{
				{at: 0, want: allowed(2, 10*s, 10*s)},
				{at: 1 * s, want: allowed(1, 9*s, 10*s)},
				{at: 2 * s, want: allowed(0, 8*s, 10*s)},
				// With max 2 only the requests at 1s and 2s count.
				{at: 3 * s, policy: limiter.Policy{Max: 2, Window: 10 * s}, want: rejected(8*s, 9*s)},
				{at: 11 * s, policy: limiter.Policy{Max: 2, Window: 10 * s}, want: allowed(0, 1*s, 10*s)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock(Start)
			store := open(t, clock.Now)
			for i, st := range tt.steps {
				p := st.policy
				if p == (limiter.Policy{}) {
					p = tt.policy
				}
				clock.Set(Start.Add(st.at))
				got := MustAllow(t, store, "client", p)
				if got != st.want {
					t.Fatalf("request %d at +%s under %+v:\n got %+v\nwant %+v", i, st.at, p, got, st.want)
				}
			}
		})
	}
}

func testClientsAreIndependent(t *testing.T, open Opener) {
	clock := NewClock(Start)
	store := open(t, clock.Now)
	p := limiter.Policy{Max: 1, Window: time.Minute}
	for _, req := range []struct {
		key  string
		want bool
	}{
		{"192.0.2.1", true},
		{"192.0.2.1", false},
		{"192.0.2.2", true},
		{"2001:db8::1", true},
		{"", true},
		{"192.0.2.2", false},
		{"", false},
	} {
		if got := MustAllow(t, store, req.key, p).Allowed; got != req.want {
			t.Fatalf("Allow(%q) allowed = %v, want %v", req.key, got, req.want)
		}
	}
}

// A backend that builds names from keys (a Redis key prefix, a path) must
// keep every key apart, whatever it holds.
func testKeysAreOpaque(t *testing.T, open Opener) {
	clock := NewClock(Start)
	store := open(t, clock.Now)
	p := limiter.Policy{Max: 1, Window: time.Minute}
	keys := []string{
		"2001:db8::/64", "2001:db8::", "2001:db8", "a", "a:", "a:b", "a*", "*", "{a}", "a b", " ",
		"ünïcödé", "line\nbreak", "nul\x00byte", "\xff\xfe", strings.Repeat("long", 256),
	}
	for _, key := range keys {
		if d := MustAllow(t, store, key, p); !d.Allowed {
			t.Fatalf("first request of %q rejected: %+v; keys are mixed up", key, d)
		}
	}
	for _, key := range keys {
		if d := MustAllow(t, store, key, p); d.Allowed {
			t.Fatalf("second request of %q accepted: %+v", key, d)
		}
	}
}

func testConcurrent(t *testing.T, open Opener) {
	const goroutines, requests = 50, 100
	clock := NewClock(Start)
	store := open(t, clock.Now)
	p := limiter.Policy{Max: 5, Window: 3 * time.Second}

	var accepted, failed atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range requests {
				d, err := store.Allow(t.Context(), "hot", p)
				if err != nil {
					failed.Add(1)
					continue
				}
				if d.Allowed {
					accepted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed", n, goroutines*requests)
	}
	if got := accepted.Load(); got != int64(p.Max) {
		t.Fatalf("%d goroutines × %d requests at one instant: %d accepted, want %d", goroutines, requests, got, p.Max)
	}
}

func testInvalidPolicy(t *testing.T, open Opener) {
	store := open(t, NewClock(Start).Now)
	for _, p := range []limiter.Policy{
		{Max: 0, Window: time.Second},
		{Max: -1, Window: time.Second},
		{Max: 1, Window: 0},
		{Max: 1, Window: -time.Second},
	} {
		_, err := store.Allow(t.Context(), "client", p)
		if !errors.Is(err, limiter.ErrInvalidPolicy) {
			t.Errorf("Allow under %+v: error %v, want ErrInvalidPolicy", p, err)
		}
	}
}

// MustAllow calls store.Allow and fails the test on error.
func MustAllow(tb testing.TB, store limiter.Store, key string, p limiter.Policy) limiter.Decision {
	tb.Helper()
	d, err := store.Allow(tb.Context(), key, p)
	if err != nil {
		tb.Fatalf("Allow(%q, %+v): %v", key, p, err)
	}
	return d
}
