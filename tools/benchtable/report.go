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
		res  setTimes
	}{
		{"one edit, real names of 5–6 letters with one random edit", l.typoOne},
		{"two edits, real names of 7+ letters with two random edits", l.typoTwo},
	} {
		row(w, "1", fmt.Sprintf("typo lookup, median / p99 of %d queries: %s", t.res.queries, t.what),
			us(t.res.median)+" / "+us(t.res.p99), exact, ratio(t.res.median, l.median)+" / "+ratio(t.res.p99, l.p99),
			"≤ 100 µs / ≤ 1 ms", t.res.median <= 100*time.Microsecond && t.res.p99 <= time.Millisecond)
	}
	printRecall(w, l)
	x, b := r.httpExact, r.httpBare
	printCacheRows(w, r, conns)
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
	row(w, "4", "top-10 lookup appending to a reused slice, median / p99", us(l.appendMedian)+" / "+us(l.appendP99), us(l.baseMedian)+" / "+us(l.baseP99),
		ratio(l.appendMedian, l.baseMedian)+" / "+ratio(l.appendP99, l.baseP99), "", true)
	row(w, "5", "serve RSS after loading and querying large", rss(r.rssKB), "", "", "≤ 300 MB", r.rssKB <= 300*1024)
	row(w, "5", "snapshot of large on disk (read whole into memory)", mb(r.snapshotBytes), "", "", "", true)
	row(w, "5", "serve start to first answered /search", fmt.Sprintf("%.0f ms", float64(r.startup.Microseconds())/1000), "", "", "≤ 1 s", r.startup <= time.Second)
	row(w, "6", "allocations: lookup (san, heavy / zuri, scanned)", allocs(r.lookupAllocs.heavy)+" / "+allocs(r.lookupAllocs.light), "", "", "none per match scanned",
		r.lookupAllocs.light.AllocsPerOp() <= r.lookupAllocs.heavy.AllocsPerOp())
	row(w, "6", "allocations: /search handler (san / zuri)", allocs(r.handlerAllocs.heavy)+" / "+allocs(r.handlerAllocs.light), "", "", "", true)
	f, cold := l.finds.plain, l.coldPrefixes
	row(w, "4", fmt.Sprintf("Service.Find with defaults on the %d prefixes, median / p99 (each once a round, see timeRounds)", l.queries),
		us(f.median)+" / "+us(f.p99), "top-10 lookup timed the same way: "+us(cold.median)+" / "+us(cold.p99),
		ratio(f.median, cold.median)+" / "+ratio(f.p99, cold.p99), "≤ 2× / ≤ 3×", f.median <= 2*cold.median && f.p99 <= 3*cold.p99)
	t, coldTyped := l.typed, l.coldTyped
	row(w, "4", fmt.Sprintf("Service.Find with defaults on the typed log: %d queries, %.0f%% typed with a typo, %.0f%% of answers with typo matches; median / p99",
		t.queries, 100*float64(t.misspelled)/float64(t.queries), 100*float64(t.filled)/float64(t.queries)),
		us(t.median)+" / "+us(t.p99), "top-10 lookup of its slugs, timed the same way: "+us(coldTyped.median)+" / "+us(coldTyped.p99),
		ratio(t.median, coldTyped.median)+" / "+ratio(t.p99, coldTyped.p99), "", true)
	printFinds(w, l)
	printPlaces(w, r, conns)
	printEnriched(w, r)
	printMongo(w, r)
}

// printRecall prints issue 26's typo recall: the misspelled city among
// the top 10, of slugs drawn uniformly and of cities drawn by population.
// Issue 26's 97% is held to the latter, the places people look for: most
// uniformly drawn slugs are hamlets of no known population, which rank
// below the places of known population one edit away (docs/benchmarks.md).
func printRecall(w io.Writer, l lookupResult) {
	pct := func(v float64) string {
		if v < 0 {
			return "none (no populations)"
		}
		return fmt.Sprintf("%.1f%%", v)
	}
	r := l.recall
	row(w, "1", "typo recall: the misspelled city among Service.Find's top 10 (defaults), one / two edits, 500 each: slugs drawn uniformly (mostly hamlets of no known population) · cities drawn by population",
		pct(r[0])+" / "+pct(r[1])+" · "+pct(r[2])+" / "+pct(r[3]), "", "", "≥ 97% by population", r[2] >= 97 && r[3] >= 97)
}

// printPlaces prints issue 21's rows: a city by its id and the cities
// around a point, in process beside the top-10 lookup of the same run,
// over HTTP beside /search with defaults, and serve's RSS once they were
// asked (their indexes are built by the first of them).
func printPlaces(w io.Writer, r *report, conns int) {
	l := r.lookup
	p, exact := l.places, "top-10 lookup: "+us(l.median)+" / "+us(l.p99)
	row(w, "9", fmt.Sprintf("/cities/{id}: Service.Lookup, median / p99 of %d ids", len(p.ids)), us(p.lookupMedian)+" / "+us(p.lookupP99), exact,
		ratio(p.lookupMedian, l.median)+" / "+ratio(p.lookupP99, l.p99), "p99 ≤ 1 ms", p.lookupP99 <= time.Millisecond)
	row(w, "9", fmt.Sprintf("/reverse: Service.Reverse, limit 10, median / p99 / slowest of %d points (half in cities, half anywhere)", len(p.points)),
		us(p.reverseMedian)+" / "+us(p.reverseP99)+" / "+us(p.reverseMax), exact,
		ratio(p.reverseMedian, l.median)+" / "+ratio(p.reverseP99, l.p99), "p99 ≤ 1 ms", p.reverseP99 <= time.Millisecond)
	d := r.httpDefault
	for _, h := range []struct {
		what string
		res  loadResult
	}{{"/cities/{id}", r.httpCity}, {"/reverse (limit 10)", r.httpReverse}} {
		row(w, "9", fmt.Sprintf("HTTP %s, requests/s at %d connections / p50 / p99", h.what, conns),
			fmt.Sprintf("%.0f (%d failed) / %s / %s", h.res.rps, h.res.failures, us(h.res.p50), us(h.res.p99)),
			fmt.Sprintf("/search with defaults: %.0f / %s / %s", d.rps, us(d.p50), us(d.p99)), fmt.Sprintf("%.0f%%", 100*h.res.rps/d.rps), "", true)
	}
	row(w, "9", "serve RSS once /cities/{id} and /reverse were asked (their indexes built)", rss(r.placesRSSKB), "after /search only: "+rss(r.rssKB),
		fmt.Sprintf("+%s", rss(r.placesRSSKB-r.rssKB)), "", true)
}

// printFinds prints issue 14's rows: Service.Find with a point, a box or
// a qualifier, beside the plain Find.
func printFinds(w io.Writer, l lookupResult) {
	f := l.finds
	times := func(r findResult) string { return us(r.median) + " / " + us(r.p99) + " / " + us(r.heavyMax) }
	for _, k := range []struct {
		what string
		res  findResult
	}{
		{"biased towards Santiago de Chile, Springfield IL, Paris or Tokyo", f.biased},
		{"within the box of Europe or Illinois", f.boxed},
		{fmt.Sprintf(`qualified: the prefix and " fr", " us" or " chile" (%d of %d read as a place)`, f.qualified.qualified, l.queries), f.qualified},
	} {
		row(w, "7", fmt.Sprintf("Service.Find %s, median / p99 of %d prefixes / slowest heavy prefix with any of them", k.what, l.queries), times(k.res),
			"unbiased Find: "+times(f.plain), ratio(k.res.median, f.plain.median)+" / "+ratio(k.res.p99, f.plain.p99)+" / "+ratio(k.res.heavyMax, f.plain.heavyMax),
			"p99 and heavy ≤ 2 ms", k.res.p99 <= 2*time.Millisecond && k.res.heavyMax <= 2*time.Millisecond)
	}
}

// printEnriched prints issue 12's rows: the large dataset enriched with
// GeoNames beside the plain one.
func printEnriched(w io.Writer, r *report) {
	e, l, d := r.enriched, r.lookup, r.httpDefault
	if e.missing != nil {
		row(w, "8", "large enriched with "+enrichedFile, "not measured: "+e.missing.Error(), "", "", "measured", false)
		return
	}
	row(w, "8", "import of large enriched with --geonames "+enrichedFile, sec(e.importTime), "plain import: "+sec(r.importTime),
		ratio(e.importTime, r.importTime), "≤ 1.5×", 2*e.importTime <= 3*r.importTime)
	row(w, "8", "enriched large: top-10 lookup, median / p99", us(e.median)+" / "+us(e.p99), "plain: "+us(l.median)+" / "+us(l.p99),
		ratio(e.median, l.median)+" / "+ratio(e.p99, l.p99), "≤ 1.1×", 10*e.median <= 11*l.median && 10*e.p99 <= 11*l.p99)
	row(w, "8", "enriched large: HTTP /search with defaults, requests/s", fmt.Sprintf("%.0f (%d failed)", e.http.rps, e.http.failures),
		fmt.Sprintf("plain: %.0f", d.rps), fmt.Sprintf("%.0f%%", 100*e.http.rps/d.rps), "≥ 90%", e.http.rps >= 0.9*d.rps && e.http.failures == 0)
	row(w, "8", "enriched large: serve RSS after loading and querying", rss(e.rssKB), "plain: "+rss(r.rssKB),
		fmt.Sprintf("%.2f×", float64(e.rssKB)/float64(r.rssKB)), "≤ 350 MB", e.rssKB <= 350*1024)
	row(w, "8", fmt.Sprintf("enriched large: snapshot on disk, with the alternate names of its %d rows enriched from GeoNames", e.enrichedRows),
		mb(e.snapshotBytes), "plain: "+mb(r.snapshotBytes), fmt.Sprintf("+%s", mb(e.snapshotBytes-r.snapshotBytes)), "", true)
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

func rss(kb int64) string        { return fmt.Sprintf("%.0f MB", float64(kb)/1024) }
func mb(bytes int64) string      { return fmt.Sprintf("%.0f MB", float64(bytes)/1e6) }
func sec(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
func us(d time.Duration) string  { return fmt.Sprintf("%.2f µs", float64(d.Nanoseconds())/1000) }
func ratio(a, b time.Duration) string {
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}
func allocs(r testing.BenchmarkResult) string {
	return fmt.Sprintf("%d allocs, %d B, %s/op", r.AllocsPerOp(), r.AllocedBytesPerOp(), time.Duration(r.NsPerOp()))
}
