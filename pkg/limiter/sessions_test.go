package limiter_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/limiter/storetest"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// searchHandler is ok behind a Limiter at serve's defaults (--window 3s
// --max 5) that counts what by: sessions (as /search's LimitedSearch
// folds requests) when bySession, else requests.
func searchHandler(tb testing.TB, clock *storetest.Clock, bySession bool) http.Handler {
	tb.Helper()
	var opts []limiter.Option
	if bySession {
		opts = append(opts, limiter.WithSessions(server.LimitedSearch, limiter.DefaultSessions()))
	}
	return mustHandler(tb, clock, limiter.Policy{Max: 5, Window: 3 * time.Second}, opts...)
}

// searchFor sends GET /search?q=text from one client through h.
func searchFor(h http.Handler, text string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/search?q="+url.QueryEscape(text), nil)
	r.RemoteAddr = "192.0.2.1:1234"
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// The issue's own case: "rio de janeiro" typed at 120 ms a key, a request a
// key. Counting requests blocks it from the 6th letter on; counting searches
// never does, and RateLimit says the one search it cost all along.
func TestTypingOneNameIsOneSearch(t *testing.T) {
	for _, tt := range []struct {
		bySession bool
		codes     string
		rateLimit string // of the last answer
	}{
		{false, "[200 200 200 200 200 429 429 429 429 429 429 429 429 429]", `"search";r=0;t=2`},
		{true, "[200 200 200 200 200 200 200 200 200 200 200 200 200 200]", `"search";r=4;t=2`},
	} {
		t.Run(fmt.Sprintf("by session %v", tt.bySession), func(t *testing.T) {
			clock := storetest.NewClock(storetest.Start)
			h := searchHandler(t, clock, tt.bySession)
			var codes []int
			var last *httptest.ResponseRecorder
			name := "rio de janeiro"
			for i := 1; i <= len(name); i++ {
				last = searchFor(h, name[:i])
				codes = append(codes, last.Code)
				clock.Advance(120 * time.Millisecond)
			}
			if got := fmt.Sprint(codes); got != tt.codes {
				t.Errorf("statuses %s, want %s", got, tt.codes)
			}
			if got := last.Header().Get("RateLimit"); got != tt.rateLimit {
				t.Errorf("last RateLimit %s, want %s", got, tt.rateLimit)
			}
		})
	}
}

// The scripted typist of storetest, through the middleware and the fold of
// /search: 50 names with corrections, never a 429; counting requests, the
// same typist is turned away most of the time.
func TestTypistThroughTheMiddleware(t *testing.T) {
	for _, tt := range []struct {
		bySession bool
		blocked   func(n, of int) bool
	}{
		{true, func(n, _ int) bool { return n == 0 }},
		{false, func(n, of int) bool { return n > of/2 }},
	} {
		clock := storetest.NewClock(storetest.Start)
		h := searchHandler(t, clock, tt.bySession)
		texts, pauses := storetest.Typist(rand.New(rand.NewPCG(7, 24)), storetest.TypistNames)
		blocked := 0
		for i, text := range texts {
			clock.Advance(pauses[i])
			if w := searchFor(h, text); w.Code == http.StatusTooManyRequests {
				blocked++
			} else if w.Code != http.StatusOK {
				t.Fatalf("%q: status %d", text, w.Code)
			}
		}
		t.Logf("by session %v: %d of %d requests got 429", tt.bySession, blocked, len(texts))
		if !tt.blocked(blocked, len(texts)) {
			t.Errorf("by session %v: %d of %d requests got 429", tt.bySession, blocked, len(texts))
		}
	}
}

// Six searches at once, different or the same, still get five 200 and a
// 429 with Retry-After, whatever is counted.
func TestSixSearchesAtOnce(t *testing.T) {
	for name, texts := range map[string][]string{
		"different words": {"paris", "london", "berlin", "madrid", "rome", "vienna"},
		"identical":       {"paris", "paris", "paris", "paris", "paris", "paris"},
	} {
		t.Run(name, func(t *testing.T) {
			clock := storetest.NewClock(storetest.Start)
			h := searchHandler(t, clock, true)
			var codes []int
			var last *httptest.ResponseRecorder
			for _, text := range texts {
				last = searchFor(h, text)
				codes = append(codes, last.Code)
			}
			if got, want := fmt.Sprint(codes), "[200 200 200 200 200 429]"; got != want {
				t.Fatalf("statuses %s, want %s", got, want)
			}
			if got := last.Header().Get("Retry-After"); got != "3" {
				t.Errorf("Retry-After %q, want 3", got)
			}
			if got := last.Header().Get("RateLimit-Policy"); got != `"search";q=5;w=3` {
				t.Errorf("RateLimit-Policy %q", got)
			}
		})
	}
}

// A blocked client's next keystrokes are new searches too, and blocked, and
// its first accepted one after the block starts a session that costs one
// search, however long it goes on.
func TestBlockedUntilASearchFrees(t *testing.T) {
	clock := storetest.NewClock(storetest.Start)
	h := searchHandler(t, clock, true)
	for _, text := range []string{"aaa", "bbb", "ccc", "ddd", "eee"} {
		searchFor(h, text)
	}
	if w := searchFor(h, "fff"); w.Code != http.StatusTooManyRequests {
		t.Fatalf("6th search: %d, want 429", w.Code)
	}
	clock.Advance(3 * time.Second)
	for _, text := range []string{"ffff", "fffff", "ffffff"} {
		if w := searchFor(h, text); w.Code != http.StatusOK || w.Header().Get("RateLimit") != `"search";r=4;t=3` {
			t.Fatalf("%q after the block: %d %s, want 200 and r=4", text, w.Code, w.Header().Get("RateLimit"))
		}
	}
}

// A store that cannot count sessions is refused rather than quietly
// counting requests.
func TestSessionsNeedASessionStore(t *testing.T) {
	_, err := limiter.New(requestsOnly{memory.New()}, limiter.Policy{Max: 1, Window: time.Second},
		limiter.WithSessions(server.LimitedSearch, limiter.DefaultSessions()))
	if err == nil {
		t.Fatal("limiter.New took a store without AllowSearch")
	}
	_, err = limiter.New(memory.New(), limiter.Policy{Max: 1, Window: time.Second},
		limiter.WithSessions(server.LimitedSearch, limiter.Sessions{}))
	if err == nil {
		t.Fatal("limiter.New took an invalid session rule")
	}
}

// requestsOnly hides every method of its store but Allow.
type requestsOnly struct{ limiter.Store }

// BenchmarkTypingSession is the middleware counting searches, a client
// typing "rio de janeiro" over and over: a request a letter, one in 14 a new
// search (the name starts again, and "r" does not extend "rio de janeiro").
func BenchmarkTypingSession(b *testing.B) {
	l, err := limiter.New(memory.New(), limiter.Policy{Max: 1 << 20, Window: time.Hour},
		limiter.WithSessions(server.LimitedSearch, limiter.DefaultSessions()))
	if err != nil {
		b.Fatal(err)
	}
	h := l.Middleware(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	name := "rio de janeiro"
	var requests []*http.Request
	for i := 1; i <= len(name); i++ {
		r := httptest.NewRequest(http.MethodGet, "/search?q="+url.QueryEscape(name[:i]), nil)
		r.RemoteAddr = "192.0.2.1:1234"
		requests = append(requests, r)
	}
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r := requests[i%len(requests)]
		r.Form = nil // parsed again, as each real request is
		h.ServeHTTP(w, r)
	}
}
