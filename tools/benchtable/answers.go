package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// freshCities is how many cities the fresh typed log types: about 200,000
// queries, more than a load of a few seconds sends, so that none is sent
// twice (see freshLog).
const freshCities = 20_000

// freshLog is a typed log (benchenv.TypedLog) so long that a load walks
// it once: its answers come from the answer cache only when people type
// the same text within it (a popular city typed again, the first letters
// that many names share), never because the load replays it. It is the
// honest figure of the cache; the replayed typed log its upper bound.
func freshLog(cities []search.City) []benchenv.TypedQuery {
	return benchenv.TypedLog(cities, freshCities, rand.New(rand.NewPCG(2026, 27)))
}

// cachedLoad is a load of /search with what the answer cache made of it.
type cachedLoad struct {
	loadResult
	queries      int // distinct URLs the load walks
	hits, misses int // of the answer cache during the load
}

// hitRate is the share of the load's searches that the cache answered.
func (c cachedLoad) hitRate() float64 {
	if c.hits+c.misses == 0 {
		return 0
	}
	return float64(c.hits) / float64(c.hits+c.misses)
}

// loadCounting loads urls on serve at base, as load does, and reads the
// answer cache's counters from /metrics before and after.
func loadCounting(base string, urls []string, conns int, d time.Duration) (cachedLoad, error) {
	hits0, misses0, err := cacheCounters(base)
	if err != nil {
		return cachedLoad{}, err
	}
	res := cachedLoad{loadResult: load(urls, conns, d), queries: len(urls)}
	hits, misses, err := cacheCounters(base)
	res.hits, res.misses = hits-hits0, misses-misses0
	return res, err
}

var cacheCounter = regexp.MustCompile(`(?m)^cityfinder_answer_cache_(hits|misses)_total (\S+)$`)

// cacheCounters reads the answer cache's hits and misses from serve's
// /metrics; a serve without a cache has 0 of each.
func cacheCounters(base string) (hits, misses int, err error) {
	body, err := fetch(base + "/metrics")
	if err != nil {
		return 0, 0, err
	}
	for _, m := range cacheCounter.FindAllSubmatch(body, -1) {
		n, err := strconv.ParseFloat(string(m[2]), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/metrics: %s: %w", m[0], err)
		}
		if string(m[1]) == "hits" {
			hits = int(n)
		} else {
			misses = int(n)
		}
	}
	return hits, misses, nil
}

// typedURLs are the /search URLs of a typed log, with the defaults.
func typedURLs(base string, log []benchenv.TypedQuery) []string {
	urls := make([]string, len(log))
	for i, q := range log {
		urls[i] = base + "/search?dataset=large&q=" + url.QueryEscape(q.Text)
	}
	return urls
}

// rounds is how many times loadRounds alternates the systems: the machine
// is shared, so a figure and its baseline are taken side by side, again
// and again, rather than one after the other once.
const rounds = 3

// roundsLoad is one query set loaded on serve with its answer cache, on a
// serve without it, on the bare handler and on the bare handler writing
// the headers of a /search answer too, in alternating rounds.
type roundsLoad struct {
	cached, uncached, bare, headed cachedLoad
}

// loadRounds loads paths on each of systems (serve with the cache, serve
// without, the bare handler without and with headers: their base URLs) in turn, rounds times, each
// for d, and keeps for each the median of its rounds' throughputs and
// latencies, so that a round slowed by the machine's other work does not
// make one system look faster than it is.
func loadRounds(systems []string, paths []string, conns int, d time.Duration) (roundsLoad, error) {
	runs := make([][]cachedLoad, len(systems))
	for range rounds {
		for i, base := range systems {
			var res cachedLoad
			var err error
			if i >= 2 { // the bare handlers have no /metrics
				res = cachedLoad{loadResult: load(withBase(base, paths), conns, d), queries: len(paths)}
			} else if res, err = loadCounting(base, withBase(base, paths), conns, d); err != nil {
				return roundsLoad{}, err
			}
			runs[i] = append(runs[i], res)
		}
	}
	return roundsLoad{cached: medianLoad(runs[0]), uncached: medianLoad(runs[1]), bare: medianLoad(runs[2]), headed: medianLoad(runs[3])}, nil
}

// medianLoad is the median throughput and latencies of runs, and their
// requests, failures, hits and misses in all.
func medianLoad(runs []cachedLoad) cachedLoad {
	med := func(v func(c cachedLoad) float64) float64 {
		xs := make([]float64, len(runs))
		for i, c := range runs {
			xs[i] = v(c)
		}
		slices.Sort(xs)
		return xs[len(xs)/2]
	}
	out := cachedLoad{queries: runs[0].queries}
	for _, c := range runs {
		out.requests += c.requests
		out.failures += c.failures
		out.hits += c.hits
		out.misses += c.misses
	}
	out.rps = med(func(c cachedLoad) float64 { return c.rps })
	out.p50 = time.Duration(med(func(c cachedLoad) float64 { return float64(c.p50) }))
	out.p99 = time.Duration(med(func(c cachedLoad) float64 { return float64(c.p99) }))
	return out
}

// printCacheRows prints /search with and without the answer cache, each
// beside the bare handler loaded in the same rounds: the rows of issue 26
// that the cache changes.
func printCacheRows(w io.Writer, r *report, conns int) {
	u, t := r.httpUniform, r.httpTypedLog
	freshBare := cachedLoad{loadResult: r.httpFreshBare}
	for _, c := range []struct {
		what, target string
		res, bare    cachedLoad
		rps          float64
	}{
		{"uniform prefixes, replayed, answer cache on (the default)", "≥ 60%, p99 ≤ 1.5×", u.cached, u.bare, 0.6},
		{"uniform prefixes, answer cache off", "≥ 60%, p99 ≤ 1.5×", u.uncached, u.bare, 0.6},
		{"typed log, replayed, answer cache on (an upper bound: the load sends each text again and again)", "≥ 70%, p99 ≤ 1.5×", t.cached, t.bare, 0.7},
		{"typed log, answer cache off", "≥ 70%, p99 ≤ 1.5×", t.uncached, t.bare, 0.7},
		{fmt.Sprintf("fresh typed log of %d cities, each text sent once, answer cache on", freshCities), "", r.httpFresh, freshBare, 0},
	} {
		b := c.bare
		if c.res.requests == 0 || b.requests == 0 {
			continue
		}
		hit := "answer cache off"
		if c.res.hits+c.res.misses > 0 {
			hit = fmt.Sprintf("%.0f%% answered from the cache", 100*c.res.hitRate())
		}
		measure := fmt.Sprintf("HTTP /search with defaults, %s (%d queries, %s), requests/s / p50 / p99 at %d connections, median of %d rounds",
			c.what, c.res.queries, hit, conns, rounds)
		if c.rps == 0 {
			measure = fmt.Sprintf("HTTP /search with defaults, %s (%d queries, %s), requests/s / p50 / p99 at %d connections, one round",
				c.what, c.res.queries, hit, conns)
		}
		row(w, "2", measure,
			fmt.Sprintf("%.0f (%d failed) / %s / %s", c.res.rps, c.res.failures, us(c.res.p50), us(c.res.p99)),
			fmt.Sprintf("bare handler (the same answer to any query), same rounds: %.0f / %s / %s", b.rps, us(b.p50), us(b.p99)),
			fmt.Sprintf("%.0f%% / %s at p99", 100*c.res.rps/b.rps, ratio(c.res.p99, b.p99)), c.target,
			c.res.rps >= c.rps*b.rps && c.res.p99 <= b.p99*3/2 && c.res.failures == 0)
	}
	printHeadedRows(w, r)
}

// printHeadedRows prints, for the uniform prefixes and the typed log, the
// bare handler that writes the headers of a /search answer too (CORS, rate
// limit, caching, request id: what the contract sends with every answer)
// beside the bare handler of the same rounds, and /search with and
// without the answer cache as shares of it: what of the gap to the bare
// handler is net/http writing those headers, and what is cityfinder's.
func printHeadedRows(w io.Writer, r *report) {
	for _, c := range []struct {
		what string
		l    roundsLoad
	}{{"uniform prefixes", r.httpUniform}, {"typed log", r.httpTypedLog}} {
		h, b := c.l.headed, c.l.bare
		if h.requests == 0 || b.requests == 0 {
			continue
		}
		row(w, "2", fmt.Sprintf("HTTP bare handler writing the %d headers of a /search answer too, %s, same rounds: requests/s / p50 / p99; /search with the answer cache on / off as a share of it", r.answerHeaders, c.what),
			fmt.Sprintf("/search: %.0f%% / %.0f%%", 100*c.l.cached.rps/h.rps, 100*c.l.uncached.rps/h.rps),
			fmt.Sprintf("with the headers: %.0f (%d failed) / %s / %s; without: %.0f", h.rps, h.failures, us(h.p50), us(h.p99), b.rps),
			fmt.Sprintf("%.0f%% of the bare handler", 100*h.rps/b.rps), "", true)
	}
}
