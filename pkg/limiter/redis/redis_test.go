package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// mustOpen opens a store on the test's shared Redis with keys of its own.
func mustOpen(tb testing.TB, opts ...redis.Option) (*redis.Store, string) {
	tb.Helper()
	prefix := redistest.KeyPrefix(tb)
	store := mustOpenURL(tb, redistest.URL(tb), append([]redis.Option{redis.WithPrefix(prefix)}, opts...)...)
	tb.Cleanup(func() { deleteKeys(tb, prefix) })
	return store, prefix
}

// mustOpenURL opens a store on the Redis at url, closed when the test
// ends, and checks that it answers.
func mustOpenURL(tb testing.TB, url string, opts ...redis.Option) *redis.Store {
	tb.Helper()
	store, err := redis.Open(url, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = store.Close() })
	if err := store.Ping(tb.Context()); err != nil {
		tb.Fatalf("Redis at %s does not answer: %v", store, err)
	}
	return store
}

// deleteKeys removes the keys under prefix from the shared Redis, which may
// be one the tests do not own (CITYFINDER_TEST_REDIS_URL).
func deleteKeys(tb testing.TB, prefix string) {
	client := mustClient(tb)
	ctx := context.Background() // tb.Context is done in cleanups
	iter := client.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		if err := client.Del(ctx, iter.Val()).Err(); err != nil {
			tb.Errorf("delete %s: %v", iter.Val(), err)
			return
		}
	}
	if err := iter.Err(); err != nil {
		tb.Errorf("scan %s*: %v", prefix, err)
	}
}

// mustClient is a plain client of the test's shared Redis, to look at keys.
func mustClient(tb testing.TB) *goredis.Client {
	tb.Helper()
	o, err := goredis.ParseURL(redistest.URL(tb))
	if err != nil {
		tb.Fatal(err)
	}
	c := goredis.NewClient(o)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// The conformance suite, on the test's clock passed to the script.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) limiter.Store {
		store, _ := mustOpen(t, redis.WithClock(now))
		return store
	})
}

// Without a test clock the window runs on Redis's TIME: this is the one
// test that waits for real time to pass, a fraction of a second, polling
// until Redis says it has.
func TestWindowOnRedisTime(t *testing.T) {
	store, prefix := mustOpen(t)
	client := mustClient(t)
	p := limiter.Policy{Max: 2, Window: 300 * time.Millisecond}

	for i := range p.Max {
		if d := storetest.MustAllow(t, store, "client", p); !d.Allowed || d.Remaining != p.Max-1-i {
			t.Fatalf("request %d: %+v, want accepted with %d remaining", i+1, d, p.Max-1-i)
		}
	}
	start := time.Now()
	rejectedAt := storetest.MustAllow(t, store, "client", p)
	if d := rejectedAt; d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > p.Window || d.NextSlot != d.RetryAfter {
		t.Fatalf("third request: %+v, want rejected with 0 < RetryAfter = NextSlot <= %s", d, p.Window)
	}

	// The key expires when the window of its newest request ends.
	ttl, err := client.PTTL(t.Context(), prefix+"client").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 0 || ttl > p.Window {
		t.Errorf("PTTL = %s, want in (0, %s]", ttl, p.Window)
	}

	// Polling is free: a rejected request is not recorded.
	poll.UntilNil(t, 10*p.Window, func() error {
		if d := storetest.MustAllow(t, store, "client", p); !d.Allowed {
			return fmt.Errorf("still rejected %s after RetryAfter %s: %+v", time.Since(start), rejectedAt.RetryAfter, d)
		}
		return nil
	})
	if waited := time.Since(start); waited < rejectedAt.RetryAfter-time.Millisecond {
		t.Errorf("accepted %s after a rejection that said RetryAfter %s", waited, rejectedAt.RetryAfter)
	}

	// An idle client costs nothing: its key is gone a window later.
	poll.UntilNil(t, 10*p.Window, func() error {
		n, err := client.Exists(t.Context(), prefix+"client").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			return fmt.Errorf("key %s still there", prefix+"client")
		}
		return nil
	})
}

// Every key the script writes has an expiry, including those whose policy
// shrank and those of rejected requests.
func TestEveryKeyExpires(t *testing.T) {
	store, prefix := mustOpen(t)
	client := mustClient(t)
	for _, p := range []limiter.Policy{
		{Max: 3, Window: time.Hour},
		{Max: 1, Window: time.Hour}, // shrinks the list
		{Max: 1, Window: time.Hour}, // rejected
		{Max: 2, Window: time.Minute},
	} {
		storetest.MustAllow(t, store, "client", p)
		ttl, err := client.PTTL(t.Context(), prefix+"client").Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= 0 || ttl > time.Hour {
			t.Fatalf("after a request under %+v: PTTL = %s, want in (0, 1h]", p, ttl)
		}
	}
	keys, err := client.Keys(t.Context(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Fatalf("keys %q, want one for the one client", keys)
	}
}

// commandCounter counts the commands a client sends.
type commandCounter struct {
	names atomic.Pointer[[]string]
}

func (c *commandCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (c *commandCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}
func (c *commandCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		for {
			old := c.names.Load()
			names := append(append([]string(nil), deref(old)...), cmd.Name())
			if c.names.CompareAndSwap(old, &names) {
				break
			}
		}
		return next(ctx, cmd)
	}
}

func deref(p *[]string) []string {
	if p == nil {
		return nil
	}
	return *p
}

// One round trip per decision: EVALSHA, and EVAL only when Redis has lost
// the script (restarted, SCRIPT FLUSH).
func TestOneRoundTripPerDecision(t *testing.T) {
	client := mustClient(t)
	counter := &commandCounter{}
	client.AddHook(counter)
	prefix := redistest.KeyPrefix(t)
	t.Cleanup(func() { deleteKeys(t, prefix) })
	store := redis.New(client, redis.WithPrefix(prefix))
	p := limiter.Policy{Max: 5, Window: time.Minute}

	if err := client.ScriptFlush(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	counter.names.Store(nil)
	storetest.MustAllow(t, store, "a", p)
	storetest.MustAllow(t, store, "b", p)
	storetest.MustAllow(t, store, "a", p)
	if got, want := strings.Join(deref(counter.names.Load()), " "), "evalsha eval evalsha evalsha"; got != want {
		t.Fatalf("commands %q, want %q", got, want)
	}
}

func TestUnreachableRedisFailsFast(t *testing.T) {
	store, err := redis.Open("redis://" + redistest.DownAddr(t) + "/0")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := limiter.Policy{Max: 1, Window: time.Second}
	start := time.Now()
	for range 20 {
		if _, err := store.Allow(t.Context(), "client", p); err == nil {
			t.Fatal("Allow with Redis down: no error")
		}
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("20 decisions with Redis down took %s, want them to fail fast", took)
	}
	if err := store.Ping(t.Context()); err == nil {
		t.Error("Ping with Redis down: no error")
	}
}

func TestAllowInvalidPolicyNeedsNoRedis(t *testing.T) {
	store := redis.New(goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"}))
	_, err := store.Allow(t.Context(), "client", limiter.Policy{})
	if !errors.Is(err, limiter.ErrInvalidPolicy) {
		t.Fatalf("error %v, want ErrInvalidPolicy", err)
	}
}

// The session suite, on the test's clock; replicas are stores of their
// own over the same keys, as servers sharing one Redis are.
func TestSessions(t *testing.T) {
	storetest.RunSessions(t, func(t *testing.T, now func() time.Time, replicas int) []limiter.SessionStore {
		first, prefix := mustOpen(t, redis.WithClock(now))
		stores := []limiter.SessionStore{first}
		for len(stores) < replicas {
			stores = append(stores, mustOpenURL(t, redistest.URL(t), redis.WithPrefix(prefix), redis.WithClock(now)))
		}
		return stores
	})
}

// A client's hash of searches expires when it is as good as new: its
// window empty and its search's gap passed, whichever comes later, on
// Redis's own clock.
func TestSessionKeyExpires(t *testing.T) {
	store, prefix := mustOpen(t)
	client := mustClient(t)
	q := limiter.Search{Scope: "small", Text: "par"}
	for _, tc := range []struct {
		p    limiter.Policy
		rule limiter.Sessions
		want time.Duration // the longer of window and gap
	}{
		{limiter.Policy{Max: 5, Window: time.Hour}, limiter.Sessions{Gap: time.Minute, MaxRequests: 3, MaxLength: 10}, time.Hour},
		{limiter.Policy{Max: 5, Window: time.Minute}, limiter.Sessions{Gap: time.Hour, MaxRequests: 3, MaxLength: 10}, time.Hour},
	} {
		storetest.MustAllowSearch(t, store, "client", q, tc.p, tc.rule)
		ttl, err := client.PTTL(t.Context(), prefix+"search:client").Result()
		if err != nil {
			t.Fatal(err)
		}
		if ttl <= tc.want-time.Minute || ttl > tc.want {
			t.Fatalf("under %+v and %+v: PTTL = %s, want about %s", tc.p, tc.rule, ttl, tc.want)
		}
		q.Text += "i"
	}
}
