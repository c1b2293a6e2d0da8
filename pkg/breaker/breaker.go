// Package breaker is a circuit breaker for a dependency that can hang, so
// that a Redis or a MongoDB that stops answering costs each request nothing
// rather than a timeout.
//
// # The contract
//
// A Breaker is Closed to begin with: every call goes ahead, and the caller
// reports how each ended (Success, Failure or Ignored). Threshold Failures
// in a row, with no Success between them, open it. While Open, Allow
// refuses every call at once with ErrOpen, for Cooldown. The first Allow
// after the cool-down turns it HalfOpen and lets that one call through as
// a probe, while every other call is still refused: the probe's Success
// closes the breaker, its Failure opens it for another Cooldown, and an
// Ignored probe (the caller left: no verdict on the dependency) lets the
// next caller probe instead.
//
// Outcomes are counted against the state they started in: a call that
// began before the breaker opened and fails after does not extend the
// cool-down, and one that succeeds late does not close it, so that only the
// probe decides the half-open state.
//
// Every Allow that returns a nil error must be followed by exactly one
// Call.Done, from any goroutine: a probe that is never reported keeps the
// breaker half-open and refusing. A Breaker is safe for concurrent use; it
// takes a mutex twice per call and allocates nothing.
package breaker

import (
	"errors"
	"sync"
	"time"
)

// ErrOpen means the breaker refused a call without trying it: the
// dependency failed too often lately and is given time to recover.
var ErrOpen = errors.New("circuit breaker open")

// State is where a Breaker stands.
type State int

// The states of a Breaker, in the order of the package comment.
const (
	Closed State = iota
	Open
	HalfOpen
)

// States lists every State, for metrics that export one series per state.
var States = []State{Closed, Open, HalfOpen}

// String names the state in one word, as metrics and /readyz show it.
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half_open"
	}
	return "unknown"
}

// Outcome is how a call that Allow let through ended.
type Outcome int

// The outcomes a caller reports.
const (
	// Success: the dependency answered (even with an error of its own,
	// such as "no such key": it is alive).
	Success Outcome = iota
	// Failure: the dependency did not answer in time or could not be
	// reached.
	Failure
	// Ignored: no verdict, for example the caller gave up first.
	Ignored
)

// Defaults of Config.
const (
	DefaultThreshold = 3
	DefaultCooldown  = 5 * time.Second
)

// Config describes a Breaker. Zero fields take defaults.
type Config struct {
	// Threshold is how many Failures in a row open the breaker;
	// DefaultThreshold when zero or less.
	Threshold int
	// Cooldown is how long the breaker stays open before it probes;
	// DefaultCooldown when zero or less.
	Cooldown time.Duration
	// Now is the clock, time.Now when nil; tests give a fake one.
	Now func() time.Time
	// OnChange, when not nil, hears every change of state, for a log line.
	// It is called with the breaker's lock held: it must not call the
	// breaker.
	OnChange func(from, to State)
}

// Breaker is a circuit breaker (see the package comment).
type Breaker struct {
	cfg Config

	mu       sync.Mutex
	state    State
	failures int       // Failures in a row, while Closed
	openedAt time.Time // when it last opened
	probing  bool      // a probe is out, while HalfOpen
	// generation changes with every change of state, so that an outcome
	// reported after one is known to be stale.
	generation uint64

	opened   uint64 // times it opened
	rejected uint64 // calls refused with ErrOpen
}

// New returns a closed Breaker.
func New(cfg Config) *Breaker {
	if cfg.Threshold <= 0 {
		cfg.Threshold = DefaultThreshold
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultCooldown
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Breaker{cfg: cfg}
}

// Call is one call that Allow let through.
type Call struct {
	b   *Breaker
	gen uint64
}

// Done reports how the call ended; call it exactly once.
func (c Call) Done(o Outcome) { c.b.report(c.gen, o) }

// Allow asks to make one call. It returns ErrOpen when the breaker refuses
// it; otherwise the caller makes the call and reports how it ended with
// the Call's Done.
func (b *Breaker) Allow() (Call, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case Open:
		if b.cfg.Now().Sub(b.openedAt) < b.cfg.Cooldown {
			b.rejected++
			return Call{}, ErrOpen
		}
		b.setState(HalfOpen)
		b.probing = true
	case HalfOpen:
		if b.probing {
			b.rejected++
			return Call{}, ErrOpen
		}
		b.probing = true
	}
	return Call{b, b.generation}, nil
}

// report records the outcome of a call let through in generation gen.
func (b *Breaker) report(gen uint64, o Outcome) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if gen != b.generation {
		return // the state changed while the call ran: it says nothing of this one
	}
	switch b.state {
	case Closed:
		switch o {
		case Success:
			b.failures = 0
		case Failure:
			if b.failures++; b.failures >= b.cfg.Threshold {
				b.open()
			}
		}
	case HalfOpen:
		b.probing = false
		switch o {
		case Success:
			b.setState(Closed)
		case Failure:
			b.open()
		}
	}
}

func (b *Breaker) open() {
	b.setState(Open)
	b.openedAt = b.cfg.Now()
	b.opened++
}

func (b *Breaker) setState(s State) {
	from := b.state
	b.state, b.failures, b.probing = s, 0, false
	b.generation++
	if b.cfg.OnChange != nil && from != s {
		b.cfg.OnChange(from, s)
	}
}

// Stats is what a Breaker has done, for metrics.
type Stats struct {
	State State
	// Opened is how many times it opened (from Closed or from a failed
	// probe).
	Opened uint64
	// Rejected is how many calls it refused with ErrOpen.
	Rejected uint64
}

// Stats returns the breaker's state and counters. An open breaker whose
// cool-down is over reads as Open until a call probes.
func (b *Breaker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{State: b.state, Opened: b.opened, Rejected: b.rejected}
}
