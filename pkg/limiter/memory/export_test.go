package memory

import "time"

// Test hooks: the memory store's tests look inside it through these.

// Sweep sweeps every shard now, as the background sweep does on its ticks.
func (s *Store) Sweep() { s.sweepAll() }

// Len returns how many clients the store holds a window for.
func (s *Store) Len() int { return int(s.clients.Load()) }

// WithTicks makes the background sweep run on each value sent on ticks,
// instead of on a timer, and send on swept when it is done.
func WithTicks(ticks <-chan time.Time, swept chan<- struct{}) Option {
	return func(s *Store) {
		s.sweepEvery = time.Hour // any positive interval: the ticks decide
		s.ticker = func(time.Duration) (<-chan time.Time, func()) { return ticks, func() {} }
		s.afterTick = func() { swept <- struct{}{} }
	}
}
