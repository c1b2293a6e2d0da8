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
	importRate := float64(r.rows) / r.importTime.Seconds()
	bareRate := float64(r.rows) / r.bareRead.Seconds()
	row(w, "1", "import, rows/s", fmt.Sprintf("%.0f (%s)", importRate, sec(r.importTime)),
		fmt.Sprintf("bare encoding/csv read: %.0f (%s)", bareRate, sec(r.bareRead)),
		fmt.Sprintf("%.1f× the time", r.importTime.Seconds()/r.bareRead.Seconds()), "≤ 3×", r.importTime <= 3*r.bareRead)
	l := r.lookup
	row(w, "2", fmt.Sprintf("top-10 lookup, median of %d prefixes", l.queries), us(l.median), "sort.Search, take 10: "+us(l.baseMedian),
		ratio(l.median, l.baseMedian), "≤ 2×", l.median <= 2*l.baseMedian)
	row(w, "2", "top-10 lookup, p99", us(l.p99), us(l.baseP99), ratio(l.p99, l.baseP99), "≤ 2×", l.p99 <= 2*l.baseP99)
	row(w, "2", "top-10 lookup, slowest heavy prefix ("+strings.Join(heavyPrefixes, " ")+")", us(l.heavyMax), us(l.baseHeavyMax),
		ratio(l.heavyMax, l.baseHeavyMax), "≤ 2×", l.heavyMax <= 2*l.baseHeavyMax)
	row(w, "6", fmt.Sprintf("typo lookup (fuzzy), median / p99 of %d one-edit misspellings", l.typoQueries), us(l.typoMedian)+" / "+us(l.typoP99),
		"exact: "+us(l.median)+" / "+us(l.p99), "", "p99 < 1 ms", l.typoP99 < time.Millisecond)
	row(w, "6", "typo lookup, p99 of queries of 5–8 letters (one edit allowed)", us(l.typoOneP99), "", "", "p99 < 1 ms", l.typoOneP99 < time.Millisecond)
	s, b := r.httpServe, r.httpBare
	row(w, "3", fmt.Sprintf("HTTP /search, requests/s at %d connections", conns), fmt.Sprintf("%.0f (%d failed)", s.rps, s.failures),
		fmt.Sprintf("bare handler: %.0f", b.rps), fmt.Sprintf("%.0f%%", 100*s.rps/b.rps), "≥ 70%", s.rps >= 0.7*b.rps && s.failures == 0)
	row(w, "3", "HTTP /search, p50 / p99 latency", us(s.p50)+" / "+us(s.p99), us(b.p50)+" / "+us(b.p99), "", "p99 < 5 ms", s.p99 < 5*time.Millisecond)
	row(w, "4", "serve RSS after loading and querying large", fmt.Sprintf("%.0f MB", float64(r.rssKB)/1024), "", "", "≤ 300 MB", r.rssKB <= 300*1024)
	row(w, "4", "serve start to first answered /search", fmt.Sprintf("%.0f ms", float64(r.startup.Microseconds())/1000), "", "", "≤ 1 s", r.startup <= time.Second)
	row(w, "5", "allocations: lookup (san, heavy / zuri, scanned)", allocs(r.lookupAllocs.heavy)+" / "+allocs(r.lookupAllocs.light), "", "", "none per match scanned",
		r.lookupAllocs.light.AllocsPerOp() <= r.lookupAllocs.heavy.AllocsPerOp())
	row(w, "5", "allocations: /search handler (san / zuri)", allocs(r.handlerAllocs.heavy)+" / "+allocs(r.handlerAllocs.light), "", "", "", true)
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
