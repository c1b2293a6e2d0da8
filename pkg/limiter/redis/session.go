package redis

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// Typing sessions (limiter.Sessions) live apart from the windows of Allow:
// a client's session and its window are the fields of one hash, so that one
// script on one key decides, as Allow's does, and a session moves with its
// client between the replicas that share the Redis.

//go:embed session.lua
var sessionSource string

var sessionScript = goredis.NewScript(sessionSource)

// sessionKeys follows the prefix in the name of a client's hash of
// searches, so that a deployment that switches from counting requests to
// counting searches does not find a client's list where it wants its hash
// (WRONGTYPE): client keys are addresses, which never start with it.
const sessionKeys = "search:"

var _ limiter.SessionStore = (*Store)(nil)

// AllowSearch implements limiter.SessionStore with one round trip to
// Redis; its errors are Allow's.
func (s *Store) AllowSearch(ctx context.Context, key string, q limiter.Search, p limiter.Policy, rule limiter.Sessions) (limiter.Decision, error) {
	if err := p.Validate(); err != nil {
		return limiter.Decision{}, err
	}
	if err := rule.Validate(); err != nil {
		return limiter.Decision{}, err
	}
	args := []any{p.Max, s.units(p.Window), int64(time.Millisecond / s.unit), 0,
		s.units(rule.Gap), rule.MaxRequests, rule.MaxLength, limiter.MaxSessionScope, q.Scope, q.Text}
	if s.now != nil {
		args[3] = fakeClockTTL.Milliseconds()
		args = append(args, int64(s.now().Sub(s.epoch)/s.unit))
	}
	res, err := sessionScript.Run(ctx, s.client, []string{s.prefix + sessionKeys + key}, args...).Int64Slice()
	if err != nil {
		return limiter.Decision{}, fmt.Errorf("redis rate limit: %w", err)
	}
	if len(res) != 6 {
		return limiter.Decision{}, fmt.Errorf("redis rate limit: session script answered %d values, want 6", len(res))
	}
	d := s.decision(res)
	d.Continued = res[5] == 1
	return d, nil
}

// decision reads the first five values a script answers, {allowed (1 or
// 0), remaining, retry_after, next_slot, reset} in the store's time units.
func (s *Store) decision(res []int64) limiter.Decision {
	return limiter.Decision{
		Allowed:    res[0] == 1,
		Remaining:  int(res[1]),
		RetryAfter: time.Duration(res[2]) * s.unit,
		NextSlot:   time.Duration(res[3]) * s.unit,
		Reset:      time.Duration(res[4]) * s.unit,
	}
}

// units returns d in the store's time units, rounded up: a window or a gap
// is never shorter than asked.
func (s *Store) units(d time.Duration) int64 {
	n := int64(d / s.unit)
	if d%s.unit != 0 {
		n++
	}
	return n
}
