package limiter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
)

// ok is the handler behind the middleware in these tests.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	_, _ = w.Write([]byte("ok"))
})

// mustHandler wraps ok in a Limiter over a memory store read from clock.
func mustHandler(tb testing.TB, clock *storetest.Clock, p limiter.Policy, opts ...limiter.Option) http.Handler {
	tb.Helper()
	store := memory.New(memory.WithClock(clock.Now))
	tb.Cleanup(func() { _ = store.Close() })
	l, err := limiter.New(store, p, opts...)
	if err != nil {
		tb.Fatalf("limiter.New: %v", err)
	}
	return l.Middleware(ok)
}

// serve sends one GET from remoteAddr through h.
func serve(h http.Handler, remoteAddr string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/cities?q=par", nil)
	r.RemoteAddr = remoteAddr
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMiddlewareRejectsWith429(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	h := mustHandler(t, clock, limiter.Policy{Max: 5, Window: 3 * time.Second},
		limiter.WithLimitMessage("You can only do 5 searches in 3 seconds"))
	for i := range 5 {
		if w := serve(h, "192.0.2.1:1234"); w.Code != http.StatusOK || w.Body.String() != "ok" {
			t.Fatalf("request %d: %d %q, want 200 ok", i+1, w.Code, w.Body)
		}
	}
	w := serve(h, "192.0.2.1:1234")
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("6th request: status %d, want 429", w.Code)
	}
	if got, want := w.Body.String(), `{"message":"You can only do 5 searches in 3 seconds"}`; got != want {
		t.Errorf("body %s, want %s", got, want)
	}
	if got, want := w.Header().Get("Content-Type"), "application/json; charset=utf-8"; got != want {
		t.Errorf("Content-Type %q, want %q", got, want)
	}
	if got, want := w.Header().Get("Retry-After"), "3"; got != want {
		t.Errorf("Retry-After %q, want %q", got, want)
	}
}

// The bodies of the 429 and 503 answers say what the caller wrote, escaped
// as JSON, or the status text when it wrote nothing.
func TestMiddlewareSaysTheCallersWords(t *testing.T) {
	tests := []struct {
		name             string
		opts             []limiter.Option
		want429, want503 string
	}{
		{
			name:    "no words given",
			want429: `{"message":"Too Many Requests"}`,
			want503: `{"message":"Service Unavailable"}`,
		},
		{
			name: "the caller's words",
			opts: []limiter.Option{
				limiter.WithLimitMessage("You can only do 2 searches in 1.5 seconds"),
				limiter.WithUnavailableMessage("Search is unavailable, try again later"),
			},
			want429: `{"message":"You can only do 2 searches in 1.5 seconds"}`,
			want503: `{"message":"Search is unavailable, try again later"}`,
		},
		{
			name: "words that need escaping",
			opts: []limiter.Option{
				limiter.WithLimitMessage(`Slow down, "friend"` + "\n"),
				limiter.WithUnavailableMessage("Ça reviendra <bientôt>"),
			},
			want429: `{"message":"Slow down, \"friend\"\n"}`,
			want503: `{"message":"Ça reviendra \u003cbientôt\u003e"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := limiter.Policy{Max: 2, Window: 1500 * time.Millisecond}
			h := mustHandler(t, storetest.NewClock(storetest.Start), p, tt.opts...)
			serve(h, "192.0.2.1:1")
			serve(h, "192.0.2.1:1")
			if w := serve(h, "192.0.2.1:1"); w.Code != http.StatusTooManyRequests || w.Body.String() != tt.want429 {
				t.Errorf("over the limit: %d %s, want 429 %s", w.Code, w.Body, tt.want429)
			}
			l, err := limiter.New(brokenStore{}, p, append(tt.opts, limiter.WithFailClosed(true),
				limiter.WithLogger(slog.New(slog.DiscardHandler)))...)
			if err != nil {
				t.Fatal(err)
			}
			if w := serve(l.Middleware(ok), "192.0.2.1:1"); w.Code != http.StatusServiceUnavailable || w.Body.String() != tt.want503 {
				t.Errorf("store down: %d %s, want 503 %s", w.Code, w.Body, tt.want503)
			}
		})
	}
}

func TestMiddlewareRetryAfter(t *testing.T) {
	p := limiter.Policy{Max: 3, Window: 3 * time.Second}
	tests := []struct {
		at   time.Duration // after the three accepted requests
		want string
	}{
		{0, "3"},
		{1200 * time.Millisecond, "2"}, // 1.8s rounds up
		{2 * time.Second, "1"},
		{2500 * time.Millisecond, "1"},
		{3*time.Second - 1, "1"}, // 1ns still waits a whole second
	}
	for _, tt := range tests {
		t.Run(tt.at.String(), func(t *testing.T) {
			clock := storetest.NewClock(storetest.Start)
			h := mustHandler(t, clock, p)
			for range p.Max {
				serve(h, "192.0.2.1:1234")
			}
			clock.Advance(tt.at)
			w := serve(h, "192.0.2.1:1234")
			if w.Code != http.StatusTooManyRequests {
				t.Fatalf("status %d, want 429", w.Code)
			}
			if got := w.Header().Get("Retry-After"); got != tt.want {
				t.Fatalf("Retry-After %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("waiting that long is enough", func(t *testing.T) {
		clock := storetest.NewClock(storetest.Start)
		h := mustHandler(t, clock, p)
		for range p.Max {
			serve(h, "192.0.2.1:1234")
		}
		clock.Advance(1200 * time.Millisecond)
		w := serve(h, "192.0.2.1:1234")
		clock.Advance(mustSeconds(t, w.Header().Get("Retry-After")))
		if w := serve(h, "192.0.2.1:1234"); w.Code != http.StatusOK {
			t.Fatalf("after Retry-After: status %d, want 200", w.Code)
		}
	})
}

func mustSeconds(tb testing.TB, s string) time.Duration {
	tb.Helper()
	d, err := time.ParseDuration(s + "s")
	if err != nil {
		tb.Fatalf("Retry-After %q: %v", s, err)
	}
	return d
}

func TestMiddlewareKeysByRemoteIP(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	h := mustHandler(t, clock, limiter.Policy{Max: 1, Window: time.Minute})
	for _, req := range []struct {
		remoteAddr string
		want       int
	}{
		{"192.0.2.1:1234", http.StatusOK},
		{"192.0.2.1:1234", http.StatusTooManyRequests},
		{"192.0.2.1:5678", http.StatusTooManyRequests}, // same IP, new connection
		{"192.0.2.2:1234", http.StatusOK},
		{"[2001:db8::1]:1234", http.StatusOK},
		{"[2001:db8::1]:4321", http.StatusTooManyRequests},
		{"[2001:db8::2]:1234", http.StatusTooManyRequests}, // same /64
		{"[2001:db8:0:1::1]:1234", http.StatusOK},          // the next /64
		{"[::ffff:192.0.2.2]:1234", http.StatusTooManyRequests},
		{"[::ffff:192.0.2.3]:1234", http.StatusOK},
		{"192.0.2.3:1234", http.StatusTooManyRequests}, // IPv4-mapped is IPv4
	} {
		if w := serve(h, req.remoteAddr); w.Code != req.want {
			t.Fatalf("request from %s: status %d, want %d", req.remoteAddr, w.Code, req.want)
		}
	}
}

func TestRemoteIP(t *testing.T) {
	tests := []struct {
		remoteAddr string
		want       string
	}{
		{"192.0.2.1:1234", "192.0.2.1"},
		{"[2001:db8::1]:1234", "2001:db8::1"},
		{"[fe80::1%eth0]:80", "fe80::1%eth0"},
		{"192.0.2.1", "192.0.2.1"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.remoteAddr, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tt.remoteAddr
			if got := limiter.RemoteIP(r); got != tt.want {
				t.Fatalf("RemoteIP(%q) = %q, want %q", tt.remoteAddr, got, tt.want)
			}
		})
	}

	t.Run("ignores proxy headers", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Forwarded-For", "198.51.100.7")
		r.Header.Set("X-Real-Ip", "198.51.100.7")
		if got := limiter.RemoteIP(r); got != "192.0.2.1" {
			t.Fatalf("RemoteIP = %q, want the peer 192.0.2.1", got)
		}
	})
}

func TestMiddlewareKeyFunc(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	byToken := func(r *http.Request) string { return r.Header.Get("X-Token") }
	h := mustHandler(t, clock, limiter.Policy{Max: 1, Window: time.Minute}, limiter.WithKeyFunc(byToken))
	for _, req := range []struct {
		remoteAddr, token string
		want              int
	}{
		{"192.0.2.1:1", "a", http.StatusOK},
		{"192.0.2.2:1", "a", http.StatusTooManyRequests},
		{"192.0.2.1:1", "b", http.StatusOK},
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = req.remoteAddr
		r.Header.Set("X-Token", req.token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != req.want {
			t.Fatalf("token %q from %s: status %d, want %d", req.token, req.remoteAddr, w.Code, req.want)
		}
	}
}

// brokenStore fails every decision.
type brokenStore struct{}

var errDown = errors.New("connection refused")

func (brokenStore) Allow(context.Context, string, limiter.Policy) (limiter.Decision, error) {
	return limiter.Decision{}, errDown
}

func TestMiddlewareFailsOpen(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	l, err := limiter.New(brokenStore{}, limiter.Policy{Max: 1, Window: time.Second}, limiter.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	clock := storetest.NewClock(storetest.Start)
	limiter.SetClock(l, clock.Now)
	h := l.Middleware(ok)

	for range 10 {
		if w := serve(h, "192.0.2.1:1"); w.Code != http.StatusOK {
			t.Fatalf("status %d with a broken store, want 200", w.Code)
		}
		clock.Advance(50 * time.Millisecond)
	}
	clock.Set(storetest.Start.Add(time.Second))
	serve(h, "192.0.2.1:1")

	type logLine struct {
		Msg      string `json:"msg"`
		Err      string `json:"err"`
		Unlogged int    `json:"unlogged"`
	}
	var lines []logLine
	for line := range strings.Lines(logs.String()) {
		var l logLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 {
		t.Fatalf("11 failures over 1s logged %d times, want 2:\n%s", len(lines), logs.String())
	}
	if lines[0].Err != errDown.Error() || lines[0].Unlogged != 0 {
		t.Errorf("first log line %+v, want err %q and 0 unlogged", lines[0], errDown)
	}
	if lines[1].Unlogged != 9 {
		t.Errorf("second log line %+v, want the 9 unlogged failures counted", lines[1])
	}
}

func TestNew(t *testing.T) {
	if _, err := limiter.New(memory.New(), limiter.Policy{Max: 0, Window: time.Second}); !errors.Is(err, limiter.ErrInvalidPolicy) {
		t.Errorf("New with max 0: error %v, want ErrInvalidPolicy", err)
	}
	if _, err := limiter.New(nil, limiter.Policy{Max: 1, Window: time.Second}); err == nil {
		t.Errorf("New with a nil store: no error")
	}
}
