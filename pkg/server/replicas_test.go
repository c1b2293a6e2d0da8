package server_test

// Replicas of the server sharing one rate limit through Redis: each replica
// is the real /search handler behind a limiter with a Redis store of its
// own, as `serve --redis-url` builds it, over the memory search store.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/redis"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// The words the replicas answer with, as serve gives them to its limiter.
const (
	limitMessage       = "You can only do 5 searches in 2 seconds"
	unavailableMessage = "Search is unavailable, try again later"
)

// replica is one `serve` instance on a loopback port.
type replica struct {
	url   string
	lim   *limiter.Limiter
	store *redis.Store
}

// patientRedis gives a Redis URL seconds a step rather than the default
// 250 ms, for the tests whose point is the count the replicas share: past
// its timeout, a limiter lets the request through unlimited, without
// RateLimit, as a loaded machine running make test's two passes once made
// it do here.
const patientRedis = "?read_timeout=5s&write_timeout=5s&dial_timeout=5s&pool_timeout=5s"

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
	opts = append([]limiter.Option{limiter.WithKeyFunc(key.Key), limiter.WithLimitMessage(limitMessage),
		limiter.WithUnavailableMessage(unavailableMessage), limiter.WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	lim, err := limiter.New(store, p, opts...)
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
	return &replica{url: srv.URL, lim: lim, store: store}
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
	return r.get(tb, client, "/search?q=par")
}

// get asks r for target on behalf of client.
func (r *replica) get(tb testing.TB, client, target string) response {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodGet, r.url+target, nil)
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

// statuses makes n searches of client, spread over replicas in turn, and
// returns their statuses.
func statuses(tb testing.TB, replicas []*replica, client string, n int) []int {
	tb.Helper()
	var got []int
	for i := range n {
		got = append(got, replicas[i%len(replicas)].search(tb, client).status)
	}
	return got
}

// counts returns how many of statuses are 200, 429 and 503.
func counts(statuses []int) (ok, tooMany, unavailable int) {
	for _, s := range statuses {
		switch s {
		case http.StatusOK:
			ok++
		case http.StatusTooManyRequests:
			tooMany++
		case http.StatusServiceUnavailable:
			unavailable++
		}
	}
	return ok, tooMany, unavailable
}

// Three replicas over one Redis: a client that spreads its requests over
// them gets max accepted per window in total, not per replica, and every
// replica tells it the same remaining count. This test waits for one real
// window to pass, since Redis's clock is the point.
func TestReplicasShareOneLimit(t *testing.T) {
	p := limiter.Policy{Max: 5, Window: 2 * time.Second}
	url, prefix := redistest.Start(t).URL()+patientRedis, redistest.KeyPrefix(t)
	replicas := []*replica{
		startReplica(t, url, prefix, p),
		startReplica(t, url, prefix, p),
		startReplica(t, url, prefix, p),
	}
	const client = "198.51.100.7"
	// burst makes 30 requests and checks that exactly Max pass, with the remaining count going down across replicas.
	burst := func(window int) {
		start := time.Now()
		var responses []response
		for i := range 30 {
			responses = append(responses, replicas[i%len(replicas)].search(t, client))
		}
		if took := time.Since(start); took >= p.Window {
			t.Fatalf("30 requests took %s, longer than the window: the count means nothing", took)
		}
		var got []int
		for i, resp := range responses {
			got = append(got, resp.status)
			if resp.policy != `"search";q=5;w=2` {
				t.Fatalf("window %d, request %d: RateLimit-Policy %q", window, i+1, resp.policy)
			}
			if resp.status == http.StatusTooManyRequests && resp.body != `{"message":"`+limitMessage+`"}` {
				t.Fatalf("window %d, request %d: 429 says %s", window, i+1, resp.body)
			}
		}
		if ok, tooMany, _ := counts(got); ok != p.Max || tooMany != 30-p.Max {
			t.Fatalf("window %d: %d of 30 requests over 3 replicas accepted, want %d: %v", window, ok, p.Max, got)
		}
		for i, want := range []string{"r=4", "r=3", "r=2", "r=1", "r=0", "r=0"} {
			if !strings.Contains(responses[i].rateLimit, want+";") {
				t.Errorf("window %d, request %d (replica %d): RateLimit %q, want %s", window, i+1, i%3+1, responses[i].rateLimit, want)
			}
		}
	}
	burst(1)

	// The client's key expires when its newest request leaves the window,
	// by Redis's clock: then the whole burst has left it.
	o, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := goredis.NewClient(o)
	t.Cleanup(func() { _ = rdb.Close() })
	poll.UntilNil(t, 2*p.Window, func() error {
		if n, err := rdb.Exists(t.Context(), prefix+client).Result(); err != nil || n != 0 {
			return fmt.Errorf("the client's key is still there (%d, %v)", n, err)
		}
		return nil
	})
	burst(2)

	// Another client behind the same load balancer has its own limit.
	if resp := replicas[1].search(t, "203.0.113.9"); resp.status != http.StatusOK {
		t.Fatalf("another client: status %d, want 200", resp.status)
	}
}

// logMessages returns the msg of every JSON log line in logs.
func logMessages(tb testing.TB, logs string) []string {
	tb.Helper()
	var msgs []string
	for line := range strings.Lines(logs) {
		var rec struct{ Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		msgs = append(msgs, rec.Msg)
	}
	return msgs
}

// Redis dies and comes back while the replicas keep running: requests are
// served meanwhile (fail-open) or refused with 503 (fail-closed), the error
// is logged once a second, not per request, and the limit applies again by
// itself.
func TestRedisDownAndBack(t *testing.T) {
	srv := redistest.Start(t)
	p := limiter.Policy{Max: 2, Window: time.Minute}
	var logs syncbuf.Buffer
	prefix := redistest.KeyPrefix(t)
	open := startReplica(t, srv.URL(), prefix, p, limiter.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	closed := startReplica(t, srv.URL(), prefix, p, limiter.WithFailClosed(true))

	expect := func(r *replica, client string, want ...int) {
		t.Helper()
		if got := statuses(t, []*replica{r}, client, len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
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
		if resp.status != http.StatusServiceUnavailable || resp.body != `{"message":"`+unavailableMessage+`"}` {
			t.Fatalf("fail-closed with Redis down: %+v, want 503", resp)
		}
	}
	if n := open.lim.StoreErrors(); n < 20 {
		t.Errorf("with Redis down: StoreErrors %d, want at least 20", n)
	}
	if err := open.store.Ping(t.Context()); err == nil {
		t.Error("Ping with Redis down: no error")
	}

	srv.Restart(t) // empty: every window starts afresh
	down := time.Since(outage)
	// go-redis stops dialing after repeated failures and probes once a
	// second, so recovery takes up to about a second.
	poll.UntilNil(t, 10*time.Second, func() error {
		if open.search(t, "192.0.2.99").rateLimit == "" || closed.search(t, "192.0.2.99").status == http.StatusServiceUnavailable {
			return errors.New("limits not back after Redis restarted")
		}
		return nil
	})
	expect(open, "198.51.100.2", 200, 200, 429)
	expect(closed, "198.51.100.2", 429)
	expect(closed, "198.51.100.3", 200, 200, 429)

	var failures, recoveries int
	for _, msg := range logMessages(t, logs.String()) {
		switch msg {
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

// Three replicas over a Redis Cluster of three nodes share one limit per
// client. When a node dies, only the clients whose keys hash to its slots
// lose their limit (fail open, or 503 when failing closed); the others keep
// theirs. When it comes back, empty, the replicas limit its clients again
// without a restart.
func TestReplicasShareOneLimitThroughACluster(t *testing.T) {
	cluster := redistest.StartCluster(t, 3)
	p := limiter.Policy{Max: 3, Window: time.Minute}
	prefix := redistest.KeyPrefix(t)
	var logs syncbuf.Buffer
	replicas := []*replica{
		startReplica(t, cluster.URL(), prefix, p, limiter.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil)))),
		startReplica(t, cluster.URL(), prefix, p),
		startReplica(t, cluster.URL(), prefix, p),
	}
	closed := startReplica(t, cluster.URL(), prefix, p, limiter.WithFailClosed(true))

	// Two clients on each node.
	clientsOf := make(map[*redistest.Server][]string)
	for i := 0; len(clientsOf) < len(cluster.Nodes) || minLen(clientsOf) < 2; i++ {
		client := fmt.Sprintf("198.51.100.%d", i)
		node := cluster.NodeOf(t, prefix+client)
		clientsOf[node] = append(clientsOf[node], client)
	}
	for _, clients := range clientsOf {
		for _, client := range clients {
			if ok, tooMany, _ := counts(statuses(t, replicas, client, 3*p.Max)); ok != p.Max || tooMany != 2*p.Max {
				t.Fatalf("client %s over 3 replicas: %d accepted and %d refused of %d, want %d and the rest", client, ok, tooMany, 3*p.Max, p.Max)
			}
		}
	}

	dead := cluster.Nodes[1]
	dead.Stop(t)
	for node, clients := range clientsOf {
		for _, client := range clients {
			got := statuses(t, replicas, client, 6)
			ok, tooMany, _ := counts(got)
			_, _, unavailable := counts(statuses(t, []*replica{closed}, client, 2))
			switch {
			case node == dead && (ok != 6 || unavailable != 2):
				t.Errorf("client %s of the dead node: %v and %d of 2 answered 503 failing closed, want all let through and 503",
					client, got, unavailable)
			case node != dead && (tooMany != 6 || unavailable != 0):
				t.Errorf("client %s of a live node: %v and %d answered 503 failing closed, want its limit kept: all 429", client, got, unavailable)
			}
		}
	}
	if err := replicas[0].store.Ping(t.Context()); err == nil || !strings.Contains(err.Error(), dead.Addr()) {
		t.Errorf("Ping with a cluster node down: %v, want an error naming %s", err, dead.Addr())
	}

	dead.Restart(t) // empty: its clients start afresh
	cluster.WaitHealthy(t)
	victim := clientsOf[dead][0]
	poll.UntilNil(t, 10*time.Second, func() error {
		if r := replicas[0].search(t, victim); r.rateLimit == "" {
			return fmt.Errorf("client %s of the restarted node still unlimited: %+v", victim, r)
		}
		return nil
	})
	for _, client := range clientsOf[dead] {
		got := statuses(t, append(replicas, closed), client, 2*p.Max)
		if ok, tooMany, _ := counts(got); ok+tooMany != len(got) || ok > p.Max {
			t.Errorf("client %s of the restarted node: %v, want its limit back", client, got)
		}
	}
	if err := replicas[0].store.Ping(t.Context()); err != nil {
		t.Errorf("Ping once the node is back: %v", err)
	}
	msgs := strings.Join(logMessages(t, logs.String()), "\n")
	if !strings.Contains(msgs, "rate limit store failed") || !strings.Contains(msgs, "rate limit store recovered") {
		t.Errorf("the log does not tell the outage and the recovery:\n%s", logs.String())
	}
}

func minLen(m map[*redistest.Server][]string) int {
	n := -1
	for _, v := range m {
		if n < 0 || len(v) < n {
			n = len(v)
		}
	}
	return n
}
