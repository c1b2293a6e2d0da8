package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

// serveReady is how long serve on a data directory may take to answer its
// first /search: it reads the snapshot from disk.
const serveReady = 30 * time.Second

type loadResult struct {
	requests, failures int
	rps                float64
	p50, p99           time.Duration
}

// measureHTTP starts `cityfinder serve` on the imported store, times its
// start, and starts beside it a serve without the answer cache and a bare
// handler that answers every request with the body serve gave for "san".
// It loads the three in alternating rounds with the uniform prefixes and
// the typed log (see loadRounds), serve alone with fuzzy=false and the
// fresh typed log (beside one round of the bare handler), reads serve's
// RSS, then loads /cities/{id} and /reverse.
func measureHTTP(ctx context.Context, bin string, r *report, set prefixSet, conns int, duration time.Duration) error {
	serve, base, startup, err := startServe(ctx, bin, r.storeDir, serveReady)
	if err != nil {
		return err
	}
	defer benchenv.Stop(serve, 10*time.Second)
	r.startup = startup
	body, header, err := fetchWithHeader(base + "/search?q=san&dataset=large")
	if err != nil {
		return err
	}
	bare, bareBase, err := startBare(ctx, body, nil)
	if err != nil {
		return err
	}
	defer benchenv.Stop(bare, 10*time.Second)
	headed, headedBase, err := startBare(ctx, body, answerHeader(header))
	if err != nil {
		return err
	}
	defer benchenv.Stop(headed, 10*time.Second)
	r.answerHeaders = len(answerHeader(header))
	uncached, uncachedBase, _, err := startServe(ctx, bin, r.storeDir, serveReady, "--answer-cache-mb", "0")
	if err != nil {
		return err
	}
	defer benchenv.Stop(uncached, 10*time.Second)

	systems := []string{base, uncachedBase, bareBase, headedBase}
	uniform := defaultURLs("", set)
	for _, b := range systems {
		load(withBase(b, uniform), conns, time.Second) // warm up
	}
	if r.httpUniform, err = loadRounds(systems, uniform, conns, duration); err != nil {
		return err
	}
	r.httpDefault, r.httpBare = r.httpUniform.cached.loadResult, r.httpUniform.bare.loadResult
	if len(set.typed) > 0 {
		if r.httpTypedLog, err = loadRounds(systems, typedURLs("", set.typed), conns, duration); err != nil {
			return err
		}
		r.httpTyped = r.httpTypedLog.cached.loadResult
	}
	benchenv.Stop(uncached, 10*time.Second)
	var exact []string
	for _, p := range set.all() {
		exact = append(exact, base+"/search?dataset=large&fuzzy=false&q="+p)
	}
	r.httpExact = load(exact, conns, duration)
	if len(set.fresh) > 0 {
		fresh := typedURLs("", set.fresh)
		if r.httpFresh, err = loadCounting(base, withBase(base, fresh), conns, duration); err != nil {
			return err
		}
		r.httpFreshBare = load(withBase(bareBase, fresh), conns, duration)
	}
	if r.rssKB, err = benchenv.RSS(serve.Process.Pid); err != nil {
		return err
	}
	return measurePlacesHTTP(base, serve.Process.Pid, r, conns, duration)
}

// startBare starts the bare handler (see serveBare) answering body with
// header besides its Content-Type, and returns it with its base URL.
func startBare(ctx context.Context, body []byte, header http.Header) (*exec.Cmd, string, error) {
	dir, err := os.MkdirTemp("", "cityfinder-bench-bare")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir) // read at start
	bodyFile, headerFile := filepath.Join(dir, "body.json"), filepath.Join(dir, "header.json")
	encoded, err := json.Marshal(header)
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(bodyFile, body, 0o644); err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(headerFile, encoded, 0o644); err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	addr, err := benchenv.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	bare := exec.CommandContext(ctx, self, "-bare-server", addr, "-bare-body", bodyFile, "-bare-header", headerFile)
	bare.Stderr = os.Stderr
	if err := bare.Start(); err != nil {
		return nil, "", err
	}
	if _, err := waitReady("http://"+addr+"/search", 10*time.Second); err != nil {
		benchenv.Stop(bare, 10*time.Second)
		return nil, "", err
	}
	return bare, "http://" + addr, nil
}

// answerHeader is the header of a /search answer that the bare handler
// with headers writes: all of it but the Date, which net/http writes to
// every answer, and the Content-Type, which every bare handler writes.
func answerHeader(h http.Header) http.Header {
	out := h.Clone()
	delete(out, "Date")
	delete(out, "Content-Type")
	return out
}

// withBase puts base before each of paths.
func withBase(base string, paths []string) []string {
	urls := make([]string, len(paths))
	for i, p := range paths {
		urls[i] = base + p
	}
	return urls
}

// measurePlacesHTTP loads /cities/{id} and /reverse on serve (pid) at base with
// the ids and points that measurePlaces timed in process, then reads
// serve's RSS. Without them (-mongo-only) it measures nothing.
func measurePlacesHTTP(base string, pid int, r *report, conns int, duration time.Duration) error {
	p := r.lookup.places
	if len(p.ids) == 0 || len(p.points) == 0 {
		return nil
	}
	var cities, reverse []string
	for _, id := range p.ids {
		cities = append(cities, base+"/cities/"+id+"?dataset=large")
	}
	for _, pt := range p.points {
		// 'f': /reverse reads plain decimals only, never "1e-05".
		reverse = append(reverse, base+"/reverse?dataset=large&lat="+strconv.FormatFloat(pt.Lat, 'f', -1, 64)+
			"&lon="+strconv.FormatFloat(pt.Lon, 'f', -1, 64))
	}
	load(cities, conns, time.Second) // warm up, and build the indexes
	r.httpCity = load(cities, conns, duration)
	r.httpReverse = load(reverse, conns, duration)
	var err error
	r.placesRSSKB, err = benchenv.RSS(pid)
	return err
}

// startServe starts `cityfinder serve` on dir, with the limiter out of the
// way, and returns it once it answers within ready, with its base URL and
// how long it took to answer its first /search.
func startServe(ctx context.Context, bin, dir string, ready time.Duration, extra ...string) (*exec.Cmd, string, time.Duration, error) {
	addr, err := benchenv.FreeAddr()
	if err != nil {
		return nil, "", 0, err
	}
	start := time.Now()
	serve := exec.CommandContext(ctx, bin, append([]string{"serve", "--data-dir", dir, "--addr", addr,
		"--max", "1000000", "--window", "1s", "--log-level", "warn", "--drain-delay", "0"}, extra...)...)
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		return nil, "", 0, err
	}
	base := "http://" + addr
	answered, err := waitReady(base+"/search?q=ist&dataset=large", ready)
	if err != nil {
		benchenv.Stop(serve, 10*time.Second)
		return nil, "", 0, err
	}
	return serve, base, answered.Sub(start), nil
}

// defaultURLs are the /search URLs of every prefix, with the default
// parameters.
func defaultURLs(base string, set prefixSet) []string {
	var urls []string
	for _, p := range set.all() {
		urls = append(urls, base+"/search?dataset=large&q="+p)
	}
	return urls
}

func fetch(url string) ([]byte, error) {
	body, _, err := fetchWithHeader(url)
	return body, err
}

// fetchWithHeader is fetch that also returns the answer's header.
func fetchWithHeader(url string) ([]byte, http.Header, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(resp.Body)
	return body, resp.Header, err
}

// load sends GETs over conns keep-alive connections for d, each worker
// walking the URLs from its own offset, and reports throughput and latency.
func load(urls []string, conns int, d time.Duration) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var lat []time.Duration
	failures := 0
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			mine := make([]time.Duration, 0, 1<<16)
			fails := 0
			for i := w * len(urls) / conns; time.Now().Before(deadline); i++ {
				t0 := time.Now()
				resp, err := client.Get(urls[i%len(urls)])
				if err != nil {
					fails++
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					fails++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			failures += fails
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	res := loadResult{requests: len(lat), failures: failures, rps: float64(len(lat)) / elapsed.Seconds()}
	if len(lat) > 0 {
		res.p50, res.p99 = percentile(lat, 50), percentile(lat, 99)
	}
	return res
}

// serveBare is the HTTP baseline: a bare net/http handler that answers
// every request with the same JSON array, with the header in the JSON
// file headerFile besides its Content-Type (none when it holds null).
func serveBare(addr, bodyFile, headerFile string) error {
	body, err := os.ReadFile(bodyFile)
	if err != nil {
		return err
	}
	var header http.Header
	if headerFile != "" {
		encoded, err := os.ReadFile(headerFile)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(encoded, &header); err != nil {
			return fmt.Errorf("%s: %w", headerFile, err)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		for k, v := range header {
			h[k] = v
		}
		w.Write(body)
	})
	log.Printf("bare handler on %s (%d more headers)", addr, len(header))
	return http.ListenAndServe(addr, mux)
}
