// Command soak runs `cityfinder serve` for a long while under a mix of
// requests and faults, and checks that nothing wears down: `make soak` runs
// it (10 minutes by default, SOAK_DURATION to change it).
//
// It imports the small dataset from -csv into a temporary data directory,
// starts a redis-server of its own and serve sharing its rate limits there,
// both on 127.0.0.1 only, then for -duration sends the requests of the mix
// table from -conns connections, each from one of many client addresses in
// X-Forwarded-For, while the chaos table takes turns every -chaos: a new
// import of the dataset, a SIGHUP, a Redis killed and started again. Every
// -sample it reads serve's RSS, goroutines and open file descriptors from
// /metrics.
//
// It exits 1 if any answer is a 5xx or a transport error, if any answer is
// not what its row of the mix expects (every search for "lon" must hold
// London: nothing lost across imports and reloads), if the peaks of RSS,
// goroutines or file descriptors in the last third of the run are above
// those of the middle third by more than a small margin, or if serve does
// not exit 0 on SIGTERM at the end.
//
// Everything is bounded: the run by -duration, each request by a timeout,
// the whole program by -duration plus two minutes.
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
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

type options struct {
	bin, csv, redisServer string
	geonames              string // a GeoNames dump imported once as the large dataset, for reverse lookups
	duration, chaos       time.Duration
	sample                time.Duration
	conns                 int
}

func main() {
	log.SetFlags(log.Ltime)
	log.SetPrefix("soak: ")
	var o options
	flag.StringVar(&o.bin, "bin", "bin/cityfinder", "the cityfinder binary to run")
	flag.StringVar(&o.csv, "csv", "datasets/world-cities.csv", "the okfn CSV to import as the small dataset (read only)")
	flag.StringVar(&o.geonames, "geonames", "", "a GeoNames dump (cities1000.txt or .gz) to import once as the large dataset; adds /reverse and its ids to the mix")
	flag.StringVar(&o.redisServer, "redis-server", "redis-server", "the redis-server binary")
	flag.DurationVar(&o.duration, "duration", 10*time.Minute, "how long the soak runs")
	flag.DurationVar(&o.chaos, "chaos", 3*time.Second, "time between two faults of the chaos table")
	flag.DurationVar(&o.sample, "sample", 0, "how often to read serve's figures (default: a thirtieth of -duration, 1s to 10s)")
	flag.IntVar(&o.conns, "conns", 16, "concurrent connections, each one request at a time")
	flag.Parse()
	if o.duration <= 0 || o.chaos <= 0 || o.conns < 1 {
		log.Fatal("invalid flags: -duration, -chaos and -conns must be positive")
	}
	if o.sample <= 0 {
		o.sample = min(max(o.duration/30, time.Second), 10*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.duration+2*time.Minute)
	defer cancel()
	ok, err := run(ctx, o, os.Stdout)
	if err != nil {
		log.Fatal(err)
	}
	if !ok {
		os.Exit(1)
	}
}

// probe is one row of the request mix: a request, how often it is sent
// relative to the others, and what its answer must be.
type probe struct {
	name   string
	weight int
	method string
	path   string
	check  func(status int, body string) error
}

// status expects an answer with that status code.
func status(want int) func(int, string) error {
	return func(got int, body string) error {
		if got != want {
			return fmt.Errorf("status %d, want %d (%.120s)", got, want, body)
		}
		return nil
	}
}

// holds expects a 200 whose body names every city of names.
func holds(names ...string) func(int, string) error {
	return func(got int, body string) error {
		if err := status(http.StatusOK)(got, body); err != nil {
			return err
		}
		for _, n := range names {
			if !strings.Contains(body, `"name":"`+n+`"`) {
				return fmt.Errorf("lost %s: %.200s", n, body)
			}
		}
		return nil
	}
}

// ready expects /readyz to say serve is worth sending to: 200, ok or
// degraded (the rate limit store may be restarting).
func ready(got int, body string) error {
	if got != http.StatusOK {
		return fmt.Errorf("status %d, want 200 (%.200s)", got, body)
	}
	return nil
}

// mix is the request mix. New endpoints (reverse geocoding, lookups by
// id) join it as rows.
var mix = []probe{
	{"search lon", 30, http.MethodGet, "/search?q=lon", holds("London")},
	{"search par, 5 answers", 15, http.MethodGet, "/search?q=par&limit=5", holds("Paris")},
	{"search with a country", 8, http.MethodGet, "/search?q=san&country=es", status(http.StatusOK)},
	{"search near a point", 8, http.MethodGet, "/search?q=spr&lat=39.8&lon=-89.6", status(http.StatusOK)},
	{"search with a typo", 8, http.MethodGet, "/search?q=lodnon", holds("London")},
	{"two letters", 3, http.MethodGet, "/search?q=lo", status(http.StatusBadRequest)},
	{"a limit in hex", 3, http.MethodGet, "/search?q=lon&limit=0x10", status(http.StatusBadRequest)},
	{"a latitude in hex", 3, http.MethodGet, "/search?q=lon&lat=0x1p4&lon=0", status(http.StatusBadRequest)},
	{"an unknown dataset", 3, http.MethodGet, "/search?q=lon&dataset=huge", status(http.StatusBadRequest)},
	{"invalid UTF-8", 3, http.MethodGet, "/search?q=%ff%fe%fd", status(http.StatusBadRequest)},
	{"150 characters", 3, http.MethodGet, "/search?q=" + strings.Repeat("a", 150), status(http.StatusBadRequest)},
	{"a country with a NUL", 3, http.MethodGet, "/search?q=lon&country=g%00b", status(http.StatusBadRequest)},
	{"a search by POST", 2, http.MethodPost, "/search?q=lon", status(http.StatusMethodNotAllowed)},
	{"an unknown path", 2, http.MethodGet, "/nowhere", status(http.StatusNotFound)},
	{"healthz", 2, http.MethodGet, "/healthz", status(http.StatusOK)},
	{"readyz", 2, http.MethodGet, "/readyz", ready},
	{"London by its id", 6, http.MethodGet, "/cities/2643743", holds("London")},
	{"an unknown id", 2, http.MethodGet, "/cities/1", status(http.StatusNotFound)},
	{"an id that is no number", 2, http.MethodGet, "/cities/lon", status(http.StatusBadRequest)},
	{"search in German", 4, http.MethodGet, "/search?q=lon&lang=de", holds("London")},
	{"a malformed lang", 2, http.MethodGet, "/search?q=lon&lang=12345678x", status(http.StatusBadRequest)},
	{"a latitude beyond the pole", 2, http.MethodGet, "/reverse?lat=91&lon=0", status(http.StatusBadRequest)},
}

// fault is one row of the chaos table, which takes turns.
type fault struct {
	name string
	do   func(ctx context.Context, r *rig) error
}

var chaos = []fault{
	{"import the small dataset again", func(ctx context.Context, r *rig) error { return r.importSmall(ctx) }},
	{"SIGHUP", func(ctx context.Context, r *rig) error { return r.serve.Process.Signal(syscall.SIGHUP) }},
	{"kill Redis and start it again", func(ctx context.Context, r *rig) error { return r.restartRedis(ctx) }},
}

// largeMix joins the mix when the large dataset is imported (-geonames):
// the small dataset's okfn rows have no coordinates to look around.
var largeMix = []probe{
	{"the city by the Eiffel Tower", 6, http.MethodGet, "/reverse?dataset=large&lat=48.8584&lon=2.2945&limit=3", holds("Paris")},
	{"the city by Westminster Abbey", 4, http.MethodGet, "/reverse?dataset=large&lat=51.4993&lon=-0.1273&limit=1", holds("London")},
	{"Paris by its id", 4, http.MethodGet, "/cities/2988507?dataset=large", holds("Paris")},
	{"search the large dataset", 6, http.MethodGet, "/search?q=lon&dataset=large", holds("London")},
}

// rig is what the soak runs: serve, its data directory and its Redis.
type rig struct {
	o       options
	dir     string
	base    string
	serve   *exec.Cmd
	redis   *exec.Cmd
	redisAt string
}

func run(ctx context.Context, o options, out io.Writer) (bool, error) {
	for _, f := range []string{o.bin, o.csv} {
		if _, err := os.Stat(f); err != nil {
			return false, fmt.Errorf("%w (make build and make datasets/world-cities.csv make them)", err)
		}
	}
	dir, err := os.MkdirTemp("", "cityfinder-soak-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	r := &rig{o: o, dir: dir}
	if err := r.importSmall(ctx); err != nil {
		return false, err
	}
	if o.geonames != "" {
		cmd := exec.CommandContext(ctx, o.bin, "import", "--dataset", "large", "--file", o.geonames, "--data-dir", dir, "--log-level", "warn")
		if b, err := cmd.CombinedOutput(); err != nil {
			return false, fmt.Errorf("import the large dataset: %w: %s", err, b)
		}
		mix = append(mix, largeMix...)
	}
	if r.redisAt, err = benchenv.FreeAddr(); err != nil {
		return false, err
	}
	if err := r.startRedis(ctx); err != nil {
		return false, err
	}
	defer func() { benchenv.Stop(r.redis, 5*time.Second) }()
	srv, err := benchenv.StartServe(ctx, o.bin, filepath.Join(dir, "serve.log"), "--data-dir", dir,
		"--redis-url", "redis://"+r.redisAt+"/0", "--trusted-proxies", "127.0.0.0/8", "--max", "1000000",
		"--reload-interval", "1s", "--drain-delay", "1s", "--breaker-cooldown", "1s", "--log-level", "warn")
	if err != nil {
		return false, err
	}
	defer srv.Log.Close()
	r.serve = srv.Cmd
	addr := srv.Addr
	exited := make(chan error, 1)
	go func() { exited <- r.serve.Wait() }()
	defer func() { _ = r.serve.Process.Kill() }() // a no-op once it exited
	r.base = "http://" + addr
	if err := benchenv.WaitReady(ctx, r.base+"/readyz", 30*time.Second); err != nil {
		return false, err
	}
	fmt.Fprintf(out, "serve pid %d on %s, Redis on %s; %d connections for %s, a fault every %s, figures every %s\n",
		r.serve.Process.Pid, addr, r.redisAt, o.conns, o.duration, o.chaos, o.sample)

	res := r.soak(ctx, out)
	ok := res.verdict(out)
	if err := r.serve.Process.Signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	select {
	case err := <-exited:
		if err != nil {
			ok = false
			fmt.Fprintf(out, "FAIL serve exited with %v on SIGTERM\n", err)
		} else {
			fmt.Fprintln(out, "ok   serve exited 0 on SIGTERM")
		}
	case <-time.After(20 * time.Second):
		ok = false
		fmt.Fprintln(out, "FAIL serve did not exit within 20s of SIGTERM")
	}
	if !ok {
		srv.PrintLogTail(out, 4096)
		fmt.Fprintln(out, "FAIL")
	} else {
		fmt.Fprintln(out, "PASS")
	}
	return ok, nil
}

// importSmall imports the CSV as the small dataset, as an operator would
// while serve runs.
func (r *rig) importSmall(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, r.o.bin, "import", "--dataset", "small", "--file", r.o.csv, "--data-dir", r.dir, "--log-level", "warn")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("import: %w: %s", err, b)
	}
	return nil
}

func (r *rig) startRedis(ctx context.Context) error {
	host, port, _ := strings.Cut(r.redisAt, ":")
	r.redis = exec.CommandContext(ctx, r.o.redisServer, "--bind", host, "--port", port, "--save", "", "--appendonly", "no",
		"--protected-mode", "yes", "--dir", r.dir)
	if err := r.redis.Start(); err != nil {
		return fmt.Errorf("start redis-server: %w", err)
	}
	return nil
}

// restartRedis kills Redis, as a crash would, waits a moment with it down,
// and starts it again, empty, on the same port.
func (r *rig) restartRedis(ctx context.Context) error {
	_ = r.redis.Process.Kill()
	_ = r.redis.Wait()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(300 * time.Millisecond):
	}
	return r.startRedis(ctx)
}

// sample is serve's figures at one moment, from /metrics.
type sample struct {
	at                   time.Duration
	rss, goroutines, fds float64
}

// result is what a soak saw.
type result struct {
	elapsed  time.Duration
	requests atomic.Int64
	byProbe  []atomic.Int64
	server5x atomic.Int64
	errs     atomic.Int64 // transport errors
	wrong    atomic.Int64 // answers their row did not expect
	first    struct {
		sync.Mutex
		err, wrong string
	}
	faults  []int
	samples []sample
}

func (r *rig) soak(ctx context.Context, out io.Writer) *result {
	res := &result{byProbe: make([]atomic.Int64, len(mix)), faults: make([]int, len(chaos))}
	total := 0
	for _, p := range mix {
		total += p.weight
	}
	ctx, cancel := context.WithTimeout(ctx, r.o.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range r.o.conns {
		wg.Go(func() {
			client := &http.Client{Timeout: 5 * time.Second}
			rng := rand.New(rand.NewPCG(uint64(w), 22))
			for ctx.Err() == nil {
				pick := rng.IntN(total)
				i := 0
				for ; pick >= mix[i].weight; i++ {
					pick -= mix[i].weight
				}
				res.send(ctx, client, r.base, i, fmt.Sprintf("10.%d.%d.%d", w, rng.IntN(256), rng.IntN(256)))
			}
		})
	}
	wg.Go(func() {
		t := time.NewTicker(r.o.chaos)
		defer t.Stop()
		for n := 0; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			f := chaos[n%len(chaos)]
			if err := f.do(ctx, r); err != nil && ctx.Err() == nil {
				log.Printf("fault %q: %v", f.name, err)
			}
			res.faults[n%len(chaos)]++
		}
	})
	t := time.NewTicker(r.o.sample)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			res.elapsed = time.Since(start)
			return res
		case <-t.C:
		}
		s, err := readSample(r.base + "/metrics")
		if err != nil {
			log.Printf("read /metrics: %v", err)
			continue
		}
		s.at = time.Since(start)
		res.samples = append(res.samples, s)
		fmt.Fprintf(out, "%6.0fs %9d requests  RSS %6.1f MiB  %4.0f goroutines  %4.0f fds  5xx %d  errors %d  wrong %d\n",
			s.at.Seconds(), res.requests.Load(), s.rss/(1<<20), s.goroutines, s.fds, res.server5x.Load(), res.errs.Load(), res.wrong.Load())
	}
}

// send sends the request of mix[i] and records what came of it. A request
// cut by the end of the soak counts for nothing.
func (res *result) send(ctx context.Context, client *http.Client, base string, i int, ip string) {
	p := mix[i]
	req, err := http.NewRequestWithContext(ctx, p.method, base+p.path, nil)
	if err != nil {
		panic(err) // a row of mix that does not parse
	}
	req.Header.Set("X-Forwarded-For", ip)
	resp, err := client.Do(req)
	var body []byte
	if err == nil {
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if ctx.Err() != nil {
		return
	}
	res.requests.Add(1)
	res.byProbe[i].Add(1)
	if err != nil {
		res.errs.Add(1)
		res.note(&res.first.err, fmt.Sprintf("%s: %v", p.name, err))
		return
	}
	if resp.StatusCode >= 500 {
		res.server5x.Add(1)
	}
	if err := p.check(resp.StatusCode, string(body)); err != nil {
		res.wrong.Add(1)
		res.note(&res.first.wrong, fmt.Sprintf("%s: %v", p.name, err))
	}
}

func (res *result) note(first *string, what string) {
	res.first.Lock()
	defer res.first.Unlock()
	if *first == "" {
		*first = what
	}
}

// readSample reads serve's RSS, goroutines and open file descriptors from
// its /metrics.
func readSample(url string) (sample, error) {
	resp, err := http.Get(url)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	var s sample
	want := map[string]*float64{
		"process_resident_memory_bytes": &s.rss,
		"go_goroutines":                 &s.goroutines,
		"process_open_fds":              &s.fds,
	}
	found := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if p, known := want[name]; ok && known {
			if *p, err = strconv.ParseFloat(value, 64); err != nil {
				return sample{}, fmt.Errorf("%s: %w", name, err)
			}
			found++
		}
	}
	if found < len(want) {
		return sample{}, errors.New("/metrics lacks some of " + strings.Join(keys(want), ", "))
	}
	return s, sc.Err()
}

func keys(m map[string]*float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Margins of the flatness checks: the peak of the last third of the run may
// exceed the peak of the middle third by this fraction plus this much.
const (
	rssGrowth     = 0.15
	rssSlack      = 16 << 20 // an import's snapshot and GC timing, on a short run
	countSlack    = 16       // goroutines and fds: connections coming and going
	minSamplesFor = 6        // fewer samples than that and flatness is not judged
)

// verdict prints the totals and the checks, and reports whether all passed.
func (res *result) verdict(out io.Writer) bool {
	fmt.Fprintf(out, "\n%d requests in %.0fs (%.0f/s); faults:", res.requests.Load(), res.elapsed.Seconds(),
		float64(res.requests.Load())/res.elapsed.Seconds())
	for i, f := range chaos {
		fmt.Fprintf(out, " %d× %s;", res.faults[i], f.name)
	}
	fmt.Fprintln(out)
	for i, p := range mix {
		fmt.Fprintf(out, "  %8d  %s\n", res.byProbe[i].Load(), p.name)
	}
	ok := true
	check := func(pass bool, format string, args ...any) {
		word := "ok  "
		if !pass {
			ok, word = false, "FAIL"
		}
		fmt.Fprintf(out, word+" "+format+"\n", args...)
	}
	check(res.server5x.Load() == 0, "%d answers 5xx", res.server5x.Load())
	check(res.errs.Load() == 0, "%d transport errors %s", res.errs.Load(), res.first.err)
	check(res.wrong.Load() == 0, "%d answers not as expected (nothing lost: every lon holds London) %s", res.wrong.Load(), res.first.wrong)
	n := len(res.samples)
	if n < minSamplesFor {
		check(false, "only %d samples of serve's figures: run longer to judge them", n)
		return ok
	}
	middle, last := res.samples[n/3:2*n/3], res.samples[2*n/3:]
	peak := func(ss []sample, f func(sample) float64) float64 {
		m := 0.0
		for _, s := range ss {
			m = max(m, f(s))
		}
		return m
	}
	for _, fig := range []struct {
		name         string
		get          func(sample) float64
		growth, more float64
		unit         float64
	}{
		{"RSS (MiB)", func(s sample) float64 { return s.rss }, rssGrowth, rssSlack, 1 << 20},
		{"goroutines", func(s sample) float64 { return s.goroutines }, 0, countSlack, 1},
		{"open fds", func(s sample) float64 { return s.fds }, 0, countSlack, 1},
	} {
		was, now := peak(middle, fig.get), peak(last, fig.get)
		check(now <= was*(1+fig.growth)+fig.more, "%s flat: peak %.1f in the middle third, %.1f in the last (at most %.0f%% + %.0f more)",
			fig.name, was/fig.unit, now/fig.unit, fig.growth*100, fig.more/fig.unit)
	}
	return ok
}
