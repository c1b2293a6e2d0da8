package redis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/internal/silent"
	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
)

var policy = limiter.Policy{Max: 5, Window: time.Second}

// A Redis that accepts connections and never answers costs each decision
// its read timeout until the breaker opens; then decisions fail at once,
// matching breaker.ErrOpen, and Ping says so too. After the cool-down one
// command probes, and finding Redis still hung, opens it again.
func TestBreakerSkipsAHungRedis(t *testing.T) {
	const timeout = 100 * time.Millisecond
	now := time.Unix(1_000_000, 0) // the breaker's clock, moved by hand
	b := breaker.New(breaker.Config{Threshold: 3, Cooldown: time.Minute, Now: func() time.Time { return now }})
	store, err := redis.Open("redis://"+silent.Listen(t)+"/0?read_timeout=100ms&write_timeout=100ms&dial_timeout=100ms",
		redis.WithBreaker(b))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for i := range 3 {
		start := time.Now()
		_, err := store.Allow(t.Context(), "client", policy)
		if err == nil || errors.Is(err, breaker.ErrOpen) || time.Since(start) < timeout {
			t.Fatalf("decision %d on a hung Redis = %v after %s, want a timeout", i, err, time.Since(start))
		}
	}
	if st := b.Stats(); st.State != breaker.Open || st.Opened != 1 {
		t.Fatalf("after three timeouts the breaker is %+v, want open once", st)
	}
	start := time.Now()
	for range 100 {
		if _, err := store.Allow(t.Context(), "client", policy); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("decision with the breaker open = %v, want ErrOpen", err)
		}
	}
	if err := store.Ping(t.Context()); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("Ping with the breaker open = %v, want ErrOpen", err)
	}
	if took := time.Since(start); took > timeout {
		t.Errorf("100 decisions and a ping with the breaker open took %s, more than one timeout", took)
	}
	now = now.Add(time.Minute)
	if _, err := store.Allow(t.Context(), "client", policy); err == nil || errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("the probe after the cool-down = %v, want a timeout", err)
	}
	if st := b.Stats(); st.State != breaker.Open || st.Opened != 2 || st.Rejected != 101 {
		t.Errorf("after a failed probe the breaker is %+v, want open a second time", st)
	}
}

// Redis killed and started again: the breaker opens while it is down and
// closes at the first probe once it is back; answers of Redis, even errors
// (the script not cached yet on the new server), count as successes.
func TestBreakerClosesWhenRedisIsBack(t *testing.T) {
	srv := redistest.Start(t)
	now := time.Unix(1_000_000, 0) // the breaker's clock, moved by hand
	b := breaker.New(breaker.Config{Threshold: 2, Cooldown: time.Second, Now: func() time.Time { return now }})
	store := mustOpenURL(t, srv.URL(), redis.WithBreaker(b), redis.WithPrefix(redistest.KeyPrefix(t)))
	if _, err := store.Allow(t.Context(), "client", policy); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	for range 2 {
		if _, err := store.Allow(t.Context(), "client", policy); err == nil {
			t.Fatal("a decision with Redis down succeeded")
		}
	}
	if st := b.Stats().State; st != breaker.Open {
		t.Fatalf("with Redis down the breaker is %s, want open", st)
	}
	srv.Restart(t)
	now = now.Add(time.Second)
	d, err := store.Allow(t.Context(), "client", policy)
	if err != nil || !d.Allowed {
		t.Fatalf("the probe with Redis back = %+v, %v", d, err)
	}
	if st := b.Stats(); st.State != breaker.Closed || st.Opened != 1 {
		t.Errorf("with Redis back the breaker is %+v, want closed", st)
	}
}
