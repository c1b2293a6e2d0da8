package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// SessionOpener returns replicas stores that share one new, empty set of
// windows and sessions (as servers sharing one Redis do), reading the time
// from now. A store that cannot be shared returns the same store each time.
type SessionOpener func(t *testing.T, now func() time.Time, replicas int) []limiter.SessionStore

// RunSessions runs the conformance suite of typing sessions (see
// limiter.Sessions) against the stores that open returns.
func RunSessions(t *testing.T, open SessionOpener) {
	one := func(t *testing.T, now func() time.Time) limiter.SessionStore { return open(t, now, 1)[0] }
	t.Run("Decisions", func(t *testing.T) { testSessionDecisions(t, one) })
	t.Run("MatchesTheModel", func(t *testing.T) { testSessionModel(t, one) })
	t.Run("TypistNeverBlocked", func(t *testing.T) { testTypist(t, open, 1) })
	t.Run("TypistOnThreeReplicas", func(t *testing.T) { testTypist(t, open, 3) })
	t.Run("GrowingForeverIsCapped", func(t *testing.T) { testGrowForever(t, one) })
	t.Run("ConcurrentSearchesNeverExceedMax", func(t *testing.T) { testConcurrentSearches(t, one) })
	t.Run("InvalidRule", func(t *testing.T) { testInvalidRule(t, one) })
}

// DefaultRule is the session rule of the suite's scenarios: serve's
// defaults.
var DefaultRule = limiter.DefaultSessions()

// searchStep is one request of a session scenario.
type searchStep struct {
	at        time.Duration // since Start
	scope     string        // "" means "small"
	text      string
	allowed   bool
	continued bool
	remaining int
}

func testSessionDecisions(t *testing.T, open func(*testing.T, func() time.Time) limiter.SessionStore) {
	p := limiter.Policy{Max: 5, Window: 3 * s}
	small := limiter.Sessions{Gap: 2 * s, MaxRequests: 4, MaxLength: 8}
	typed := func(from time.Duration, texts ...string) []searchStep {
		steps := make([]searchStep, len(texts))
		for i, text := range texts {
			steps[i] = searchStep{at: from + time.Duration(i)*120*ms, text: text, allowed: true, continued: i > 0, remaining: 4}
		}
		return steps
	}
	tests := []struct {
		name  string
		rule  limiter.Sessions
		steps []searchStep
	}{
		{
			name:  "one name typed letter by letter is one search",
			rule:  DefaultRule,
			steps: typed(0, "r", "ri", "rio", "rio-", "rio-d", "rio-de", "rio-de-", "rio-de-j", "rio-de-ja", "rio-de-jan", "rio-de-jane", "rio-de-janei"),
		},
		{
			name:  "deleting letters back to an earlier text continues",
			rule:  DefaultRule,
			steps: typed(0, "par", "parx", "par", "pari", "paris"),
		},
		{
			name: "deleting below the first text is a new search",
			rule: DefaultRule,
			steps: []searchStep{
				{at: 0, text: "par", allowed: true, remaining: 4},
				{at: 100 * ms, text: "pa", allowed: true, remaining: 3},
			},
		},
		{
			name: "a repeat of the same text is a new search",
			rule: DefaultRule,
			steps: []searchStep{
				{at: 0, text: "paris", allowed: true, remaining: 4},
				{at: 100 * ms, text: "paris", allowed: true, remaining: 3},
				{at: 200 * ms, text: "parisx", allowed: true, continued: true, remaining: 3},
			},
		},
		{
			name: "another word, another dataset, a pause: new searches",
			rule: DefaultRule,
			steps: []searchStep{
				{at: 0, text: "paris", allowed: true, remaining: 4},
				{at: 100 * ms, text: "london", allowed: true, remaining: 3},
				{at: 200 * ms, scope: "large", text: "londonx", allowed: true, remaining: 2},
				{at: 2200*ms - 1, scope: "large", text: "londonxy", allowed: true, continued: true, remaining: 2},
				{at: 4200 * ms, scope: "large", text: "londonxyz", allowed: true, remaining: 4},
			},
		},
		{
			name: "six different words at once: five pass",
			rule: DefaultRule,
			steps: []searchStep{
				{text: "paris", allowed: true, remaining: 4},
				{text: "london", allowed: true, remaining: 3},
				{text: "berlin", allowed: true, remaining: 2},
				{text: "madrid", allowed: true, remaining: 1},
				{text: "rome", allowed: true, remaining: 0},
				{text: "vienna", remaining: 0},
			},
		},
		{
			name: "six identical queries at once: five pass",
			rule: DefaultRule,
			steps: []searchStep{
				{text: "paris", allowed: true, remaining: 4},
				{text: "paris", allowed: true, remaining: 3},
				{text: "paris", allowed: true, remaining: 2},
				{text: "paris", allowed: true, remaining: 1},
				{text: "paris", allowed: true, remaining: 0},
				{text: "paris", remaining: 0},
			},
		},
		{
			name: "a session over max requests counts again",
			rule: small,
			steps: []searchStep{
				{text: "aaa", allowed: true, remaining: 4},
				{text: "aaab", allowed: true, continued: true, remaining: 4},
				{text: "aaa", allowed: true, continued: true, remaining: 4},
				{text: "aaac", allowed: true, continued: true, remaining: 4},
				{text: "aaa", allowed: true, remaining: 3},
				{text: "aaad", allowed: true, continued: true, remaining: 3},
			},
		},
		{
			name: "a text longer than max length counts every time",
			rule: small,
			steps: []searchStep{
				{text: "abcdefg", allowed: true, remaining: 4},
				{text: "abcdefgh", allowed: true, continued: true, remaining: 4},
				{text: "abcdefghi", allowed: true, remaining: 3},
				{text: "abcdefghij", allowed: true, remaining: 2},
			},
		},
		{
			name: "a rejected search starts no session and a blocked client keeps its session",
			rule: DefaultRule,
			steps: []searchStep{
				{text: "aaa", allowed: true, remaining: 4},
				{text: "bbb", allowed: true, remaining: 3},
				{text: "ccc", allowed: true, remaining: 2},
				{text: "ddd", allowed: true, remaining: 1},
				{text: "eee", allowed: true, remaining: 0},
				{at: 100 * ms, text: "fff", remaining: 0},
				{at: 200 * ms, text: "fffg", remaining: 0},
				{at: 300 * ms, text: "eeef", allowed: true, continued: true, remaining: 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock(Start)
			store := open(t, clock.Now)
			for i, st := range tt.steps {
				clock.Set(Start.Add(st.at))
				scope := st.scope
				if scope == "" {
					scope = "small"
				}
				d := MustAllowSearch(t, store, "client", limiter.Search{Scope: scope, Text: st.text}, p, tt.rule)
				if d.Allowed != st.allowed || d.Continued != st.continued || d.Remaining != st.remaining {
					t.Fatalf("request %d (%s %q at +%s): allowed %v continued %v remaining %d, want %v %v %d (%+v)",
						i, scope, st.text, st.at, d.Allowed, d.Continued, d.Remaining, st.allowed, st.continued, st.remaining, d)
				}
			}
		})
	}
}

// sessionModel is the rule of limiter.Sessions written as plainly as
// possible: every accepted search's time, and the session's fields.
type sessionModel struct {
	p        limiter.Policy
	rule     limiter.Sessions
	accepted []time.Duration
	open     bool
	scope    string
	first    string
	last     string
	requests int
	at       time.Duration
}

// decide returns what the model says of a request, and records it.
func (m *sessionModel) decide(now time.Duration, q limiter.Search) (allowed, continued bool, remaining int) {
	inWindow := 0
	for _, a := range m.accepted {
		if now-a < m.p.Window {
			inWindow++
		}
	}
	if m.open && now-m.at < m.rule.Gap && q.Scope == m.scope && m.requests < m.rule.MaxRequests &&
		len(q.Text) <= m.rule.MaxLength && q.Text != m.last && strings.HasPrefix(q.Text, m.first) &&
		(strings.HasPrefix(q.Text, m.last) || strings.HasPrefix(m.last, q.Text)) {
		m.last, m.requests, m.at = q.Text, m.requests+1, now
		return true, true, m.p.Max - inWindow
	}
	if inWindow >= m.p.Max {
		return false, false, 0
	}
	m.accepted = append(m.accepted, now)
	m.open = len(q.Text) <= m.rule.MaxLength && len(q.Scope) <= limiter.MaxSessionScope
	m.scope, m.first, m.last, m.requests, m.at = q.Scope, q.Text, q.Text, 1, now
	return true, false, m.p.Max - inWindow - 1
}

// maxInAnyWindow returns the most accepted searches in any span of the
// window.
func (m *sessionModel) maxInAnyWindow() int {
	most := 0
	for i, a := range m.accepted {
		n := 0
		for _, b := range m.accepted[i:] {
			if b-a < m.p.Window {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// The model test drives a store with random requests over a tiny
// alphabet, so that texts extend, shorten and repeat each other often, and
// checks every decision against the model's.
func testSessionModel(t *testing.T, open func(*testing.T, func() time.Time) limiter.SessionStore) {
	const requests = 3000
	m := &sessionModel{p: limiter.Policy{Max: 3, Window: 3 * s}, rule: limiter.Sessions{Gap: 2 * s, MaxRequests: 4, MaxLength: 5}}
	clock := NewClock(Start)
	store := open(t, clock.Now)
	rng := rand.New(rand.NewPCG(24, 1))
	steps := []time.Duration{0, 0, 1, 80 * ms, 250 * ms, 700 * ms, 2*s - 1, 2 * s, 3 * s}
	var now time.Duration
	text, scope := "a", "small"
	for i := range requests {
		now += steps[rng.IntN(len(steps))]
		switch op := rng.IntN(10); {
		case op < 5:
			text += string(rune('a' + rng.IntN(2)))
		case op < 7 && text != "":
			text = text[:len(text)-1]
		case op < 8:
			scope = []string{"small", "large"}[rng.IntN(2)]
		case op < 9:
			text = strings.Repeat("ab", 3)[:rng.IntN(6)]
		}
		clock.Set(Start.Add(now))
		q := limiter.Search{Scope: scope, Text: text}
		d := MustAllowSearch(t, store, "client", q, m.p, m.rule)
		allowed, continued, remaining := m.decide(now, q)
		if d.Allowed != allowed || d.Continued != continued || d.Remaining != remaining {
			t.Fatalf("request %d (%+v at +%s): allowed %v continued %v remaining %d; the model says %v %v %d",
				i, q, now, d.Allowed, d.Continued, d.Remaining, allowed, continued, remaining)
		}
	}
	if most := m.maxInAnyWindow(); most > m.p.Max {
		t.Fatalf("%d searches accepted in one window, max %d", most, m.p.Max)
	}
	if len(m.accepted) < requests/20 {
		t.Fatalf("only %d of %d requests counted: the test walks too little of the rule", len(m.accepted), requests)
	}
}

// TypistNames are 50 real city names, as a person types them.
var TypistNames = []string{
	"rio de janeiro", "paris", "london", "new york", "tokyo", "sao paulo", "mexico city", "cairo", "mumbai", "beijing",
	"istanbul", "buenos aires", "los angeles", "lagos", "moscow", "jakarta", "seoul", "bangkok", "lima", "bogota",
	"santiago", "madrid", "toronto", "sydney", "melbourne", "berlin", "rome", "vienna", "zurich", "amsterdam",
	"saint petersburg", "ho chi minh city", "kuala lumpur", "johannesburg", "nairobi", "casablanca", "san francisco",
	"montreal", "guadalajara", "addis ababa", "karachi", "dhaka", "manila", "singapore", "hong kong", "taipei",
	"reykjavik", "wellington", "cape town", "lisbon",
}

// Typist returns the texts a person types for names, one request a key,
// with the pause before each: 80 to 250 ms between keys, now and then a wrong
// letter deleted at once (never the first: a person who mistypes the first
// letter starts again), and between names a look at the suggestions, 0.5 to
// 1.5 s. Texts are lower case with spaces, as typed.
func Typist(rng *rand.Rand, names []string) (texts []string, pauses []time.Duration) {
	key := func() time.Duration { return time.Duration(80+rng.IntN(171)) * ms }
	for _, name := range names {
		pause := time.Duration(500+rng.IntN(1001)) * ms
		for i := 1; i <= len(name); i++ {
			if i > 1 && rng.IntN(8) == 0 {
				texts, pauses = append(texts, name[:i-1]+"x"), append(pauses, pause)
				texts, pauses = append(texts, name[:i-1]), append(pauses, key())
				pause = key()
			}
			texts, pauses = append(texts, name[:i]), append(pauses, pause)
			pause = key()
		}
	}
	return texts, pauses
}

// The typist types the 50 names with a client that searches on every key,
// each request sent to the next replica in turn, at serve's defaults: it
// never gets a 429.
func testTypist(t *testing.T, open SessionOpener, replicas int) {
	clock := NewClock(Start)
	stores := open(t, clock.Now, replicas)
	p := limiter.Policy{Max: 5, Window: 3 * s}
	texts, pauses := Typist(rand.New(rand.NewPCG(50, 5)), TypistNames)
	counted := 0
	for i, text := range texts {
		clock.Advance(pauses[i])
		d := MustAllowSearch(t, stores[i%len(stores)], "typist", limiter.Search{Scope: "small", Text: text}, p, DefaultRule)
		if !d.Allowed {
			t.Fatalf("request %d of %d (%q) rejected: %+v", i, len(texts), text, d)
		}
		if !d.Continued {
			counted++
		}
	}
	// Each name is one search at most (a name that starts with the first
	// letter of the one before, typed within the gap, continues it); a
	// correction never costs one.
	if counted > len(TypistNames) || counted < len(TypistNames)/2 {
		t.Fatalf("%d requests typing %d names counted %d searches, want about one a name", len(texts), len(TypistNames), counted)
	}
	t.Logf("%d requests typing %d names on %d replicas: %d searches counted", len(texts), len(TypistNames), replicas, counted)
}

// A client that grows one query a letter at a time to 100 letters, faster
// than anyone types, counts a search every DefaultSessionRequests requests
// and then one a request past DefaultSessionLength letters: it is limited
// as a client that sends every request as a new search would be, soon.
func testGrowForever(t *testing.T, open func(*testing.T, func() time.Time) limiter.SessionStore) {
	clock := NewClock(Start)
	store := open(t, clock.Now)
	p := limiter.Policy{Max: 5, Window: 3 * s}
	var counted []int
	firstRejected := 0
	for n := 1; n <= 100; n++ {
		d := MustAllowSearch(t, store, "grower", limiter.Search{Scope: "small", Text: strings.Repeat("a", n)}, p, DefaultRule)
		switch {
		case !d.Allowed:
			if firstRejected == 0 {
				firstRejected = n
			}
		case !d.Continued:
			counted = append(counted, n)
		}
		clock.Advance(20 * ms)
	}
	want := []int{1, 1 + DefaultRule.MaxRequests, DefaultRule.MaxLength + 1, DefaultRule.MaxLength + 2, DefaultRule.MaxLength + 3}
	if fmt.Sprint(counted) != fmt.Sprint(want) || firstRejected != DefaultRule.MaxLength+4 {
		t.Fatalf("growing to 100 letters counted the requests at letters %v and was first rejected at %d; want %v and %d",
			counted, firstRejected, want, DefaultRule.MaxLength+4)
	}
}

// Many concurrent requests of one client, all new searches or all
// continuing one, never get more than Max searches counted.
func testConcurrentSearches(t *testing.T, open func(*testing.T, func() time.Time) limiter.SessionStore) {
	const goroutines, requests = 20, 50
	clock := NewClock(Start)
	store := open(t, clock.Now)
	p := limiter.Policy{Max: 5, Window: 3 * time.Second}
	var counted, failed atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range requests {
				d, err := store.AllowSearch(t.Context(), "hot", limiter.Search{Scope: "small", Text: fmt.Sprintf("%c%d", 'a'+g, i)}, p, DefaultRule)
				switch {
				case err != nil:
					failed.Add(1)
				case d.Allowed && !d.Continued:
					counted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d requests failed", n)
	}
	if got := counted.Load(); got != int64(p.Max) {
		t.Fatalf("%d searches counted at one instant, want %d", got, p.Max)
	}
}

func testInvalidRule(t *testing.T, open func(*testing.T, func() time.Time) limiter.SessionStore) {
	store := open(t, NewClock(Start).Now)
	p := limiter.Policy{Max: 1, Window: time.Second}
	for _, rule := range []limiter.Sessions{
		{Gap: 0, MaxRequests: 1, MaxLength: 1},
		{Gap: time.Second, MaxRequests: 0, MaxLength: 1},
		{Gap: time.Second, MaxRequests: 1, MaxLength: 0},
	} {
		if _, err := store.AllowSearch(t.Context(), "client", limiter.Search{Text: "abc"}, p, rule); !errors.Is(err, limiter.ErrInvalidSessions) {
			t.Errorf("AllowSearch under %+v: error %v, want ErrInvalidSessions", rule, err)
		}
	}
}

// MustAllowSearch calls store.AllowSearch and fails the test on error.
func MustAllowSearch(tb testing.TB, store limiter.SessionStore, key string, q limiter.Search, p limiter.Policy, rule limiter.Sessions) limiter.Decision {
	tb.Helper()
	d, err := store.AllowSearch(tb.Context(), key, q, p, rule)
	if err != nil {
		tb.Fatalf("AllowSearch(%q, %+v): %v", key, q, err)
	}
	return d
}
