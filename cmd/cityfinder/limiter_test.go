package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/internal/redistest"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// serveConfig loads serve's configuration from args, as the root command
// does.
func serveConfig(t *testing.T, args ...string) (*config, error) {
	t.Helper()
	cmd, _, err := newRootCmd().Find([]string{"serve"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return loadConfig(cmd.Flags())
}

// startLimiter builds serve's limiter from args, logging JSON to logs, and
// closes its store when the test ends.
func startLimiter(t *testing.T, logs *syncbuf.Buffer, args ...string) (*limiter.Limiter, limiterStore) {
	t.Helper()
	cfg, err := serveConfig(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{cfg: cfg, logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	lim, store, err := newLimiter(t.Context(), a, limiter.Policy{Max: cfg.Limiter.Max, Window: cfg.Limiter.Window}, make(breakers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	return lim, store
}

// A trusted proxy network that holds every address would let any client
// choose its key: serve refuses it unless --trust-all-proxies confirms it,
// and then warns at start.
func TestTrustedProxiesCatchAll(t *testing.T) {
	const refusal = "holds every address, so any client could choose its own rate limit key with X-Forwarded-For; " +
		"list your proxies' networks, or set --trust-all-proxies if no client can reach serve but through them"
	const warning = "every address is a trusted proxy"
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string // "" for none
		warn    bool
	}{
		{"a proxy network", []string{"--trusted-proxies", "10.0.0.0/8"}, nil, "", false},
		{"every IPv4 address", []string{"--trusted-proxies", "10.0.0.0/8,0.0.0.0/0"}, nil, "invalid --trusted-proxies: 0.0.0.0/0 " + refusal, false},
		{"every IPv6 address", []string{"--trusted-proxies", "::/0"}, nil, "invalid --trusted-proxies: ::/0 " + refusal, false},
		{"every IPv4 address, mapped", []string{"--trusted-proxies", "::ffff:0.0.0.0/96"}, nil, "invalid --trusted-proxies: ::ffff:0.0.0.0/96 " + refusal, false},
		{"any prefix of length 0", []string{"--trusted-proxies", "192.0.2.0/0"}, nil, "invalid --trusted-proxies: 0.0.0.0/0 " + refusal, false},
		{"half of them is not every one", []string{"--trusted-proxies", "0.0.0.0/1"}, nil, "", false},
		{"confirmed by the flag", []string{"--trusted-proxies", "0.0.0.0/0,::/0", "--trust-all-proxies"}, nil, "", true},
		{"confirmed by the environment", []string{"--trusted-proxies", "0.0.0.0/0"}, map[string]string{"CITYFINDER_TRUST_ALL_PROXIES": "true"}, "", true},
		{"confirmed in the config file", []string{"--config", "TRUST_ALL_FILE"}, nil, "", true},
		{"confirmation without a catch-all", []string{"--trusted-proxies", "10.0.0.0/8", "--trust-all-proxies"}, nil, "", false},
	}
	file := writeFile(t, "c.yaml", "limiter:\n  trusted_proxies: [\"::/0\"]\n  trust_all_proxies: true\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			for i, a := range tt.args {
				if a == "TRUST_ALL_FILE" {
					tt.args[i] = file
				}
			}
			cfg, err := serveConfig(t, tt.args...)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v,\nwant %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var logs syncbuf.Buffer
			startLimiter(t, &logs, tt.args...)
			if got := strings.Count(logs.String(), warning); tt.warn != (got > 0) {
				t.Fatalf("log %s, want the warning: %v", logs.String(), tt.warn)
			}
			if tt.warn && len(cfg.Limiter.TrustedProxies) > 0 && !strings.Contains(logs.String(), `"level":"WARN"`) {
				t.Fatalf("the warning is not at WARN: %s", logs.String())
			}
		})
	}
}

// A password in --redis-url shows in no message of serve's limiter,
// whatever character it holds: not in the configuration's error when it is
// not percent-encoded, nor, when it is, in the startup log line (Redis up or
// down), the log of a failing store, or the readiness check's error.
func TestRedisURLPasswordsAreNeverPrinted(t *testing.T) {
	srv := redistest.Start(t)
	down := redistest.DownAddr(t)
	for i, password := range redistest.Passwords {
		user := fmt.Sprintf("user%d", i)
		t.Run(password, func(t *testing.T) {
			assertNoSecret := func(where, text string) {
				t.Helper()
				redistest.AssertNoPassword(t, where, text)
			}
			srv.AddUser(t, user, password)
			if _, err := serveConfig(t, "--redis-url", "redis://"+user+":"+password+"@"+srv.Addr()+"/0"); err != nil {
				if !strings.HasPrefix(err.Error(), "--redis-url: invalid Redis URL: ") {
					t.Errorf("error %q, want it to name --redis-url", err)
				}
				assertNoSecret("the configuration's error", err.Error())
			} else if strings.ContainsAny(password, "?/@%#[] ") {
				t.Errorf("a password with a character to encode was accepted unencoded")
			}

			encoded := redistest.EncodePassword(password)
			for _, tc := range []struct {
				name, url string
				up        bool
			}{
				{"Redis up", "redis://" + user + ":" + encoded + "@" + srv.Addr() + "/0", true},
				{"Redis down", "redis://" + user + ":" + encoded + "@" + down + "/0", false},
				{"cluster down", "redis+cluster://" + user + ":" + encoded + "@" + down, false},
				{"sentinel down", "redis+sentinel://" + user + ":" + encoded + "@" + down + "/mymaster/0", false},
			} {
				var logs syncbuf.Buffer
				lim, store := startLimiter(t, &logs, "--redis-url", tc.url, "--max", "1")
				want := "rate limits shared in Redis"
				if !tc.up {
					want = "Redis does not answer yet"
				}
				if !strings.Contains(logs.String(), want) {
					t.Errorf("%s: the log lacks %q: %s", tc.name, want, logs.String())
				}
				h := lim.Middleware(http.NotFoundHandler())
				for range 2 {
					h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/search?q=par", nil))
				}
				if !tc.up && !strings.Contains(logs.String(), "rate limit store failed") {
					t.Errorf("%s: no store failure logged: %s", tc.name, logs.String())
				}
				pinger, ok := store.(limiter.Pinger)
				if !ok {
					t.Fatalf("%s: the Redis store is no limiter.Pinger", tc.name)
				}
				if err := pinger.Ping(t.Context()); tc.up != (err == nil) {
					t.Errorf("%s: Ping: %v", tc.name, err)
				} else if err != nil {
					assertNoSecret(tc.name+": the readiness check's error", err.Error())
				}
				assertNoSecret(tc.name+": the log", logs.String())
			}
		})
	}
}

// --limit-by: serve's limiter counts a name typed letter by letter as one
// search, in process and in Redis, unless told to count requests, as it
// did before.
func TestLimitBy(t *testing.T) {
	redisURL := redistest.Start(t).URL()
	for i, tt := range []struct {
		args  []string
		codes string
	}{
		{nil, "[200 200 200 200 200 200 200 200 200 200 200 200 200 200]"},
		{[]string{"--redis-url", redisURL}, "[200 200 200 200 200 200 200 200 200 200 200 200 200 200]"},
		{[]string{"--limit-by", "request"}, "[200 200 200 200 200 429 429 429 429 429 429 429 429 429]"},
		{[]string{"--limit-by", "request", "--redis-url", redisURL}, "[200 200 200 200 200 429 429 429 429 429 429 429 429 429]"},
		{[]string{"--session-requests", "4"}, "[200 200 200 200 200 200 200 200 200 200 200 200 200 200]"},
		{[]string{"--session-requests", "2"}, "[200 200 200 200 200 200 200 200 200 200 429 429 429 429]"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			lim, _ := startLimiter(t, &syncbuf.Buffer{}, append([]string{"--window", "1m"}, tt.args...)...)
			h := lim.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
			var codes []int
			name := "rio de janeiro"
			for n := 1; n <= len(name); n++ {
				r := httptest.NewRequest(http.MethodGet, "/search?q="+url.QueryEscape(name[:n]), nil)
				r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1) // a client of its own in the shared Redis
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				codes = append(codes, w.Code)
			}
			if got := fmt.Sprint(codes); got != tt.codes {
				t.Errorf("typing %q: %s, want %s", name, got, tt.codes)
			}
		})
	}
}
