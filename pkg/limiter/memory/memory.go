// Package memory is a limiter.Store that keeps every client's window in
// process memory, for a single server or for tests.
//
// Clients are spread over shards, each with its own mutex, so that requests of
// different clients rarely wait for each other. A client's window is a ring of
// at most Max timestamps, allocated when the client is first seen, so a
// request of a known client allocates nothing. A client idle for a whole
// window is forgotten by the next sweep: Sweep does all shards, and Allow
// sweeps its own shard at most once per window, so memory stays bounded
// without a background goroutine.
package memory

import (
	"context"
	"hash/maphash"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// numShards is a power of two well above the number of cores that serve
// requests at once, so that two of them rarely want the same shard.
const numShards = 64

// Store is an in-memory limiter.Store. The zero value is not usable; call New.
type Store struct {
	now   func() time.Time
	epoch time.Time // timestamps are nanoseconds since epoch
	seed  maphash.Seed

	shards [numShards]shard
}

var _ limiter.Store = (*Store)(nil)

// shard holds the windows of the clients whose key hashes to it.
type shard struct {
	mu        sync.Mutex
	clients   map[string]*window
	peak      int   // most clients held since the map was last rebuilt
	nextSweep int64 // time from which Allow sweeps this shard again
}

// Option configures a Store.
type Option func(*Store)

// WithClock makes the store read the time from now instead of time.Now, so
// tests can move time by hand.
func WithClock(now func() time.Time) Option {
	return func(s *Store) {
		if now != nil {
			s.now = now
		}
	}
}

// New returns an empty Store.
func New(opts ...Option) *Store {
	s := &Store{now: time.Now, seed: maphash.MakeSeed()}
	for _, opt := range opts {
		opt(s)
	}
	// Durations since a time read from the clock keep time.Now's monotonic
	// reading, so a wall clock step does not open or shut windows.
	s.epoch = s.now()
	for i := range s.shards {
		s.shards[i].clients = make(map[string]*window)
	}
	return s
}

// Allow implements limiter.Store. It never fails for a valid policy.
func (s *Store) Allow(_ context.Context, key string, p limiter.Policy) (limiter.Decision, error) {
	if err := p.Validate(); err != nil {
		return limiter.Decision{}, err
	}
	now := s.since()
	span := int64(p.Window)

	sh := &s.shards[maphash.String(s.seed, key)%numShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if now >= sh.nextSweep {
		sh.sweep(now)
		sh.nextSweep = addSat(now, span)
	}
	w := sh.clients[key]
	if w == nil {
		w = &window{times: make([]int64, p.Max)}
		// Clone so that the map does not pin a larger string the key may
		// have been cut from.
		sh.clients[strings.Clone(key)] = w
		sh.peak = max(sh.peak, len(sh.clients))
	} else if len(w.times) != p.Max {
		w.resize(p.Max)
	}
	w.span = span
	return w.allow(now), nil
}

// Sweep forgets every client whose requests have all left its window. Under
// an unchanged policy such a client is in the same state as one never seen,
// so sweeping never changes a decision.
func (s *Store) Sweep() {
	now := s.since()
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.sweep(now)
		sh.mu.Unlock()
	}
}

// Len returns how many clients the store holds a window for.
func (s *Store) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += len(sh.clients)
		sh.mu.Unlock()
	}
	return n
}

// since reads the clock as nanoseconds since s.epoch.
func (s *Store) since() int64 {
	return int64(s.now().Sub(s.epoch))
}

// sweep deletes the idle clients of sh. The caller holds sh.mu.
func (sh *shard) sweep(now int64) {
	for key, w := range sh.clients {
		if w.idle(now) {
			delete(sh.clients, key)
		}
	}
	// Deleting from a Go map never gives its memory back, so a map that held
	// a burst of clients is rebuilt once most of them have gone.
	const minRebuild = 64
	if n := len(sh.clients); sh.peak >= minRebuild && n <= sh.peak/4 {
		clients := make(map[string]*window, n)
		for key, w := range sh.clients {
			clients[key] = w
		}
		sh.clients = clients
		sh.peak = n
	}
}

// addSat returns a+b for b >= 0, or the largest int64 if that overflows.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// window is one client's sliding window: a ring of the times of its last
// len(times) accepted requests, oldest first, in nanoseconds since the
// store's epoch.
type window struct {
	times []int64
	head  int   // index of the oldest time
	n     int   // how many times are kept
	span  int64 // the window in nanoseconds, as of the last request
}

// at returns the i-th oldest kept time.
func (w *window) at(i int) int64 {
	return w.times[(w.head+i)%len(w.times)]
}

// allow decides on a request at now, records it if accepted and describes
// the window as it is afterwards.
func (w *window) allow(now int64) limiter.Decision {
	var d limiter.Decision
	switch {
	case w.n < len(w.times):
		w.times[(w.head+w.n)%len(w.times)] = now
		w.n++
		d.Allowed = true
	case now-w.times[w.head] >= w.span:
		w.times[w.head] = now
		w.head = (w.head + 1) % len(w.times)
		d.Allowed = true
	}

	// Each free slot and each kept time that has left the window is one
	// more request that would pass right now. Times are in order, so the
	// ones that left are at the front.
	left := 0
	for left < w.n && now-w.at(left) >= w.span {
		left++
	}
	d.Remaining = len(w.times) - w.n + left
	if d.Remaining == 0 {
		d.RetryAfter = time.Duration(w.at(0) + w.span - now)
	}
	if newest := w.at(w.n - 1); now-newest < w.span {
		d.Reset = time.Duration(newest + w.span - now)
	}
	return d
}

// resize makes room for size times, keeping the newest ones.
func (w *window) resize(size int) {
	times := make([]int64, size)
	keep := min(w.n, size)
	for i := range keep {
		times[i] = w.at(w.n - keep + i)
	}
	w.times, w.head, w.n = times, 0, keep
}

// idle reports whether every kept time has left the window at now.
func (w *window) idle(now int64) bool {
	return w.n == 0 || now-w.at(w.n-1) >= w.span
}
