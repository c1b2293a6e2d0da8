// Package redis is a limiter.Store that keeps every client's window in
// Redis, so that several replicas of the server share one limit per client.
//
// # Where Redis is
//
// Open takes a URL in one of three forms, by how Redis is deployed:
//
//	redis://[[user]:password@]host[:port][/db][?options]
//	redis+cluster://[[user]:password@]host[:port][,host[:port]…][?options]
//	redis+sentinel://[[user]:password@]host[:port][,host[:port]…]/master[/db][?options]
//
// The first is one server (port 6379, database 0 by default). The second is
// a Redis Cluster: the hosts are seed nodes, any of the cluster's nodes, from
// which the client learns the others; a cluster has database 0 only. The
// third finds the master named master through the Sentinel servers at the
// hosts (port 26379 by default) and follows it when they fail it over.
// rediss://, rediss+cluster:// and rediss+sentinel:// are the same over TLS.
// IPv6 hosts go in brackets: [2001:db8::1]:6379. The user and password
// authenticate with Redis (its ACL user, or the requirepass password alone
// with :password@) and are percent-encoded: / ? # @ [ ] % and spaces in a
// password are written %2F %3F %23 %40 %5B %5D %25 %20. The options are
// dial_timeout, read_timeout, write_timeout and pool_timeout (Go durations;
// DefaultTimeout each), max_retries (default 0: a failed decision is not
// retried, since a retried script could count a request twice), for a
// cluster max_redirects (default DefaultMaxRedirects), and for Sentinel
// sentinel_username and sentinel_password, when the sentinels require their
// own credentials.
//
// ParseURL checks a URL without connecting. Its errors, like every error and
// log line of this package, never quote the URL: they say what is wrong and
// where, and name servers by their host and port only.
//
// # One round trip per decision
//
// Each decision is a Lua script (sent with EVALSHA, and with EVAL when Redis
// does not have it cached yet) that reads the client's window, decides,
// records and sets the key's expiry atomically. The script touches one key,
// the client's, so that Redis Cluster runs it on the node that holds that
// key's slot; a script that ever needs more keys must give them one hash tag.
// The time comes from Redis (TIME), not from the replicas, so their clock
// skew does not matter. A client's key is a list of its last Max accepted
// request times in microseconds, and expires when they have all left the
// window.
//
// When Redis cannot be reached, Allow fails at once or within a short
// timeout and the limiter.Limiter fails open (or closed, if configured). In
// a cluster that holds for the clients whose keys live on the unreachable
// node; the others keep their limits. The client reconnects by itself when
// Redis is back.
package redis

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// DefaultPrefix starts the name of every key the store writes.
const DefaultPrefix = "cityfinder:ratelimit:"

// DefaultTimeout bounds each network step with Redis (dial, read, write,
// waiting for a pooled connection) unless the URL sets its own: a rate
// limit must not make a request wait for long.
const DefaultTimeout = 250 * time.Millisecond

// fakeClockTTL keeps the keys of a store with a test clock for a while in
// real time: its windows are measured on a clock that may stand still.
const fakeClockTTL = time.Minute

//go:embed allow.lua
var allowSource string

var allowScript = goredis.NewScript(allowSource)

// Store is a limiter.Store in Redis. It is safe for concurrent use.
type Store struct {
	client goredis.UniversalClient
	owned  bool   // Close closes client: Open made it
	where  string // the URL without credentials, for logs
	prefix string

	now   func() time.Time // nil: Redis TIME
	epoch time.Time
	unit  time.Duration

	log *slog.Logger

	breaker *breaker.Breaker // nil: none (see WithBreaker)
}

var (
	_ limiter.Store  = (*Store)(nil)
	_ limiter.Pinger = (*Store)(nil)
)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the prefix of the store's keys (default DefaultPrefix),
// so that several services or tests can share one Redis.
func WithPrefix(prefix string) Option {
	return func(s *Store) { s.prefix = prefix }
}

// WithLogger sets where Open sends go-redis's own log lines, at Debug
// (default: nowhere). They repeat, once per failed connection, what the
// limiter.Limiter already logs once per interval. go-redis has one logger
// per process, so the last Open with a logger wins.
func WithLogger(log *slog.Logger) Option {
	return func(s *Store) { s.log = log }
}

// New returns a Store over client, which the caller keeps and closes: a
// *goredis.Client, *goredis.ClusterClient or failover client.
func New(client goredis.UniversalClient, opts ...Option) *Store {
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
	if s.breaker != nil {
		client.AddHook(breakerHook{b: s.breaker, store: s})
	}
	return s
}

// Open returns a Store over the Redis at url, in one of the forms of the
// package comment, that Close closes. It does not wait for Redis: a server
// down at start is a failing store that recovers, like one that goes down
// later. Its errors wrap ErrInvalidURL and do not quote url.
func Open(url string, opts ...Option) (*Store, error) {
	u, err := ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("open redis rate limit store: %w", err)
	}
	s := New(u.newClient(), opts...)
	s.owned, s.where = true, u.String()
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
	return s.decision(res), nil
}

// Ping implements limiter.Pinger: it checks that Redis answers. On a
// cluster it asks every master, and fails while any of them does not
// answer, even though the clients whose keys live on the others are still
// limited: a store that cannot decide for every client is not ready.
func (s *Store) Ping(ctx context.Context) error {
	var err error
	if c, ok := s.client.(*goredis.ClusterClient); ok {
		err = c.ForEachMaster(ctx, func(ctx context.Context, master *goredis.Client) error {
			return master.Ping(ctx).Err()
		})
	} else {
		err = s.client.Ping(ctx).Err()
	}
	if err != nil {
		return fmt.Errorf("redis rate limit at %s: %w", s, err)
	}
	return nil
}

// String says where the store's Redis is, for logs: the URL that Open was
// given without its user, password and options (see URL.String), or "a
// Redis client" for a store made by New.
func (s *Store) String() string {
	if s.where == "" {
		return "a Redis client"
	}
	return s.where
}

// Close closes the client that Open made; it does nothing for a store made
// by New.
func (s *Store) Close() error {
	if !s.owned {
		return nil
	}
	return s.client.Close()
}
