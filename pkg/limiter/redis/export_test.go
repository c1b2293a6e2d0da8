package redis

import (
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// WithClock makes the script take the time from now, in nanoseconds since
// the store was made, instead of from Redis's clock, so that the conformance
// suite can move time by hand.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// Options returns the go-redis options that Open would use for u.
func (u *URL) Options() *goredis.UniversalOptions { return u.universalOptions() }
