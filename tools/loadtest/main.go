// Command loadtest runs `cityfinder serve` with the full-size large dataset
// at saturation and checks that it holds: `make loadtest` runs it.
//
// It imports the MaxMind look-alike that `make bench` generates (once, into
// $CITYFINDER_BENCH_CACHE or ~/.cache/cityfinder-bench), starts serve on
// 127.0.0.1 with --trusted-proxies 127.0.0.0/8, and sends searches of the
// large dataset as fast as -conns connections allow for -duration, each from
// one of -clients addresses named in X-Forwarded-For. Every -report it
// prints the throughput, latency percentiles, status counts and the RSS of
// serve. It exits 1 if any answer is a 5xx or a transport error, if any
// client got more than --max searches accepted within one --window, if a
// client got none at all (the proxy header was not honoured), or if the RSS
// at the end is more than -rss-growth above its value after -settle.
//
// Everything stays on 127.0.0.1 and is bounded: the run by -duration, each
// request by a timeout, the whole program by -deadline.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

type options struct {
	bin, cache       string
	duration, report time.Duration
	settle, deadline time.Duration
	conns, clients   int
	max              int
	window           time.Duration
	rssGrowth        float64
	maxRequests      int64
	requestTimeout   time.Duration
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("loadtest: ")
	var o options
	flag.StringVar(&o.bin, "bin", "bin/cityfinder", "the cityfinder binary to run")
	flag.StringVar(&o.cache, "cache", benchenv.CacheDir(), "directory of the generated dataset (shared with make bench)")
	flag.DurationVar(&o.duration, "duration", 60*time.Second, "how long the load runs")
	flag.DurationVar(&o.report, "report", 5*time.Second, "how often to print figures")
	flag.DurationVar(&o.settle, "settle", 20*time.Second, "time after which the RSS must stop growing")
	flag.DurationVar(&o.deadline, "deadline", 10*time.Minute, "bound on the whole program, dataset generation and import included")
	flag.IntVar(&o.conns, "conns", 64, "concurrent connections (each one request at a time)")
	flag.IntVar(&o.clients, "clients", 10_000, "distinct client addresses, sent in X-Forwarded-For")
	flag.IntVar(&o.max, "max", 5, "serve's --max: searches per client per window")
	flag.DurationVar(&o.window, "window", 3*time.Second, "serve's --window")
	flag.Float64Var(&o.rssGrowth, "rss-growth", 0.10, "largest allowed growth of RSS from -settle to the end, as a fraction")
	flag.Int64Var(&o.maxRequests, "max-requests", 20_000_000, "stop after this many requests even if -duration has not passed")
	flag.DurationVar(&o.requestTimeout, "request-timeout", 5*time.Second, "timeout of one request")
	flag.Parse()
	if o.conns < 1 || o.clients < 1 || o.clients > 1<<24 || o.max < 1 || o.window <= 0 || o.duration <= 0 || o.report <= 0 {
		log.Fatal("invalid flags")
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.deadline)
	defer cancel()
	ok, err := run(ctx, o, os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) (bool, error) {
	if _, err := os.Stat(o.bin); err != nil {
		return false, fmt.Errorf("cityfinder binary: %w (run make build first)", err)
	}
	help, err := exec.CommandContext(ctx, o.bin, "serve", "--help").CombinedOutput()
	if err != nil {
		return false, fmt.Errorf("%s serve --help: %w", o.bin, err)
	}
	if !strings.Contains(string(help), "--trusted-proxies") {
		return false, errors.New("serve has no --trusted-proxies flag: without it every client is 127.0.0.1 and the test means nothing")
	}
	file, err := benchenv.Dataset(ctx, o.cache)
	if err != nil {
		return false, err
	}
	prefixes, err := samplePrefixes(file, 20_000)
	if err != nil {
		return false, err
	}
	storeDir, err := os.MkdirTemp(o.cache, "loadtest-store-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(storeDir)
	log.Printf("importing %s", file)
	imp := exec.CommandContext(ctx, o.bin, "import", "--dataset", "large", "--file", file, "--data-dir", storeDir, "--log-level", "warn")
	imp.Stderr = os.Stderr
	summary, err := imp.Output()
	if err != nil {
		return false, fmt.Errorf("import: %w", err)
	}
	log.Printf("  %s", strings.TrimSpace(string(summary)))

	srv, err := benchenv.StartServe(ctx, o.bin, filepath.Join(storeDir, "serve.log"), "--data-dir", storeDir,
		"--trusted-proxies", "127.0.0.0/8", "--max", strconv.Itoa(o.max), "--window", o.window.String(),
		"--ready-datasets", "large", "--log-level", "warn", "--drain-delay", "0")
	if err != nil {
		return false, err
	}
	defer srv.Log.Close()
	serve, addr := srv.Cmd, srv.Addr
	defer benchenv.Stop(serve, 15*time.Second)
	base := "http://" + addr
	if err := benchenv.WaitReady(ctx, base+"/readyz", 60*time.Second); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "serve pid %d on %s: large dataset, --max %d --window %s, --trusted-proxies 127.0.0.0/8\n",
		serve.Process.Pid, addr, o.max, o.window)
	fmt.Fprintf(out, "load: %d connections, %d client addresses in X-Forwarded-For, %d query prefixes, %s\n\n",
		o.conns, o.clients, len(prefixes), o.duration)

	res := load(ctx, o, base, prefixes, serve.Process.Pid, out)
	ok := res.verdict(o, out)
	if !ok {
		srv.PrintLogTail(out, 4096)
	}
	return ok, nil
}

// samplePrefixes reads about n city names spread over the MaxMind file and
// returns query strings of 3 to 6 of their first characters: what people
// type, with the large dataset's distribution of hot and rare prefixes.
func samplePrefixes(file string, n int) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	step := max(fi.Size()/int64(n), 1)
	r := bufio.NewReaderSize(f, 64<<10)
	rng := rand.New(rand.NewPCG(1, 2))
	seen := make(map[string]bool)
	var out []string
	for off := int64(0); off < fi.Size() && len(out) < n; off += step {
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return nil, err
		}
		r.Reset(f)
		if _, err := r.ReadString('\n'); err != nil { // the rest of a cut line
			break
		}
		line, err := r.ReadString('\n')
		if err != nil {
			break
		}
		fields := strings.Split(line, ",")
		if len(fields) < 2 || fields[0] == "Country" {
			continue
		}
		name := strings.TrimSpace(fields[1]) // City: folded ASCII
		if len(name) < 3 || !alnum(name[:3]) {
			continue // fewer than 3 letters typed: a 400, not a search
		}
		p := name[:min(len(name), 3+rng.IntN(4))]
		if !ascii(p) {
			continue // a Latin-1 byte (Ð, Þ): not UTF-8, a 400
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, url.QueryEscape(p))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no city names in %s", file)
	}
	return out, nil
}

func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func alnum(s string) bool {
	for i := range len(s) {
		if c := s[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// accepted is one search a client got through the limiter (any answer but
// 429): when it was sent and when its answer came. The server decided
// somewhere in between.
type accepted struct {
	client     int32
	sent, recv int64 // nanoseconds since the start
}

// worker is one connection's results; only its goroutine writes them
// until the run ends, except lat, swapped by the reporter under mu.
type worker struct {
	mu       sync.Mutex
	lat      []time.Duration // since the last report
	accepted []accepted
}

// counters are shared by the workers.
type counters struct {
	requests, ok, limited, other4xx, server5xx, errs atomic.Int64
	status                                           [600]atomic.Int64
}

type interval struct {
	at                  time.Duration
	requests, ok, limit int64
	p50, p90, p99, pmax time.Duration
	rssKB               int64
}

type result struct {
	elapsed   time.Duration
	c         *counters
	intervals []interval
	workers   []*worker
	clients   int
	sent      []atomic.Int32 // requests per client
	firstErr  atomic.Pointer[string]
}

func load(ctx context.Context, o options, base string, prefixes []string, pid int, out io.Writer) *result {
	transport := &http.Transport{
		MaxIdleConns:        o.conns,
		MaxIdleConnsPerHost: o.conns,
		MaxConnsPerHost:     o.conns,
		DisableCompression:  true,
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: o.requestTimeout}

	clients := make([]string, o.clients)
	for i := range clients {
		// 10.0.0.0/8 and never 127/8: not a trusted proxy, so it is the key.
		clients[i] = fmt.Sprintf("10.%d.%d.%d", i>>16&0xff, i>>8&0xff, i&0xff)
	}
	res := &result{c: new(counters), clients: o.clients, sent: make([]atomic.Int32, o.clients)}
	runCtx, stop := context.WithTimeout(ctx, o.duration)
	defer stop()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range o.conns {
		wk := &worker{}
		res.workers = append(res.workers, wk)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			// Half the searches come from any client alike, half from a
			// Zipf law over them: a few clients hammer the limiter (the
			// first gets about a tenth of all searches) while every one of
			// them still searches some.
			zipf := rand.NewZipf(rng, 1.1, 1, uint64(len(clients)-1))
			for runCtx.Err() == nil {
				if res.c.requests.Add(1) > o.maxRequests {
					stop()
					return
				}
				ci := rng.IntN(len(clients))
				if rng.IntN(2) == 0 {
					ci = int(zipf.Uint64())
				}
				res.sent[ci].Add(1)
				target := base + "/search?dataset=large&q=" + prefixes[rng.IntN(len(prefixes))]
				sent := time.Since(start)
				status, err := doRequest(runCtx, client, target, clients[ci])
				recv := time.Since(start)
				if err != nil {
					if runCtx.Err() != nil {
						res.c.requests.Add(-1) // cut off by the end of the run
						return
					}
					res.c.errs.Add(1)
					msg := err.Error()
					res.firstErr.CompareAndSwap(nil, &msg)
					continue
				}
				res.c.status[min(status, 599)].Add(1)
				if status != http.StatusTooManyRequests {
					wk.accepted = append(wk.accepted, accepted{int32(ci), int64(sent), int64(recv)})
				}
				switch {
				case status == http.StatusOK:
					res.c.ok.Add(1)
				case status == http.StatusTooManyRequests:
					res.c.limited.Add(1)
				case status >= 500:
					res.c.server5xx.Add(1)
				default:
					res.c.other4xx.Add(1)
				}
				wk.mu.Lock()
				wk.lat = append(wk.lat, recv-sent)
				wk.mu.Unlock()
			}
		})
	}

	fmt.Fprintf(out, "%6s %9s %8s %8s %8s %8s %8s %9s %9s %8s %10s\n",
		"t", "req/s", "p50", "p90", "p99", "max", "200", "429", "5xx+err", "other", "RSS MiB")
	tick := time.NewTicker(o.report)
	var prev counters
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for finished := false; !finished; {
		select {
		case <-tick.C:
		case <-done:
			finished = true
		}
		iv := interval{at: time.Since(start)}
		var lat []time.Duration
		for _, wk := range res.workers {
			wk.mu.Lock()
			lat = append(lat, wk.lat...)
			wk.lat = wk.lat[:0]
			wk.mu.Unlock()
		}
		slices.Sort(lat)
		if len(lat) > 0 {
			iv.p50, iv.p90, iv.p99, iv.pmax = pct(lat, .50), pct(lat, .90), pct(lat, .99), lat[len(lat)-1]
		}
		iv.requests = int64(len(lat))
		iv.ok = res.c.ok.Load() - prev.ok.Load()
		iv.limit = res.c.limited.Load() - prev.limited.Load()
		bad := res.c.server5xx.Load() + res.c.errs.Load() - prev.server5xx.Load() - prev.errs.Load()
		other := res.c.other4xx.Load() - prev.other4xx.Load()
		prev.ok.Store(res.c.ok.Load())
		prev.limited.Store(res.c.limited.Load())
		prev.server5xx.Store(res.c.server5xx.Load())
		prev.errs.Store(res.c.errs.Load())
		prev.other4xx.Store(res.c.other4xx.Load())
		iv.rssKB, _ = benchenv.RSS(pid)
		span := iv.at
		if n := len(res.intervals); n > 0 {
			span -= res.intervals[n-1].at
		}
		if span <= 0 {
			continue
		}
		res.intervals = append(res.intervals, iv)
		if finished && span < o.report/4 {
			continue // the last few requests of the run: in the totals, too few for a line
		}
		fmt.Fprintf(out, "%5.0fs %9.0f %8s %8s %8s %8s %8d %9d %9d %8d %10.1f\n",
			iv.at.Seconds(), float64(iv.requests)/span.Seconds(), ms(iv.p50), ms(iv.p90), ms(iv.p99), ms(iv.pmax),
			iv.ok, iv.limit, bad, other, float64(iv.rssKB)/1024)
	}
	tick.Stop()
	res.elapsed = time.Since(start)
	return res
}

func pct(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(int(float64(len(sorted))*p), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

// doRequest sends one search as the client at ip and returns the status.
func doRequest(ctx context.Context, client *http.Client, target, ip string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err
	}
	req.Header["X-Forwarded-For"] = []string{ip}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, err
}

// verdict prints the totals and the checks, and reports whether all passed.
func (r *result) verdict(o options, out io.Writer) bool {
	c := r.c
	total := c.requests.Load()
	fmt.Fprintf(out, "\n%d requests in %.1fs (%.0f/s): ", total, r.elapsed.Seconds(), float64(total)/r.elapsed.Seconds())
	var codes []string
	for s := range c.status {
		if n := c.status[s].Load(); n > 0 {
			codes = append(codes, fmt.Sprintf("%d×%d", n, s))
		}
	}
	fmt.Fprintf(out, "%s, %d transport errors\n", strings.Join(codes, ", "), c.errs.Load())

	ok := true
	fail := func(format string, args ...any) {
		ok = false
		fmt.Fprintf(out, "FAIL "+format+"\n", args...)
	}
	pass := func(format string, args ...any) { fmt.Fprintf(out, "ok   "+format+"\n", args...) }

	if n := c.server5xx.Load(); n > 0 {
		fail("%d answers were 5xx", n)
	} else {
		pass("no 5xx")
	}
	if n := c.errs.Load(); n > 0 {
		fail("%d requests failed without an answer (first: %s)", n, *r.firstErr.Load())
	} else {
		pass("no transport errors")
	}

	// Per client, any max+1 accepted searches must span a whole window of
	// the server's time. The server decided each between its send and its
	// answer, so max+1 of them that went from the first send to the last
	// answer in less than a window prove a breach; nothing else does.
	byClient := make([][]accepted, r.clients)
	for _, wk := range r.workers {
		for _, a := range wk.accepted {
			byClient[a.client] = append(byClient[a.client], a)
		}
	}
	breaches, active, starved, worst := 0, 0, 0, time.Duration(1<<62)
	var example string
	busiest, busiestSent := 0, int32(0)
	for ci, acc := range byClient {
		if n := r.sent[ci].Load(); n > 0 {
			active++
			if len(acc) == 0 {
				starved++
			}
			if n > busiestSent {
				busiest, busiestSent = ci, n
			}
		}
		slices.SortFunc(acc, func(a, b accepted) int { return int(a.sent - b.sent) })
		for i := 0; i+o.max < len(acc); i++ {
			lastRecv := int64(0)
			for _, a := range acc[i : i+o.max+1] {
				lastRecv = max(lastRecv, a.recv)
			}
			span := time.Duration(lastRecv - acc[i].sent)
			worst = min(worst, span)
			if span < o.window {
				breaches++
				if example == "" {
					example = fmt.Sprintf("client %d: %d accepted within %s", ci, o.max+1, span)
				}
			}
		}
	}
	if breaches > 0 {
		fail("%d times a client got more than %d searches accepted within %s (%s)", breaches, o.max, o.window, example)
	} else {
		spanNote := "no client filled its window"
		if worst < time.Duration(1<<62) {
			spanNote = fmt.Sprintf("the tightest %d accepted searches of one client spanned at least %s", o.max+1, worst.Round(time.Millisecond))
		}
		pass("no client got more than %d accepted in any %s window (%s)", o.max, o.window, spanNote)
	}
	// Every client's first search passes; a client with none means the
	// limiter keyed everyone as the proxy.
	if starved > 0 {
		fail("%d of %d clients got no search accepted: X-Forwarded-For was not honoured", starved, active)
	} else {
		pass("all %d clients that searched got searches accepted; the busiest sent %d and got %d through (%.0f%%)",
			active, busiestSent, len(byClient[busiest]), 100*float64(len(byClient[busiest]))/float64(busiestSent))
	}

	// RSS: after the settling time it must stop growing.
	var base, last interval
	for _, iv := range r.intervals {
		if base.at == 0 && iv.at >= o.settle-o.report/2 {
			base = iv
		}
		last = iv
	}
	switch {
	case base.at == 0 || base.rssKB == 0:
		fail("no RSS sample after %s", o.settle)
	case float64(last.rssKB) > float64(base.rssKB)*(1+o.rssGrowth):
		fail("RSS grew from %.1f MiB at %.0fs to %.1f MiB at %.0fs, more than %.0f%%",
			float64(base.rssKB)/1024, base.at.Seconds(), float64(last.rssKB)/1024, last.at.Seconds(), o.rssGrowth*100)
	default:
		pass("RSS %.1f MiB at %.0fs, %.1f MiB at %.0fs: within %.0f%%",
			float64(base.rssKB)/1024, base.at.Seconds(), float64(last.rssKB)/1024, last.at.Seconds(), o.rssGrowth*100)
	}
	if ok {
		fmt.Fprintln(out, "PASS")
	} else {
		fmt.Fprintln(out, "FAIL")
	}
	return ok
}
