// Package memory is a limiter.Store that keeps every client's window in
// process memory, for a single server or for tests.
//
// Clients are spread over shards, each with its own mutex, so that requests of
// different clients rarely wait for each other. A client's window is a ring of
// at most Max timestamps, allocated when the client is first seen, so a
// request of a known client allocates nothing. A client idle for a whole
// window is forgotten by the next sweep of its shard: Allow sweeps its own
// shard at most once per window, and a background goroutine sweeps every
// shard every DefaultSweepEvery (WithSweepEvery), so that the memory a flood
// of clients took is given back even when no request comes after it. Close
// stops that goroutine.
//
// # Searches
//
// AllowSearch (limiter.SessionStore) keeps a client's current typing session
// beside its window: its texts, at most the rule's MaxLength bytes each, so
// that a client costs the same bounded memory whatever it sends. A client is
// idle, and forgotten, once its window is empty and its session's gap has
// passed, so that a sweep never turns the next letter of a search into a
// new one.
//
// # A flood of clients
//
// Sweeping bounds memory by the number of clients seen in one window, which
// a flood of distinct addresses can still make large. WithMaxClients puts a
// hard cap on it. A full store never forgets a client that still has a
// request inside its window, since forgetting it would reset its limit and
// let it start afresh: an attacker could then make room by flooding and
// escape its own limit. So when the store is full, Allow first sweeps the
// clients whose windows are already empty, and if there is still no room it
// rejects the new client (fails closed for new keys). Clients already
// tracked keep being decided exactly as before, and room comes back as soon
// as tracked clients have been idle for a window.
package memory

import (
	"context"
	"hash/maphash"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// DefaultSweepEvery is how often the background sweep forgets idle clients.
// A sweep visits every client, one shard at a time, so it costs about as much
// as the requests that brought them; once a minute it is noise.
const DefaultSweepEvery = time.Minute

// numShards is a power of two well above the number of cores that serve
// requests at once, so that two of them rarely want the same shard.
const numShards = 64

// Store is an in-memory limiter.Store. The zero value is not usable; call New.
type Store struct {
	now   func() time.Time
	epoch time.Time // timestamps are nanoseconds since epoch
	seed  maphash.Seed

	maxClients int64        // 0: no cap
	clients    atomic.Int64 // how many clients the shards hold, plus reservations

	shards [numShards]shard

	sweepEvery time.Duration
	// ticker starts the background sweep's ticks; tests replace it.
	ticker    func(time.Duration) (ticks <-chan time.Time, stop func())
	afterTick func() // called after each background sweep, for tests
	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
}

var _ limiter.Store = (*Store)(nil)

// shard holds the windows of the clients whose key hashes to it.
type shard struct {
	mu        sync.Mutex
	clients   map[string]*window
	peak      int   // most clients held since the map was last rebuilt
	nextSweep int64 // time from which Allow sweeps this shard again
	// nextIdle is no later than the first time at which one of the shard's
	// clients becomes idle, so a full store only sweeps a shard when that
	// can make room.
	nextIdle int64
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

// WithMaxClients caps how many clients the store tracks at once; n <= 0
// (the default) means no cap. When the store is full, a new client is
// rejected until tracked clients have been idle for a whole window (see the
// package comment for why it is not let through and no one is evicted).
func WithMaxClients(n int) Option {
	return func(s *Store) { s.maxClients = int64(max(n, 0)) }
}

// WithSweepEvery sets how often the background goroutine forgets the
// clients that have been idle for a window (default DefaultSweepEvery);
// d <= 0 starts no goroutine, leaving the sweeping to Allow, which then never
// gives back the memory of a flood after the last request.
func WithSweepEvery(d time.Duration) Option {
	return func(s *Store) { s.sweepEvery = d }
}

// New returns an empty Store. Close it when done, to stop its background
// sweep.
func New(opts ...Option) *Store {
	s := &Store{now: time.Now, seed: maphash.MakeSeed(), sweepEvery: DefaultSweepEvery, ticker: newTicker}
	for _, opt := range opts {
		opt(s)
	}
	// Durations since a time read from the clock keep time.Now's monotonic
	// reading, so a wall clock step does not open or shut windows.
	s.epoch = s.now()
	for i := range s.shards {
		s.shards[i].clients = make(map[string]*window)
		s.shards[i].nextIdle = math.MaxInt64
	}
	if s.sweepEvery > 0 {
		s.stop, s.stopped = make(chan struct{}), make(chan struct{})
		ticks, stop := s.ticker(s.sweepEvery)
		go s.sweepOnTicks(ticks, stop)
	}
	return s
}

func newTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// sweepOnTicks sweeps every shard on each tick until Close.
func (s *Store) sweepOnTicks(ticks <-chan time.Time, stop func()) {
	defer close(s.stopped)
	defer stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ticks:
			s.sweepAll()
			if s.afterTick != nil {
				s.afterTick()
			}
		}
	}
}

// Close stops the background sweep and waits for it to return. The store
// still decides afterwards, sweeping as Allow goes. Close always returns nil.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.stop != nil {
			close(s.stop)
			<-s.stopped
		}
	})
	return nil
}

// Allow implements limiter.Store. It never fails for a valid policy. A new
// client that finds the store full (see WithMaxClients) is rejected with
// RetryAfter and NextSlot set to the window.
func (s *Store) Allow(_ context.Context, key string, p limiter.Policy) (limiter.Decision, error) {
	if err := p.Validate(); err != nil {
		return limiter.Decision{}, err
	}
	return s.decide(key, p, func(w *window, now int64) limiter.Decision { return w.allow(now) }), nil
}

// AllowSearch implements limiter.SessionStore. It never fails for a valid
// policy and rule; a new client that finds the store full is rejected as by
// Allow.
func (s *Store) AllowSearch(_ context.Context, key string, q limiter.Search, p limiter.Policy, rule limiter.Sessions) (limiter.Decision, error) {
	if err := p.Validate(); err != nil {
		return limiter.Decision{}, err
	}
	if err := rule.Validate(); err != nil {
		return limiter.Decision{}, err
	}
	gap := int64(rule.Gap)
	return s.decide(key, p, func(w *window, now int64) limiter.Decision {
		w.gap = gap
		if w.session.Continues(q, now, gap, rule) {
			w.session = w.session.Next(q, now, true, rule)
			// The texts are kept beyond the request: no copy of them may
			// pin its URL.
			w.session.Last = strings.Clone(w.session.Last)
			d := w.describe(now)
			d.Allowed, d.Continued = true, true
			return d
		}
		d := w.allow(now)
		if d.Allowed {
			w.session = w.session.Next(q, now, false, rule)
			w.session.Scope = strings.Clone(w.session.Scope)
			w.session.First = strings.Clone(w.session.First)
			w.session.Last = w.session.First
		}
		return d
	}), nil
}

// decide runs decide on the window of client key under p, at the store's
// current time, making the window when the client is new.
func (s *Store) decide(key string, p limiter.Policy, decide func(w *window, now int64) limiter.Decision) limiter.Decision {
	now := s.since()
	span := int64(p.Window)

	sh := &s.shards[maphash.String(s.seed, key)%numShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if now >= sh.nextSweep {
		s.sweep(sh, now)
		sh.nextSweep = addSat(now, span)
	}
	w := sh.clients[key]
	if w == nil {
		if !s.reserve(sh, now) {
			return limiter.Decision{RetryAfter: p.Window, NextSlot: p.Window}
		}
		w = &window{times: make([]int64, min(p.Max, initialRing)), max: p.Max}
		// Clone so that the map does not pin a larger string the key may
		// have been cut from.
		sh.clients[strings.Clone(key)] = w
		sh.peak = max(sh.peak, len(sh.clients))
	} else if w.max != p.Max {
		w.max = p.Max
		w.resize(min(p.Max, max(len(w.times), initialRing)))
	}
	w.span = span
	d := decide(w, now)
	// A changed window can make a client idle sooner than the shard knew.
	sh.nextIdle = min(sh.nextIdle, w.idleAt())
	return d
}

// reserve counts one more client in s, unless that would pass the cap even
// after sweeping sh. The caller holds sh.mu.
func (s *Store) reserve(sh *shard, now int64) bool {
	if s.maxClients == 0 {
		s.clients.Add(1)
		return true
	}
	// Add first and take back on failure, so that concurrent reservations
	// in other shards can never take the count past the cap together.
	if s.clients.Add(1) <= s.maxClients {
		return true
	}
	s.clients.Add(-1)
	if now < sh.nextIdle {
		return false // no client of this shard can be idle yet
	}
	s.sweep(sh, now)
	if s.clients.Add(1) <= s.maxClients {
		return true
	}
	s.clients.Add(-1)
	return false
}

// sweepAll forgets every client whose requests have all left its window.
// Under an unchanged policy such a client is in the same state as one never
// seen, so sweeping never changes a decision. It locks one shard at a time,
// so requests wait for one shard's sweep at most.
func (s *Store) sweepAll() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		s.sweep(sh, s.since())
		sh.mu.Unlock()
	}
}

// since reads the clock as nanoseconds since s.epoch.
func (s *Store) since() int64 {
	return int64(s.now().Sub(s.epoch))
}

// sweep deletes the idle clients of sh. The caller holds sh.mu.
func (s *Store) sweep(sh *shard, now int64) {
	nextIdle := int64(math.MaxInt64)
	for key, w := range sh.clients {
		if w.idle(now) {
			delete(sh.clients, key)
			s.clients.Add(-1)
			continue
		}
		nextIdle = min(nextIdle, w.idleAt())
	}
	sh.nextIdle = nextIdle
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
	times []int64 // a ring that grows, doubling, up to max
	max   int     // the policy's Max as of the last request
	head  int     // index of the oldest time
	n     int     // how many times are kept
	span  int64   // the window in nanoseconds, as of the last request

	// The client's typing session, when counting searches (AllowSearch),
	// and the gap that ends it, in nanoseconds.
	session limiter.Session
	gap     int64
}

// initialRing is a new client's ring: a policy with a huge Max (to keep
// the limiter out of the way) must not cost Max timestamps per client.
const initialRing = 16

// at returns the i-th oldest kept time.
func (w *window) at(i int) int64 {
	return w.times[(w.head+i)%len(w.times)]
}

// allow decides on a request at now, records it if accepted and describes
// the window as it is afterwards.
func (w *window) allow(now int64) limiter.Decision {
	allowed := false
	if w.n == len(w.times) && w.n < w.max && now-w.times[w.head] < w.span {
		w.resize(min(w.max, 2*len(w.times))) // full but below Max: grow
	}
	switch {
	case w.n < len(w.times):
		w.times[(w.head+w.n)%len(w.times)] = now
		w.n++
		allowed = true
	case now-w.times[w.head] >= w.span:
		w.times[w.head] = now
		w.head = (w.head + 1) % len(w.times)
		allowed = true
	}
	d := w.describe(now)
	d.Allowed = allowed
	return d
}

// describe returns the window at now as a Decision says it, Allowed left
// false: what a request at now that is not recorded is told.
func (w *window) describe(now int64) limiter.Decision {
	var d limiter.Decision
	// Each free slot and each kept time that has left the window is one
	// more request that would pass right now. Times are in order, so the
	// ones that left are at the front.
	left := sort.Search(w.n, func(i int) bool { return now-w.at(i) < w.span })
	d.Remaining = w.max - w.n + left
	if left < w.n {
		d.NextSlot = time.Duration(w.at(left) + w.span - now)
	}
	if d.Remaining == 0 {
		d.RetryAfter = d.NextSlot // the oldest kept time is in the window
	}
	if w.n > 0 {
		if newest := w.at(w.n - 1); now-newest < w.span {
			d.Reset = time.Duration(newest + w.span - now)
		}
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

// idle reports whether every kept time has left the window at now, and
// the client's session has ended: the client is then as good as new.
func (w *window) idle(now int64) bool {
	return now >= w.idleAt()
}

// idleAt returns the time from which w is idle.
func (w *window) idleAt() int64 {
	at := int64(math.MinInt64)
	if w.n > 0 {
		at = addSat(w.at(w.n-1), w.span)
	}
	if w.session.Requests > 0 {
		at = max(at, addSat(w.session.At, w.gap))
	}
	return at
}
