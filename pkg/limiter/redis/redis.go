// Package redis is a limiter.Store that keeps every client's window in
// Redis, so that several replicas of the server share one limit per client.
//
// Each decision is one round trip: a Lua script (sent with EVALSHA, and
// with EVAL when Redis does not have it cached yet) that reads the client's
// window, decides, records and sets the key's expiry atomically. The time
// comes from Redis (TIME), not from the replicas, so their clock skew does
// not matter. A client's key is a list of its last Max accepted request
// times in microseconds, and expires when they have all left the window.
//
// When Redis cannot be reached, Allow fails at once or within a short
// timeout and the limiter.Limiter fails open (or closed, if configured).
// The client reconnects by itself when Redis is back.
package redis

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// DefaultPrefix starts the name of every key the store writes.
const DefaultPrefix = "cityfinder:ratelimit:"

// DefaultTimeout bounds each network step with Redis (dial, read, write,
// waiting for a pooled connection) unless the URL sets its own: a rate
// limit must not make a search wait for long.
const DefaultTimeout = 250 * time.Millisecond

// fakeClockTTL keeps the keys of a store with a test clock for a while in
// real time: its windows are measured on a clock that may stand still.
const fakeClockTTL = time.Minute

//go:embed allow.lua
var allowSource string

var allowScript = goredis.NewScript(allowSource)

// Store is a limiter.Store in Redis. It is safe for concurrent use.
type Store struct {
	client goredis.Scripter
	owned  *goredis.Client // closed by Close when Open made it
	prefix string

	now   func() time.Time // nil: Redis TIME
	epoch time.Time
	unit  time.Duration

	log *slog.Logger
}

var _ limiter.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the prefix of the store's keys (default DefaultPrefix),
// so that several services or tests can share one Redis.
func WithPrefix(prefix string) Option {
	return func(s *Store) { s.prefix = prefix }
}

// WithClock makes the script take the time from now, in nanoseconds since
// the store was made, instead of from Redis's clock: for tests that move
// time by hand. Production leaves it out.
func WithClock(now func() time.Time) Option {
	return func(s *Store) { s.now = now }
}

// WithLogger sets where Open sends go-redis's own log lines, at Debug
// (default: nowhere). They repeat, once per failed connection, what the
// limiter.Limiter already logs once per interval. go-redis has one logger
// per process, so the last Open with a logger wins.
func WithLogger(log *slog.Logger) Option {
	return func(s *Store) { s.log = log }
}

// New returns a Store over client, which the caller keeps and closes.
func New(client goredis.Scripter, opts ...Option) *Store {
	s := &Store{client: client, prefix: DefaultPrefix, unit: time.Microsecond}
	for _, opt := range opts {
		opt(s)
	}
	if s.now != nil {
		// Nanoseconds, as the memory store, but counted from the store's
		// start so that Lua's doubles hold them exactly.
		s.unit = time.Nanosecond
		s.epoch = s.now()
	}
	return s
}

// Open connects to the Redis at url (redis://[user:password@]host:port/db,
// or rediss:// for TLS) and returns a Store over it that Close closes. It
// does not wait for Redis: a server down at start is a failing store that
// recovers, like one that goes down later. Unless the URL's query says
// otherwise (dial_timeout, read_timeout, write_timeout, pool_timeout,
// max_retries), every timeout is DefaultTimeout and failed commands are not
// retried, since a retried script could count a request twice.
func Open(url string, opts ...Option) (*Store, error) {
	o, err := goredis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("open redis rate limit store: %w", err)
	}
	for _, d := range []*time.Duration{&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.PoolTimeout} {
		if *d == 0 {
			*d = DefaultTimeout
		}
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = -1
	}
	// One dial per attempt: go-redis would otherwise retry a refused
	// connection five times with backoff, holding the request for 400ms.
	o.DialerRetries = 1
	o.DisableIdentity = true // CLIENT SETINFO: nothing to gain, fails on Redis < 7.2
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	client := goredis.NewClient(o)
	s := New(client, opts...)
	s.owned = client
	routeClientLog(s.log)
	return s, nil
}

// clientLog receives go-redis's log lines; nil drops them.
var (
	clientLog     atomic.Pointer[slog.Logger]
	clientLogOnce sync.Once
)

// clientLogger adapts go-redis's logging interface to clientLog.
type clientLogger struct{}

func (clientLogger) Printf(ctx context.Context, format string, v ...any) {
	if l := clientLog.Load(); l != nil {
		l.DebugContext(ctx, fmt.Sprintf(format, v...), slog.String("component", "redis"))
	}
}

// routeClientLog replaces go-redis's logger, which prints to stderr, once
// per process, and sends its lines to log from now on.
func routeClientLog(log *slog.Logger) {
	clientLogOnce.Do(func() { goredis.SetLogger(clientLogger{}) })
	if log != nil {
		clientLog.Store(log)
	}
}

// Allow implements limiter.Store with one round trip to Redis. Its errors
// other than ErrInvalidPolicy are Redis's: unreachable, timed out, ctx
// ended.
func (s *Store) Allow(ctx context.Context, key string, p limiter.Policy) (limiter.Decision, error) {
	if err := p.Validate(); err != nil {
		return limiter.Decision{}, err
	}
	span := int64(p.Window / s.unit)
	if p.Window%s.unit != 0 {
		span++ // a window is never shorter than asked
	}
	args := []any{p.Max, span, int64(time.Millisecond / s.unit), 0}
	if s.now != nil {
		args[3] = fakeClockTTL.Milliseconds()
		args = append(args, int64(s.now().Sub(s.epoch)/s.unit))
	}
	res, err := allowScript.Run(ctx, s.client, []string{s.prefix + key}, args...).Int64Slice()
	if err != nil {
		return limiter.Decision{}, fmt.Errorf("redis rate limit: %w", err)
	}
	if len(res) != 5 {
		return limiter.Decision{}, fmt.Errorf("redis rate limit: script answered %d values, want 5", len(res))
	}
	return limiter.Decision{
		Allowed:    res[0] == 1,
		Remaining:  int(res[1]),
		RetryAfter: time.Duration(res[2]) * s.unit,
		NextSlot:   time.Duration(res[3]) * s.unit,
		Reset:      time.Duration(res[4]) * s.unit,
	}, nil
}

// Ping checks that Redis answers, for a health check or a warning at start.
// It works only on a Store made by Open.
func (s *Store) Ping(ctx context.Context) error {
	if s.owned == nil {
		return errors.New("redis rate limit: Ping needs a store made by Open")
	}
	if err := s.owned.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis rate limit: %w", err)
	}
	return nil
}

// Addr returns the host:port of the Redis that Open connected to, for logs
// (the URL may hold a password); "" for a store made by New.
func (s *Store) Addr() string {
	if s.owned == nil {
		return ""
	}
	return s.owned.Options().Addr
}

// Close closes the connection that Open made; it does nothing for a store
// made by New.
func (s *Store) Close() error {
	if s.owned == nil {
		return nil
	}
	return s.owned.Close()
}
