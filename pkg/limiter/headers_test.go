package limiter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
)

// The RateLimit fields of six requests under the default 5 per 3 seconds:
// r counts down to 0 and stays there for the rejected sixth; t is the
// seconds until the oldest request still in the window leaves it.
func TestRateLimitHeaderSequence(t *testing.T) {
	tests := []struct {
		name string
		gaps time.Duration // between two requests
		want []string      // RateLimit of each request; 429 from the sixth
		// Retry-After of the sixth
		wantRetryAfter string
	}{
		{
			name: "six at once",
			want: []string{
				`"search";r=4;t=3`, `"search";r=3;t=3`, `"search";r=2;t=3`,
				`"search";r=1;t=3`, `"search";r=0;t=3`, `"search";r=0;t=3`,
			},
			wantRetryAfter: "3",
		},
		{
			name: "one every 500ms",
			gaps: 500 * time.Millisecond,
			// The first request (made at 0) leaves at 3s: at 1.5s that is
			// 1.5s away, rounded up to 2; at 2.5s, 0.5s away.
			want: []string{
				`"search";r=4;t=3`, `"search";r=3;t=3`, `"search";r=2;t=2`,
				`"search";r=1;t=2`, `"search";r=0;t=1`, `"search";r=0;t=1`,
			},
			wantRetryAfter: "1",
		},
		{
			name: "one every 400ms",
			gaps: 400 * time.Millisecond,
			// At 1.6s the first request leaves in 1.4s, rounded up to 2.
			want: []string{
				`"search";r=4;t=3`, `"search";r=3;t=3`, `"search";r=2;t=3`,
				`"search";r=1;t=2`, `"search";r=0;t=2`, `"search";r=0;t=1`,
			},
			wantRetryAfter: "1",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := storetest.NewClock(storetest.Start)
			h := mustHandler(t, clock, limiter.Policy{Max: 5, Window: 3 * time.Second})
			for i, want := range tt.want {
				w := serve(h, "192.0.2.1:1234")
				wantStatus := http.StatusOK
				if i == 5 {
					wantStatus = http.StatusTooManyRequests
				}
				if w.Code != wantStatus {
					t.Fatalf("request %d: status %d, want %d", i+1, w.Code, wantStatus)
				}
				if got := w.Header().Get("RateLimit-Policy"); got != `"search";q=5;w=3` {
					t.Errorf("request %d: RateLimit-Policy %q, want %q", i+1, got, `"search";q=5;w=3`)
				}
				if got := w.Header().Get("RateLimit"); got != want {
					t.Errorf("request %d: RateLimit %q, want %q", i+1, got, want)
				}
				if got := w.Header().Get("Retry-After"); i < 5 && got != "" {
					t.Errorf("request %d was accepted but has Retry-After %q", i+1, got)
				} else if i == 5 && got != tt.wantRetryAfter {
					t.Errorf("request %d: Retry-After %q, want %q", i+1, got, tt.wantRetryAfter)
				}
				clock.Advance(tt.gaps)
			}
		})
	}
}

func TestRateLimitPolicyField(t *testing.T) {
	tests := []struct {
		p    limiter.Policy
		opts []limiter.Option
		want string
	}{
		{limiter.Policy{Max: 5, Window: 3 * time.Second}, nil, `"search";q=5;w=3`},
		{limiter.Policy{Max: 2, Window: 1500 * time.Millisecond}, nil, `"search";q=2;w=2`}, // whole seconds, rounded up
		{limiter.Policy{Max: 100, Window: time.Hour}, nil, `"search";q=100;w=3600`},
		{limiter.Policy{Max: 1, Window: time.Second}, []limiter.Option{limiter.WithPolicyName("api-v1")}, `"api-v1";q=1;w=1`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			l, err := limiter.New(memory.New(), tt.p, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			w := serve(l.Middleware(ok), "192.0.2.1:1")
			if got := w.Header().Get("RateLimit-Policy"); got != tt.want {
				t.Fatalf("RateLimit-Policy %q, want %q", got, tt.want)
			}
		})
	}
}

func TestPolicyNameMustBeAString(t *testing.T) {
	for _, name := range []string{"", `a"b`, `a\b`, "naïve", "tab\there"} {
		if _, err := limiter.New(memory.New(), limiter.Policy{Max: 1, Window: time.Second}, limiter.WithPolicyName(name)); err == nil {
			t.Errorf("WithPolicyName(%q): no error", name)
		}
	}
}

// Retry-After is never early and never a whole second late: whatever the
// fraction of a second a client is turned away at, waiting Retry-After
// seconds is enough and waiting one second less is not.
func TestRetryAfterIsNeverEarly(t *testing.T) {
	p := limiter.Policy{Max: 3, Window: 2 * time.Second}
	// blocked returns a handler whose client was just turned away, offset
	// into the window, and the Retry-After it got.
	blocked := func(offset time.Duration) (http.Handler, *storetest.Clock, time.Duration) {
		clock := storetest.NewClock(storetest.Start)
		h := mustHandler(t, clock, p)
		for range p.Max {
			serve(h, "192.0.2.1:1")
		}
		clock.Advance(offset)
		w := serve(h, "192.0.2.1:1")
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("offset %s: status %d, want 429", offset, w.Code)
		}
		return h, clock, mustSeconds(t, w.Header().Get("Retry-After"))
	}
	for offset := time.Duration(0); offset < p.Window; offset += 137 * time.Millisecond {
		h, clock, wait := blocked(offset)
		clock.Advance(wait)
		if w := serve(h, "192.0.2.1:1"); w.Code != http.StatusOK {
			t.Errorf("offset %s: waited Retry-After %s and got %d", offset, wait, w.Code)
		}
		h, clock, wait = blocked(offset)
		clock.Advance(wait - time.Second)
		if w := serve(h, "192.0.2.1:1"); w.Code == http.StatusOK {
			t.Errorf("offset %s: Retry-After %s, but a second less was enough", offset, wait)
		}
	}
}

func TestMiddlewareFailsClosed(t *testing.T) {
	var logs bytes.Buffer
	l, err := limiter.New(brokenStore{}, limiter.Policy{Max: 1, Window: time.Second}, limiter.WithFailClosed(true),
		limiter.WithUnavailableMessage("Search is unavailable, try again later"), limiter.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Middleware(ok)
	for range 3 {
		w := serve(h, "192.0.2.1:1")
		if w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d with a broken store and fail-closed, want 503", w.Code)
		}
		if got, want := w.Body.String(), `{"message":"Search is unavailable, try again later"}`; got != want {
			t.Errorf("body %s, want %s", got, want)
		}
		if got := w.Header().Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After %q, want 1", got)
		}
		if got := w.Header().Get("RateLimit"); got != "" {
			t.Errorf("RateLimit %q without a decision, want none", got)
		}
		if got := w.Header().Get("RateLimit-Policy"); got != `"search";q=1;w=1` {
			t.Errorf("RateLimit-Policy %q, want the policy even without a decision", got)
		}
	}
	if !strings.Contains(logs.String(), "answering 503") {
		t.Errorf("log does not say requests get 503:\n%s", logs.String())
	}
}

// switchStore fails while down is set and otherwise asks a memory store.
type switchStore struct {
	down  bool
	store limiter.Store
}

func (s *switchStore) Allow(ctx context.Context, key string, p limiter.Policy) (limiter.Decision, error) {
	if s.down {
		return limiter.Decision{}, errDown
	}
	return s.store.Allow(ctx, key, p)
}

func TestMiddlewareReportsStoreState(t *testing.T) {
	var logs bytes.Buffer
	store := &switchStore{store: memory.New()}
	l, err := limiter.New(store, limiter.Policy{Max: 100, Window: time.Second},
		limiter.WithLogger(slog.New(slog.NewJSONHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	h := l.Middleware(ok)

	serve(h, "192.0.2.1:1")
	if l.StoreErrors() != 0 {
		t.Fatalf("healthy store: StoreErrors %d", l.StoreErrors())
	}
	store.down = true
	for range 3 {
		if w := serve(h, "192.0.2.1:1"); w.Header().Get("RateLimit") != "" {
			t.Errorf("RateLimit %q while the store is down, want none", w.Header().Get("RateLimit"))
		}
	}
	if l.StoreErrors() != 3 {
		t.Fatalf("store down: StoreErrors %d, want 3", l.StoreErrors())
	}
	store.down = false
	if w := serve(h, "192.0.2.1:1"); w.Header().Get("RateLimit") == "" {
		t.Errorf("no RateLimit once the store is back")
	}
	if l.StoreErrors() != 3 {
		t.Fatalf("store back: StoreErrors %d, want still 3", l.StoreErrors())
	}

	var msgs []string
	for line := range strings.Lines(logs.String()) {
		var rec struct{ Msg string }
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, rec.Msg)
	}
	want := []string{"rate limit store failed, letting requests through", "rate limit store recovered"}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("log messages %q, want %q", msgs, want)
	}
}
