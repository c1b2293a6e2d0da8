package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// progressBar shows an import's progress on a terminal: bytes of the file
// read, and rows per second in its description.
type progressBar struct {
	bar   *progressbar.ProgressBar
	label string
	start time.Time
	rows  int
	shown time.Time
}

func newProgressBar(w io.Writer, path, label string) (*progressBar, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("dataset file: %w", err)
	}
	return newBar(w, fi.Size(), label), nil
}

// newDownloadBar is a bar of unknown length.
func newDownloadBar(w io.Writer, label string) *progressBar {
	return newBar(w, -1, label)
}

func newBar(w io.Writer, size int64, label string) *progressBar {
	return &progressBar{
		label: label,
		start: time.Now(),
		bar: progressbar.NewOptions64(size,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(label),
			progressbar.OptionShowBytes(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		),
	}
}

// Advance implements importer.Progress.
func (p *progressBar) Advance(bytes int64, rows int) {
	p.rows += rows
	if now := time.Now(); rows > 0 && now.Sub(p.shown) > 200*time.Millisecond {
		p.shown = now
		rate := float64(p.rows) / now.Sub(p.start).Seconds()
		p.bar.Describe(fmt.Sprintf("%s: %d rows, %.0f rows/s", p.label, p.rows, rate))
	}
	p.bar.Add64(bytes)
}

// Finish clears the bar.
func (p *progressBar) Finish() { p.bar.Finish() }
