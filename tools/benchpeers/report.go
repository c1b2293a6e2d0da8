package main

import (
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"
)

// report is the table: one row per peer, measured in one run.
type report struct {
	file                  string
	datasetRows, cities   int
	loadBefore, loadAfter string
	started               time.Time
	peers                 []peerRow
}

type peerRow struct {
	peer
	missing string // why the peer was not run: not installed
	failed  error  // why its run gave no figures
	stats   stats
}

// stats are one peer's figures.
type stats struct {
	p50, p99     map[string]time.Duration // set → median over the rounds
	found        map[string]float64       // one, two → % of misspellings whose city is in the top ten
	buildSeconds float64
	rssKiB       int64
	rssWhat      string
	config       string
}

// summarize computes a peer's figures: each set's p50 and p99 in each
// round, and the median of the rounds' (three rounds: the middle one);
// the share of misspelled slugs found among the answers' slugs.
func summarize(res result, w workload) stats {
	s := stats{p50: map[string]time.Duration{}, p99: map[string]time.Duration{}, found: map[string]float64{},
		buildSeconds: res.BuildSeconds, rssKiB: res.RSSKiB, rssWhat: res.RSSWhat, config: res.Config}
	for _, set := range setNames {
		var p50s, p99s []time.Duration
		for _, round := range res.Times[set] {
			p50s, p99s = append(p50s, percentile(round, 50)), append(p99s, percentile(round, 99))
		}
		s.p50[set], s.p99[set] = median(p50s), median(p99s)
	}
	for _, set := range []string{setOne, setTwo} {
		of, hits := w.misspelt[set], res.Hits[set]
		n := 0
		for i := range of {
			if i < len(hits) && slices.Contains(hits[i], of[i]) {
				n++
			}
		}
		if len(of) > 0 {
			s.found[set] = 100 * float64(n) / float64(len(of))
		}
	}
	return s
}

// percentile is the p-th percentile (nearest rank) of times in ns, as
// tools/benchtable computes it.
func percentile(ns []int64, p float64) time.Duration {
	if len(ns) == 0 {
		return 0
	}
	s := slices.Clone(ns)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return time.Duration(s[max(0, min(i, len(s)-1))])
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nbenchpeers, %s UTC, %d cores, %s; %s: %d rows, %d cities; load average %s at the start, %s at the end\n\n",
		r.started.UTC().Format("2006-01-02 15:04"), runtime.NumCPU(), runtime.Version(), r.file, r.datasetRows, r.cities, r.loadBefore, r.loadAfter)
	fmt.Fprintln(w, "| system | prefix top-10 p50 / p99 | one edit p50 / p99 | two edits p50 / p99 | typo found in top 10 (1 / 2 edits) | build s | RSS MiB |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, row := range r.peers {
		fmt.Fprintln(w, row.line())
	}
	fmt.Fprintln(w, "\nConfigurations (RSS: whose memory):")
	for _, row := range r.peers {
		if row.missing == "" && row.failed == nil {
			fmt.Fprintf(w, "- %s (RSS of %s): %s\n", row.name, row.stats.rssWhat, row.stats.config)
		}
	}
}

// line is the row of the table.
func (row peerRow) line() string {
	switch {
	case row.missing != "":
		return fmt.Sprintf("| %s | %s | | | | | |", row.name, row.missing)
	case row.failed != nil:
		return fmt.Sprintf("| %s | failed: %s | | | | | |", row.name, oneLine(row.failed.Error()))
	}
	s := row.stats
	pair := func(set string) string { return duration(s.p50[set]) + " / " + duration(s.p99[set]) }
	return fmt.Sprintf("| %s | %s | %s | %s | %.0f %% / %.0f %% | %.1f | %s |", row.name, pair(setPrefix), pair(setOne), pair(setTwo),
		s.found[setOne], s.found[setTwo], s.buildSeconds, thousands(s.rssKiB/1024))
}

// duration writes d in µs below a millisecond, in ms below a second, to
// two or three significant figures as issue 26's table does.
func duration(d time.Duration) string {
	us := float64(d.Nanoseconds()) / 1000
	switch {
	case us < 10:
		return fmt.Sprintf("%.1f µs", us)
	case us < 1000:
		return fmt.Sprintf("%.0f µs", us)
	case us < 10000:
		return fmt.Sprintf("%.1f ms", us/1000)
	case us < 1e6:
		return fmt.Sprintf("%.0f ms", us/1000)
	}
	return fmt.Sprintf("%.1f s", us/1e6)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func oneLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i] + " …"
		}
	}
	return s
}
