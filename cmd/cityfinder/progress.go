package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// progressBar shows on a terminal how far an import or a download has got,
// on one line that it redraws:
//
//	importing small: reading [=========>          ]  45%  10,234 rows  3 s, 4 s left
//	importing small: writing the snapshot  23,018 rows  5 s
//
// While the file is read: a bar of its bytes (the bytes so far when the
// size is unknown), the rows, the time taken and the time left. Then the
// step the store is in (see search.LoadOptions.Phase). A ticker redraws the
// line every second, so that the time moves on while a step reports
// nothing; Finish erases the line. It implements importer.Progress.
type progressBar struct {
	w     io.Writer
	label string // "importing small", "downloading https://…"
	size  int64  // of the file; -1 when unknown
	cols  int    // the terminal's width; 0 when unknown
	now   func() time.Time
	start time.Time

	mu       sync.Mutex
	bytes    int64
	rows     int
	step     string    // the store's step; "" while the file is read
	drawn    time.Time // when the line was last drawn
	width    int       // of the line drawn last, to blank what a shorter one leaves of it
	finished bool

	stop chan struct{}
	done chan struct{}
}

// Redrawing: at most every redrawEvery as bytes come in, and every
// tickEvery whatever happens.
const (
	redrawEvery = 100 * time.Millisecond
	tickEvery   = time.Second
)

// newBar starts a bar on the terminal w: it draws its first frame at the
// first Advance or tick, and ticks until Finish.
func newBar(w io.Writer, size int64, label string) *progressBar {
	p := newProgressLine(w, size, label, time.Now)
	p.cols = terminalWidth(w)
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.tick(tickEvery)
	return p
}

// newProgressLine is a bar that draws only when told: no first frame, no
// ticker.
func newProgressLine(w io.Writer, size int64, label string, now func() time.Time) *progressBar {
	return &progressBar{w: w, label: label, size: size, now: now, start: now()}
}

func (p *progressBar) tick(every time.Duration) {
	defer close(p.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// Advance implements importer.Progress.
func (p *progressBar) Advance(bytes int64, rows int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bytes += bytes
	p.rows += rows
	if p.now().Sub(p.drawn) >= redrawEvery || p.bytes == p.size {
		p.draw()
	}
}

// Phase shows the step the store has entered; it is a
// search.LoadOptions.Phase.
func (p *progressBar) Phase(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step = name
	p.draw()
}

// Finish stops the ticker and erases the line, so that what is printed next
// starts on a clean line.
func (p *progressBar) Finish() {
	if p.stop != nil {
		close(p.stop)
		<-p.done
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.width > 0 && !p.finished {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	}
	p.finished = true
}

// draw writes the line over the previous one. The caller holds p.mu.
func (p *progressBar) draw() {
	if p.finished {
		return
	}
	now := p.now()
	p.drawn = now
	line := p.line(now.Sub(p.start))
	w := displayWidth(line)
	pad := strings.Repeat(" ", max(p.width-w, 0))
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
	p.width = w
}

// line is the text of the frame after elapsed, as wide as the terminal at
// most (a line that wraps could not be drawn over): the bar shrinks first,
// then the label, so that the numbers stay.
func (p *progressBar) line(elapsed time.Duration) string {
	var doing string
	var details []string
	if p.rows > 0 {
		details = append(details, plural(p.rows, "row"))
	}
	details = append(details, readableDuration(elapsed))
	switch {
	case p.step != "":
		doing = ": " + stepWords(p.step)
	case p.size > 0:
		if left, ok := p.left(elapsed); ok {
			details[len(details)-1] += ", " + readableDuration(left) + " left"
		}
		doing = ": reading"
	default:
		doing = ": " + readableBytes(p.bytes)
	}
	rest := "  " + strings.Join(details, "  ")
	room := p.cols - 1 // columns the line may take; negative when unknown
	if p.step == "" && p.size > 0 {
		barWidth := 30
		if room > 0 {
			// The same width in every frame: room for the label, the
			// brackets, the percentage and the usual details
			// ("  3,173,958 rows  12 s, 4 s left").
			barWidth = min(barWidth, max(10, room-displayWidth(p.label+": reading [] 100%")-32))
		}
		pct := min(100, 100*p.bytes/p.size)
		doing += " " + bar(barWidth, p.bytes, p.size) + fmt.Sprintf(" %3d%%", pct)
	}
	tail := doing + rest
	label := p.label
	if room > 0 && displayWidth(label+tail) > room {
		label = truncateWidth(label, max(room-displayWidth(tail), 12))
	}
	line := label + tail
	if room > 0 {
		line = truncateWidth(line, room)
	}
	return line
}

// left estimates how long reading the rest of the file takes, from the
// pace so far; not before a second has passed.
func (p *progressBar) left(elapsed time.Duration) (time.Duration, bool) {
	if elapsed < time.Second || p.bytes <= 0 || p.bytes >= p.size {
		return 0, false
	}
	left := time.Duration(float64(elapsed) * float64(p.size-p.bytes) / float64(p.bytes))
	// Rounded up: the estimate counts down to "1 s left", never "0 s".
	return (left + time.Second - 1).Truncate(time.Second), true
}

// bar draws n of total as "[=====>     ]", width characters between the
// brackets.
func bar(width int, n, total int64) string {
	done := int(int64(width) * min(n, total) / total)
	s := strings.Repeat("=", done)
	if done < width {
		s += ">" + strings.Repeat(" ", width-done-1)
	}
	return "[" + s + "]"
}

// stepWords says what the store is doing in a step of a load.
func stepWords(step string) string {
	switch step {
	case search.PhaseIndexing:
		return "building the index"
	case search.PhaseWriting:
		return "writing the snapshot"
	case search.PhaseSwapping:
		return "swapping in the new dataset"
	}
	return step // "sorting"
}

// readableDuration rounds d down to what a person reads at a glance:
// "4 s", "2 min 5 s", "1 h 12 min".
func readableDuration(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%d min", s/60)
		}
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	return fmt.Sprintf("%d h %d min", s/3600, s%3600/60)
}

// readableBytes is n in kB, MB or GB, with one decimal.
func readableBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000_000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// plural is "1 row", "10,234 rows".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return thousands(int64(n)) + " " + noun + "s"
}

// terminal is a writer that knows it is a terminal without a file
// descriptor: a fake one in tests.
type terminal interface {
	IsTerminal() bool
	Columns() int
}

func isTerminal(w io.Writer) bool {
	if t, ok := w.(terminal); ok {
		return t.IsTerminal()
	}
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is how many columns the terminal w has; 0 when unknown.
func terminalWidth(w io.Writer) int {
	if t, ok := w.(terminal); ok {
		return t.Columns()
	}
	if f, ok := w.(*os.File); ok {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil {
			return cols
		}
	}
	return 0
}
