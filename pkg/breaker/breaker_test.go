package breaker_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/breaker"
)

// fakeClock is a clock that moves only when told.
type fakeClock struct{ now time.Time }

func (c *fakeClock) Now() time.Time { return c.now }

// step is one move of a scenario: wait moves the clock; otherwise call
// asks the breaker for a call and, when it is let through, either ends it
// at once with outcome or, with hold, keeps it in flight under that name
// until a later step with finish names it.
type step struct {
	wait    time.Duration
	outcome breaker.Outcome
	hold    string
	finish  string
	refused bool          // Allow must answer ErrOpen
	want    breaker.State // the state after the step
}

var (
	ok     = step{outcome: breaker.Success}
	fail   = step{outcome: breaker.Failure}
	ignore = step{outcome: breaker.Ignored}
)

func (s step) refusedIn(state breaker.State) step {
	s.refused, s.want = true, state
	return s
}

func (s step) then(state breaker.State) step { s.want = state; return s }

func wait(d time.Duration, state breaker.State) step { return step{wait: d, want: state} }

func hold(name string, state breaker.State) step { return step{hold: name, want: state} }

func finish(name string, o breaker.Outcome, state breaker.State) step {
	return step{finish: name, outcome: o, want: state}
}

const cooldown = 5 * time.Second

func TestBreaker(t *testing.T) {
	const (
		closed = breaker.Closed
		open   = breaker.Open
		half   = breaker.HalfOpen
	)
	tests := []struct {
		name  string
		steps []step
	}{
		{"stays closed while calls succeed", []step{ok.then(closed), ok.then(closed), ok.then(closed)}},
		{"opens after three failures in a row", []step{fail.then(closed), fail.then(closed), fail.then(open), ok.refusedIn(open)}},
		{"a success between failures starts the count again",
			[]step{fail.then(closed), fail.then(closed), ok.then(closed), fail.then(closed), fail.then(closed), fail.then(open)}},
		{"ignored calls neither count nor reset",
			[]step{fail.then(closed), ignore.then(closed), fail.then(closed), ignore.then(closed), fail.then(open)}},
		{"refuses every call for the whole cool-down",
			[]step{fail, fail, fail.then(open), wait(cooldown-time.Millisecond, open), ok.refusedIn(open)}},
		{"a successful probe after the cool-down closes it",
			[]step{fail, fail, fail.then(open), wait(cooldown, open), ok.then(closed), fail.then(closed)}},
		{"a failed probe opens it for another cool-down",
			[]step{fail, fail, fail.then(open), wait(cooldown, open), fail.then(open),
				wait(cooldown-time.Millisecond, open), ok.refusedIn(open), wait(time.Millisecond, open), ok.then(closed)}},
		{"while a probe is out every other call is refused",
			[]step{fail, fail, fail.then(open), wait(cooldown, open), hold("probe", half), ok.refusedIn(half), ok.refusedIn(half),
				finish("probe", breaker.Success, closed), ok.then(closed)}},
		{"an ignored probe lets the next call probe",
			[]step{fail, fail, fail.then(open), wait(cooldown, open), hold("probe", half), finish("probe", breaker.Ignored, half),
				ok.then(closed)}},
		{"a call that fails after the breaker opened does not extend the cool-down",
			[]step{hold("slow", closed), fail, fail, fail.then(open), wait(cooldown-time.Second, open),
				finish("slow", breaker.Failure, open), wait(time.Second, open), ok.then(closed)}},
		{"a late success does not close a half-open breaker",
			[]step{hold("slow", closed), fail, fail, fail.then(open), wait(cooldown, open), hold("probe", half),
				finish("slow", breaker.Success, half), finish("probe", breaker.Failure, open)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Unix(1_000_000, 0)}
			var changes []string
			b := breaker.New(breaker.Config{Threshold: 3, Cooldown: cooldown, Now: clock.Now,
				OnChange: func(from, to breaker.State) { changes = append(changes, from.String()+">"+to.String()) }})
			held := make(map[string]breaker.Call)
			for i, s := range tt.steps {
				switch {
				case s.wait > 0:
					clock.now = clock.now.Add(s.wait)
				case s.finish != "":
					held[s.finish].Done(s.outcome)
				default:
					call, err := b.Allow()
					switch {
					case s.refused && !errors.Is(err, breaker.ErrOpen):
						t.Fatalf("step %d: Allow = %v, want ErrOpen", i, err)
					case !s.refused && err != nil:
						t.Fatalf("step %d: Allow = %v, want a call", i, err)
					case err != nil:
					case s.hold != "":
						held[s.hold] = call
					default:
						call.Done(s.outcome)
					}
				}
				if got := b.Stats().State; got != s.want {
					t.Fatalf("step %d: state %s, want %s (changes %s)", i, got, s.want, strings.Join(changes, " "))
				}
			}
		})
	}
}

// The counters say how often the breaker opened and how many calls it
// spared the dependency.
func TestBreakerStats(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	b := breaker.New(breaker.Config{Threshold: 2, Cooldown: time.Second, Now: clock.Now})
	for range 2 {
		for range 2 {
			mustAllow(t, b).Done(breaker.Failure)
		}
		for range 3 {
			if _, err := b.Allow(); !errors.Is(err, breaker.ErrOpen) {
				t.Fatalf("Allow while open = %v", err)
			}
		}
		clock.now = clock.now.Add(time.Second)
		mustAllow(t, b).Done(breaker.Success)
	}
	want := breaker.Stats{State: breaker.Closed, Opened: 2, Rejected: 6}
	if got := b.Stats(); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}

// Zero fields take the documented defaults.
func TestBreakerDefaults(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	b := breaker.New(breaker.Config{Now: clock.Now})
	for i := range breaker.DefaultThreshold {
		if st := b.Stats().State; st != breaker.Closed {
			t.Fatalf("after %d failures: %s, want closed", i, st)
		}
		mustAllow(t, b).Done(breaker.Failure)
	}
	clock.now = clock.now.Add(breaker.DefaultCooldown - 1)
	if _, err := b.Allow(); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Allow within the default cool-down = %v, want ErrOpen", err)
	}
	clock.now = clock.now.Add(1)
	mustAllow(t, b).Done(breaker.Success)
}

// Under concurrent calls exactly one probe goes out after the cool-down.
func TestBreakerProbesOnce(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1_000_000, 0)}
	b := breaker.New(breaker.Config{Threshold: 1, Cooldown: time.Second, Now: clock.Now})
	mustAllow(t, b).Done(breaker.Failure)
	clock.now = clock.now.Add(time.Second)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		probes []breaker.Call
	)
	for range 50 {
		wg.Go(func() {
			if c, err := b.Allow(); err == nil {
				mu.Lock()
				probes = append(probes, c)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(probes) != 1 {
		t.Fatalf("%d calls let through after the cool-down, want 1 probe", len(probes))
	}
	probes[0].Done(breaker.Success)
	if st := b.Stats().State; st != breaker.Closed {
		t.Errorf("after the probe: %s", st)
	}
}

func TestStateString(t *testing.T) {
	var got []string
	for _, s := range breaker.States {
		got = append(got, s.String())
	}
	if fmt.Sprint(got) != "[closed open half_open]" {
		t.Errorf("States = %v", got)
	}
}

func mustAllow(tb testing.TB, b *breaker.Breaker) breaker.Call {
	tb.Helper()
	c, err := b.Allow()
	if err != nil {
		tb.Fatalf("Allow: %v", err)
	}
	return c
}
