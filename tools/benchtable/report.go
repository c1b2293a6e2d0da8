package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

func printReport(w io.Writer, r *report, conns int) {
	cpu := "unknown CPU"
	if b, err := readFirst("/proc/cpuinfo", "model name"); err == nil {
		cpu = b
	}
	fmt.Fprintf(w, "\ncityfinder benchmarks, %s, %s, %d cores, %s, %s\n", time.Now().Format("2006-01-02"), cpu, runtime.NumCPU(), runtime.Version(), r.datasetPath)
	fmt.Fprintf(w, "\n| # | measure | cityfinder | baseline | ratio | target |\n| --- | --- | --- | --- | --- | --- |\n")
	l := r.lookup
	exact := "exact lookup: " + us(l.median) + " / " + us(l.p99)
	for _, t := range []struct {
		what string
		res  typoResult
	}{
		{"one edit, real names of 5–8 letters with one random edit", l.typoOne},
		{"two edits, real names of 9+ letters with two random edits", l.typoTwo},
	} {
		row(w, "1", fmt.Sprintf("typo lookup, median / p99 of %d queries: %s", t.res.queries, t.what),
			us(t.res.median)+" / "+us(t.res.p99), exact, ratio(t.res.median, l.median)+" / "+ratio(t.res.p99, l.p99),
			"≤ 100 µs / ≤ 1 ms", t.res.median <= 100*time.Microsecond && t.res.p99 <= time.Millisecond)
	}
	d, x, b := r.httpDefault, r.httpExact, r.httpBare
	row(w, "2", fmt.Sprintf("HTTP /search with defaults (typos on), requests/s at %d connections", conns), fmt.Sprintf("%.0f (%d failed)", d.rps, d.failures),
		fmt.Sprintf("bare handler: %.0f", b.rps), fmt.Sprintf("%.0f%%", 100*d.rps/b.rps), "≥ 60%", d.rps >= 0.6*b.rps && d.failures == 0)
	row(w, "2", "HTTP /search with defaults, p50 / p99 latency", us(d.p50)+" / "+us(d.p99), us(b.p50)+" / "+us(b.p99),
		ratio(d.p99, b.p99)+" at p99", "p99 ≤ 1.5×", d.p99 <= b.p99*3/2)
	row(w, "2", "HTTP /search?fuzzy=false, requests/s", fmt.Sprintf("%.0f (%d failed)", x.rps, x.failures),
		fmt.Sprintf("bare handler: %.0f", b.rps), fmt.Sprintf("%.0f%%", 100*x.rps/b.rps), "", true)
	row(w, "2", "HTTP /search?fuzzy=false, p50 / p99 latency", us(x.p50)+" / "+us(x.p99), us(b.p50)+" / "+us(b.p99),
		ratio(x.p99, b.p99)+" at p99", "", true)
	importRate := float64(r.rows) / r.importTime.Seconds()
	bareRate := float64(r.rows) / r.bareRead.Seconds()
	row(w, "3", "import, rows/s", fmt.Sprintf("%.0f (%s)", importRate, sec(r.importTime)),
		fmt.Sprintf("bare encoding/csv read: %.0f (%s)", bareRate, sec(r.bareRead)),
		fmt.Sprintf("%.1f× the time", r.importTime.Seconds()/r.bareRead.Seconds()), "≤ 2×", r.importTime <= 2*r.bareRead)
	row(w, "4", fmt.Sprintf("top-10 lookup, median of %d prefixes", l.queries), us(l.median), "sort.Search, take 10: "+us(l.baseMedian),
		ratio(l.median, l.baseMedian), "≤ 2×", l.median <= 2*l.baseMedian)
	row(w, "4", "top-10 lookup, p99", us(l.p99), us(l.baseP99), ratio(l.p99, l.baseP99), "≤ 2×", l.p99 <= 2*l.baseP99)
	row(w, "4", "top-10 lookup, slowest heavy prefix ("+strings.Join(heavyPrefixes, " ")+")", us(l.heavyMax), us(l.baseHeavyMax),
		ratio(l.heavyMax, l.baseHeavyMax), "≤ 2×", l.heavyMax <= 2*l.baseHeavyMax)
	row(w, "4", "top-10 lookup into a reused slice (AppendSearch), median / p99", us(l.appendMedian)+" / "+us(l.appendP99), us(l.baseMedian)+" / "+us(l.baseP99),
		ratio(l.appendMedian, l.baseMedian)+" / "+ratio(l.appendP99, l.baseP99), "", true)
	row(w, "5", "serve RSS after loading and querying large", fmt.Sprintf("%.0f MB", float64(r.rssKB)/1024), "", "", "≤ 300 MB", r.rssKB <= 300*1024)
	row(w, "5", "snapshot of large on disk (read whole into memory)", fmt.Sprintf("%.0f MB", float64(r.snapshotBytes)/1e6), "", "", "", true)
	row(w, "5", "serve start to first answered /search", fmt.Sprintf("%.0f ms", float64(r.startup.Microseconds())/1000), "", "", "≤ 1 s", r.startup <= time.Second)
	row(w, "6", "allocations: lookup (san, heavy / zuri, scanned)", allocs(r.lookupAllocs.heavy)+" / "+allocs(r.lookupAllocs.light), "", "", "none per match scanned",
		r.lookupAllocs.light.AllocsPerOp() <= r.lookupAllocs.heavy.AllocsPerOp())
	row(w, "6", "allocations: /search handler (san / zuri)", allocs(r.handlerAllocs.heavy)+" / "+allocs(r.handlerAllocs.light), "", "", "", true)
}

func row(w io.Writer, n, measure, got, base, ratio, target string, met bool) {
	mark := "met"
	if !met {
		mark = "**missed**"
	}
	if target == "" {
		mark = ""
	}
	fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s %s |\n", n, measure, got, base, ratio, target, mark)
}

func sec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
func us(d time.Duration) string  { return fmt.Sprintf("%.2f µs", float64(d.Nanoseconds())/1000) }
func ratio(a, b time.Duration) string {
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}
func allocs(r testing.BenchmarkResult) string {
	return fmt.Sprintf("%d allocs, %d B, %s/op", r.AllocsPerOp(), r.AllocedBytesPerOp(), time.Duration(r.NsPerOp()))
}
