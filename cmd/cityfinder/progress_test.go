package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// fakeTerminal is a terminal of cols columns that keeps what is drawn on it.
type fakeTerminal struct {
	syncbuf.Buffer
	cols int
}

func (*fakeTerminal) IsTerminal() bool { return true }
func (t *fakeTerminal) Columns() int   { return t.cols }

// frames are the lines a person saw on a terminal, one after the other:
// each "\r" starts drawing over the line again.
func frames(out string) []string {
	var seen []string
	for _, f := range strings.Split(out, "\r") {
		if f = strings.TrimRight(f, " "); f != "" {
			seen = append(seen, f)
		}
	}
	return seen
}

// fakeClock is a time that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func TestProgressFrames(t *testing.T) {
	term := &fakeTerminal{cols: 100}
	clock := &fakeClock{t: time.Unix(0, 0)}
	p := newProgressLine(term, 1000, "importing small", clock.now)
	p.cols = term.cols
	redraw := func() { // what the ticker does
		p.mu.Lock()
		p.draw()
		p.mu.Unlock()
	}

	redraw()
	clock.advance(2 * time.Second)
	p.Advance(250, 1)
	clock.advance(50 * time.Millisecond)
	p.Advance(10, 5) // too soon to draw again
	clock.advance(2 * time.Second)
	p.Advance(740, 994)
	p.Phase(search.PhaseSorting)
	clock.advance(70 * time.Second)
	redraw()
	p.Phase(search.PhaseIndexing)
	p.Phase(search.PhaseWriting)
	p.Phase(search.PhaseSwapping)
	drawn := term.String()
	p.Finish()

	want := []string{
		"importing small: reading [>                             ]   0%  0 s",
		"importing small: reading [=======>                      ]  25%  1 row  2 s, 6 s left",
		"importing small: reading [==============================] 100%  1,000 rows  4 s",
		"importing small: sorting  1,000 rows  4 s",
		"importing small: sorting  1,000 rows  1 min 14 s",
		"importing small: building the index  1,000 rows  1 min 14 s",
		"importing small: writing the snapshot  1,000 rows  1 min 14 s",
		"importing small: swapping in the new dataset  1,000 rows  1 min 14 s",
	}
	if got := frames(drawn); !equal(got, want) {
		t.Errorf("frames:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Finish blanks the longest line there is and leaves the cursor at the start.
	erase := "\r" + strings.Repeat(" ", displayWidth(want[len(want)-1])) + "\r"
	if got := strings.TrimPrefix(term.String(), drawn); got != erase {
		t.Errorf("Finish wrote %q, want %q", got, erase)
	}
	p.Advance(1, 1)
	p.Phase(search.PhaseSwapping)
	if term.String() != drawn+erase {
		t.Errorf("the bar drew after Finish: %q", strings.TrimPrefix(term.String(), drawn+erase))
	}
}

// A line never wraps: on a narrow terminal the bar shrinks, then the line
// is cut.
func TestProgressFitsTheTerminal(t *testing.T) {
	for _, cols := range []int{120, 80, 60, 40} {
		term := &fakeTerminal{cols: cols}
		clock := &fakeClock{t: time.Unix(0, 0)}
		p := newProgressLine(term, 1<<30, "importing large", clock.now)
		p.cols = cols
		clock.advance(3 * time.Second)
		p.Advance(1<<28, 2_500_000)
		p.Phase(search.PhaseWriting)
		for _, f := range frames(term.String()) {
			if displayWidth(f) >= cols {
				t.Errorf("%d columns: frame %q is %d wide", cols, f, displayWidth(f))
			}
		}
	}
}

// A download of unknown length shows the bytes so far; a label too long for
// the terminal is cut before the numbers are.
func TestDownloadProgress(t *testing.T) {
	for _, tc := range []struct {
		cols int
		want string
	}{
		{0, "downloading https://example.com/datasets/world-cities.csv: 1.2 MB  3 s"},
		{100, "downloading https://example.com/datasets/world-cities.csv: 1.2 MB  3 s"},
		{50, "downloading https://example.com/d...: 1.2 MB  3 s"},
	} {
		term := &fakeTerminal{cols: tc.cols}
		clock := &fakeClock{t: time.Unix(0, 0)}
		p := newProgressLine(term, -1, "downloading https://example.com/datasets/world-cities.csv", clock.now)
		p.cols = tc.cols
		clock.advance(3 * time.Second)
		p.Advance(1_234_567, 0)
		p.Finish()
		if got := frames(term.String()); !equal(got, []string{tc.want}) {
			t.Errorf("%d columns: frames %q, want %q", tc.cols, got, tc.want)
		}
	}
}

func TestReadableDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0 s", 900 * time.Millisecond: "0 s", 12 * time.Second: "12 s", 60 * time.Second: "1 min",
		125 * time.Second: "2 min 5 s", 72 * time.Minute: "1 h 12 min",
	} {
		if got := readableDuration(d); got != want {
			t.Errorf("readableDuration(%s) = %q, want %q", d, got, want)
		}
	}
}

// An import on a terminal shows each step until the end, then erases its
// line before the summary.
func TestImportProgressShowsEverySteps(t *testing.T) {
	term := &fakeTerminal{cols: 100}
	var out bytes.Buffer
	args := []string{"import", "--file", writeFile(t, "cities.csv", twoCities), "--data-dir", t.TempDir(), "--log-level", "warn"}
	if err := execute(t.Context(), args, &out, term); err != nil {
		t.Fatal(err)
	}
	seen := frames(term.String())
	steps := []string{"reading", "sorting", "building the index", "writing the snapshot", "swapping in the new dataset"}
	i := 0
	for _, f := range seen {
		if i < len(steps) && strings.HasPrefix(f, "importing small: "+steps[i]) {
			i++
		}
	}
	if i < len(steps) {
		t.Errorf("frames %q: no step %q after the ones before it", seen, steps[i])
	}
	if !strings.HasSuffix(term.String(), strings.Repeat(" ", displayWidth(seen[len(seen)-1]))+"\r") {
		t.Errorf("the last frame was not erased: %q", term.String())
	}
	if !strings.HasPrefix(out.String(), "imported 2 of 2 rows into small") {
		t.Errorf("summary %q", out.String())
	}
}

// serve says when it picks up a new import, with the dataset's count.
func TestServeLogsReload(t *testing.T) {
	dir := mustImportTwoCities(t)
	addr := freeAddr(t)
	var stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- execute(ctx, []string{"serve", "--addr", addr, "--data-dir", dir, "--drain-delay", "0", "--reload-interval", "50ms"},
			&bytes.Buffer{}, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	poll.Until(t, 5*time.Second, "serve to start", func() bool { return strings.Contains(stderr.String(), `"msg":"serving"`) })
	mustRunCLI(t, "import", "--file", writeFile(t, "one.csv", "name,country,subcountry,geonameid\nParla,Spain,Madrid,3\n"), "--data-dir", dir)
	poll.Until(t, 5*time.Second, "serve to log the reload", func() bool {
		return strings.Contains(stderr.String(), `"msg":"dataset reloaded","component":"embedded","dataset":"small","cities":1}`)
	})
}
