package redis_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// replica is one `serve` instance: the real /search handler behind a
// limiter over its own connection to Redis, on a loopback port.
type replica struct {
	url string
	lim *limiter.Limiter
}

// startReplica starts a replica whose limiter uses the Redis at redisURL
// under keys starting with prefix, and trusts X-Forwarded-For from
// 127.0.0.1 (the tests' load balancer), so a test can name its clients.
func startReplica(tb testing.TB, redisURL, prefix string, p limiter.Policy, opts ...limiter.Option) *replica {
	tb.Helper()
	store, err := redis.Open(redisURL, redis.WithPrefix(prefix))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = store.Close() })
	trusted, err := limiter.ParsePrefixes([]string{"127.0.0.1"})
	if err != nil {
		tb.Fatal(err)
	}
	key, err := limiter.NewClientIP(trusted, limiter.DefaultIPv6Prefix)
	if err != nil {
		tb.Fatal(err)
	}
	lim, err := limiter.New(store, p, append([]limiter.Option{limiter.WithKeyFunc(key.Key)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	cities := memory.New()
	paris := search.City{ID: 2988507, Name: "Paris", Slug: "paris", Country: "France"}
	if _, err := cities.Load(tb.Context(), search.Small, &search.SliceReader{Cities: []search.City{paris}}, search.LoadOptions{}); err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(server.New(search.NewService(cities), server.WithSearchMiddleware(lim.Middleware)))
	tb.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		tb.Fatalf("test server on %s, want 127.0.0.1", srv.URL)
	}
	return &replica{url: srv.URL, lim: lim}
}

// response is what a test looks at in an answer to /search.
type response struct {
	status    int
	rateLimit string
	policy    string
	body      string
}

// search asks r for "par" on behalf of client.
func (r *replica) search(tb testing.TB, client string) response {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodGet, r.url+"/search?q=par", nil)
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", client)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return response{resp.StatusCode, resp.Header.Get("RateLimit"), resp.Header.Get("RateLimit-Policy"), string(body)}
}

// Three replicas over one Redis: a client that spreads its requests over
// them gets max accepted per window in total, not per replica, and every
// replica tells it the same remaining count. This test waits one real
// window, since Redis's clock is the point.
func TestReplicasShareOneLimit(t *testing.T) {
	p := limiter.Policy{Max: 5, Window: 2 * time.Second}
	url, prefix := redistest.URL(t), redistest.KeyPrefix(t)
	t.Cleanup(func() { deleteKeys(t, prefix) })
	replicas := []*replica{
		startReplica(t, url, prefix, p),
		startReplica(t, url, prefix, p),
		startReplica(t, url, prefix, p),
	}
	const client = "198.51.100.7"
	burst := func() (statuses []int, remaining []string) {
		for i := range 30 {
			resp := replicas[i%len(replicas)].search(t, client)
			statuses = append(statuses, resp.status)
			remaining = append(remaining, resp.rateLimit)
			if resp.policy != `"search";q=5;w=2` {
				t.Fatalf("request %d: RateLimit-Policy %q", i+1, resp.policy)
			}
		}
		return statuses, remaining
	}
	for window := range 2 {
		start := time.Now()
		statuses, fields := burst()
		if took := time.Since(start); took >= p.Window {
			t.Fatalf("30 requests took %s, longer than the window: the count means nothing", took)
		}
		accepted := 0
		for _, s := range statuses {
			if s == http.StatusOK {
				accepted++
			} else if s != http.StatusTooManyRequests {
				t.Fatalf("window %d: status %d in %v", window+1, s, statuses)
			}
		}
		if accepted != p.Max {
			t.Fatalf("window %d: %d of 30 requests over 3 replicas accepted, want %d: %v", window+1, accepted, p.Max, statuses)
		}
		wantR := []string{"r=4", "r=3", "r=2", "r=1", "r=0", "r=0"}
		for i, want := range wantR {
			if !strings.Contains(fields[i], want+";") {
				t.Errorf("window %d, request %d (replica %d): RateLimit %q, want %s", window+1, i+1, i%3+1, fields[i], want)
			}
		}
		if window == 0 {
			time.Sleep(p.Window - time.Since(start) + 50*time.Millisecond) // until the burst has left the window
		}
	}

	// Another client behind the same load balancer has its own limit.
	if resp := replicas[1].search(t, "203.0.113.9"); resp.status != http.StatusOK {
		t.Fatalf("another client: status %d, want 200", resp.status)
	}
}

// Redis dies and comes back while the replicas keep running: requests are
// served meanwhile (fail-open) or refused with 503 (fail-closed), the error
// is logged once, not per request, and the limit applies again by itself.
func TestRedisDownAndBack(t *testing.T) {
	srv := redistest.Start(t)
	p := limiter.Policy{Max: 2, Window: time.Minute}
	var logs syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	prefix := redistest.KeyPrefix(t)
	open := startReplica(t, srv.URL(), prefix, p, limiter.WithLogger(log))
	closed := startReplica(t, srv.URL(), prefix, p, limiter.WithFailClosed(true), limiter.WithLogger(slog.New(slog.DiscardHandler)))

	expect := func(r *replica, client string, want ...int) {
		t.Helper()
		var got []int
		for range want {
			got = append(got, r.search(t, client).status)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("client %s: statuses %v, want %v", client, got, want)
		}
	}
	expect(open, "198.51.100.1", 200, 200, 429)
	expect(closed, "198.51.100.1", 429)

	srv.Stop(t)
	outage := time.Now()
	for range 20 {
		resp := open.search(t, "198.51.100.1") // over its limit, but nobody can tell
		if resp.status != http.StatusOK || resp.rateLimit != "" || !strings.Contains(resp.body, "Paris") {
			t.Fatalf("fail-open with Redis down: %+v, want 200 with results and no RateLimit", resp)
		}
		resp = closed.search(t, "198.51.100.1")
		if resp.status != http.StatusServiceUnavailable || resp.body != `{"message":"Search is unavailable, try again later"}` {
			t.Fatalf("fail-closed with Redis down: %+v, want 503", resp)
		}
	}
	if open.lim.StoreErr() == nil || open.lim.StoreErrors() < 20 {
		t.Errorf("with Redis down: StoreErr %v, StoreErrors %d; want an error and at least 20", open.lim.StoreErr(), open.lim.StoreErrors())
	}

	srv.Restart(t) // empty: every window starts afresh
	down := time.Since(outage)
	// go-redis stops dialing after repeated failures and probes once a
	// second, so recovery takes up to about a second.
	deadline := time.Now().Add(10 * time.Second)
	for open.search(t, "192.0.2.99").rateLimit == "" || closed.search(t, "192.0.2.99").status == http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatalf("limits not back 10s after Redis restarted; last error %v", open.lim.StoreErr())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := open.lim.StoreErr(); err != nil {
		t.Errorf("after recovery StoreErr = %v, want nil", err)
	}
	expect(open, "198.51.100.2", 200, 200, 429)
	expect(closed, "198.51.100.2", 429)
	expect(closed, "198.51.100.3", 200, 200, 429)

	var failures, recoveries int
	for line := range strings.Lines(logs.String()) {
		var rec struct{ Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		switch rec.Msg {
		case "rate limit store failed, letting requests through":
			failures++
		case "rate limit store recovered":
			recoveries++
		}
	}
	// At most one line per second of outage, plus the first.
	if failures < 1 || failures > 2+int(down/time.Second) {
		t.Errorf("%d failure lines for %s of outage and dozens of failed requests, want about one a second:\n%s", failures, down, logs.String())
	}
	if recoveries != 1 {
		t.Errorf("%d recovery lines, want 1:\n%s", recoveries, logs.String())
	}
}
