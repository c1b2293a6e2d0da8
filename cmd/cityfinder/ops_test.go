package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/silent"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
)

// twoCities is an okfn CSV small enough to write inline.
const twoCities = "name,country,subcountry,geonameid\nParis,France,Ile-de-France,2988507\nParma,Italy,Emilia-Romagna,3171457\n"

// mustImportTwoCities imports twoCities as the small dataset of a new data
// directory and returns the directory.
func mustImportTwoCities(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	mustRunCLI(t, "import", "--dataset", "small", "--file", writeFile(t, "cities.csv", twoCities), "--data-dir", dir)
	return dir
}

// fetch sends one request and returns the response with its body read.
func fetch(t *testing.T, method, url string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// The operational endpoints and headers, through the real serve command.
func TestServeOperations(t *testing.T) {
	dir := mustImportTwoCities(t)
	base := startServe(t, "--data-dir", dir)

	t.Run("healthz", func(t *testing.T) {
		resp, body := fetch(t, http.MethodGet, base+"/healthz", nil)
		if resp.StatusCode != http.StatusOK || body != `{"status":"ok"}` {
			t.Errorf("GET /healthz = %d %s", resp.StatusCode, body)
		}
	})
	t.Run("readyz: small required and loaded, large only degrades", func(t *testing.T) {
		resp, body := fetch(t, http.MethodGet, base+"/readyz", nil)
		want := `{"status":"degraded","checks":{"dataset:large":"empty","dataset:small":"ok"},"failed":["dataset:large"]}`
		if resp.StatusCode != http.StatusOK || body != want {
			t.Errorf("GET /readyz = %d %s, want 200 %s", resp.StatusCode, body, want)
		}
	})
	t.Run("search headers", func(t *testing.T) {
		resp, body := fetch(t, http.MethodGet, base+"/search?q=par", map[string]string{"Origin": "https://a.example", "X-Request-Id": "trace-1"})
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, "Paris") {
			t.Fatalf("GET /search = %d %s", resp.StatusCode, body)
		}
		for k, v := range map[string]string{
			"Access-Control-Allow-Origin":   "*",
			"Access-Control-Expose-Headers": "RateLimit, RateLimit-Policy, Retry-After, Search-Complete, X-Request-Id",
			"Cache-Control":                 "public, max-age=60",
			"X-Request-Id":                  "trace-1",
			"RateLimit-Policy":              `"search";q=5;w=3`,
		} {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s = %q, want %q", k, got, v)
			}
		}
	})
	t.Run("preflight", func(t *testing.T) {
		resp, _ := fetch(t, http.MethodOptions, base+"/search", map[string]string{"Origin": "https://a.example", "Access-Control-Request-Method": "GET"})
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Methods") != "GET, HEAD, OPTIONS" {
			t.Errorf("OPTIONS /search = %d %v", resp.StatusCode, resp.Header)
		}
	})
	t.Run("metrics", func(t *testing.T) {
		resp, body := fetch(t, http.MethodGet, base+"/metrics", nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /metrics = %d", resp.StatusCode)
		}
		for _, want := range []string{
			`cityfinder_http_requests_total{code="200",route="/search"} 1`,
			`cityfinder_search_duration_seconds_count{dataset="small"} 1`,
			`cityfinder_dataset_cities{dataset="small"} 2`,
			`cityfinder_dataset_cities{dataset="large"} 0`,
			`cityfinder_dataset_import_timestamp_seconds{dataset="small"} `,
			`cityfinder_limiter_store_errors_total 0`,
			`cityfinder_answer_cache_misses_total 1`, // the answer cache is on by default
			`cityfinder_answer_cache_hits_total 0`,
			`cityfinder_check_up{check="dataset:small"} 1`,
			`cityfinder_check_up{check="dataset:large"} 0`,
			`process_resident_memory_bytes `,
			`go_goroutines `,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

// The settings change what serve sends.
func TestServeOperationSettings(t *testing.T) {
	dir := mustImportTwoCities(t)
	base := startServe(t, "--data-dir", dir, "--cors-origin", "https://a.example,https://b.example", "--cache-max-age", "0",
		"--ready-datasets", "small,large")
	resp, _ := fetch(t, http.MethodGet, base+"/search?q=par", map[string]string{"Origin": "https://b.example"})
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "https://b.example" {
		t.Errorf("Access-Control-Allow-Origin = %q, want the listed origin", got)
	}
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	resp, _ = fetch(t, http.MethodGet, base+"/search?q=par", map[string]string{"Origin": "https://evil.example"})
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("Access-Control-Allow-Origin = %q for an unlisted origin", got)
	}
	resp, body := fetch(t, http.MethodGet, base+"/readyz", nil)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, `"failed":["dataset:large"]`) {
		t.Errorf("GET /readyz with large required = %d %s, want 503 naming it", resp.StatusCode, body)
	}
}

// A Redis that is down shows in /readyz (degraded when failing open, not
// ready when failing closed) and in /metrics.
func TestServeReadinessFollowsTheLimiter(t *testing.T) {
	dir := mustImportTwoCities(t)
	tests := []struct {
		name       string
		failClosed bool
		wantStatus int
		wantBody   string
		wantSearch int
	}{
		{"failing open: degraded", false, http.StatusOK,
			`{"status":"degraded","checks":{"dataset:large":"empty","dataset:small":"ok","limiter":"error"},"failed":["dataset:large","limiter"]}`, http.StatusOK},
		{"failing closed: not ready", true, http.StatusServiceUnavailable,
			`{"status":"unavailable","checks":{"dataset:large":"empty","dataset:small":"ok","limiter":"error"},"failed":["dataset:large","limiter"]}`, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := startServe(t, "--data-dir", dir, "--redis-url", "redis://"+freeAddr(t)+"/0", // nothing listens there: Redis is down
				fmt.Sprintf("--limiter-fail-closed=%v", tt.failClosed))
			resp, body := fetch(t, http.MethodGet, base+"/readyz", nil)
			if resp.StatusCode != tt.wantStatus || body != tt.wantBody {
				t.Errorf("GET /readyz = %d %s, want %d %s", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			if resp, _ := fetch(t, http.MethodGet, base+"/search?q=par", nil); resp.StatusCode != tt.wantSearch {
				t.Errorf("GET /search = %d, want %d", resp.StatusCode, tt.wantSearch)
			}
			_, metrics := fetch(t, http.MethodGet, base+"/metrics", nil)
			for _, want := range []string{`cityfinder_check_up{check="limiter"} 0`, `cityfinder_limiter_store_errors_total 1`} {
				if !strings.Contains(metrics, want+"\n") {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
	}
}

func TestServerSettingsValidation(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a zero timeout would be none", []string{"--write-timeout", "0s"}, "invalid --write-timeout 0s: must be positive"},
		{"a negative one too", []string{"--read-header-timeout", "-1s"}, "invalid --read-header-timeout -1s: must be positive"},
		{"shutdown needs time", []string{"--shutdown-timeout", "0s"}, "invalid --shutdown-timeout 0s"},
		{"a tiny header limit", []string{"--max-header-bytes", "100"}, "invalid --max-header-bytes 100: must be at least 1024"},
		{"a negative max-age", []string{"--cache-max-age", "-1s"}, "invalid --cache-max-age -1s"},
		{"an origin with a path", []string{"--cors-origin", "https://a.example/app"}, `invalid --cors-origin "https://a.example/app"`},
		{"an origin without a scheme", []string{"--cors-origin", "a.example"}, `invalid --cors-origin "a.example"`},
		{"an unknown dataset", []string{"--ready-datasets", "medium"}, "invalid --ready-datasets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runCLI(t, append([]string{"serve", "--data-dir", dir, "--addr", "127.0.0.1:0"}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("serve %v: err = %v, want %q", tt.args, err, tt.wantErr)
			}
		})
	}
}

// The server's settings go flag > env > config file > default like every
// other.
func TestServerSettingsLayers(t *testing.T) {
	file := writeFile(t, "c.yaml", "server:\n  cors_origin: [\"https://file.example\"]\n  write_timeout: 20s\n  idle_timeout: 30s\n")
	t.Setenv("CITYFINDER_WRITE_TIMEOUT", "25s")
	t.Setenv("CITYFINDER_CORS_ORIGIN", "https://env.example,https://env2.example")
	root := newRootCmd()
	cmd, _, _ := root.Find([]string{"serve"})
	if err := cmd.ParseFlags([]string{"--config", file, "--cors-origin", "*", "--cors-origin", "https://flag.example"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Server
	if !equal(s.CORSOrigin, []string{"*", "https://flag.example"}) || s.WriteTimeout != 25*time.Second ||
		s.IdleTimeout != 30*time.Second || s.ReadTimeout != 10*time.Second || s.CacheMaxAge != time.Minute {
		t.Errorf("server settings = %+v", s)
	}

	root = newRootCmd()
	cmd, _, _ = root.Find([]string{"serve"})
	if err := cmd.ParseFlags(nil); err != nil {
		t.Fatal(err)
	}
	if cfg, err = loadConfig(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	if !equal(cfg.Server.CORSOrigin, []string{"https://env.example", "https://env2.example"}) {
		t.Errorf("cors_origin from the environment = %q", cfg.Server.CORSOrigin)
	}
}

// TestHelperProcess is not a test: run by the tests below with
// CITYFINDER_TEST_MAIN=1, this test binary is cityfinder itself, with the
// arguments after "--", so that they can signal a real process.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("CITYFINDER_TEST_MAIN") != "1" {
		return
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}

// blackhole returns the address of a loopback listener that accepts
// connections it never answers: a Redis that hangs.
func blackhole(t *testing.T) string { return silent.Listen(t) }

// SIGTERM to a real `cityfinder serve` process while a search is in flight:
// the process stops accepting connections at once, answers the search (200)
// and exits 0. The search is slow because the limiter's Redis hangs: each
// decision waits out the 2s read timeout, then fails open.
func TestServeSIGTERMFinishesRequestInFlight(t *testing.T) {
	t.Parallel()
	dir := mustImportTwoCities(t)
	addr := freeAddr(t)
	base := "http://" + addr
	// How long a search waits on the black-holed Redis: the window in which
	// the test must see it in flight (2 s was too short on a loaded CI machine).
	const redisTimeout = 5 * time.Second
	redisURL := fmt.Sprintf("redis://%s/0?read_timeout=%s&write_timeout=%[2]s&dial_timeout=%[2]s", blackhole(t), redisTimeout)

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "--",
		"serve", "--data-dir", dir, "--addr", addr, "--redis-url", redisURL, "--log-level", "info", "--shutdown-timeout", "10s",
		"--drain-delay", "0") // the drain is TestServeDrainsOnSIGTERM's
	cmd.Env = append(os.Environ(), "CITYFINDER_TEST_MAIN=1")
	var stderr syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill() // a no-op once it has exited
		<-exited
		if t.Failed() {
			t.Logf("serve's log:\n%s", stderr.String())
		}
	}()

	// The start waits out one Redis ping; then serve answers.
	poll.Until(t, 20*time.Second, "serve to answer", func() bool {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})

	type result struct {
		status  int
		body    string
		elapsed time.Duration
		err     error
	}
	slow := make(chan result, 1)
	go func() {
		start := time.Now()
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Get(base + "/search?q=par")
		if err != nil {
			slow <- result{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		slow <- result{resp.StatusCode, string(body), time.Since(start), err}
	}()
	// In flight: the search and the scrape that sees it.
	inFlight := regexp.MustCompile(`(?m)^cityfinder_http_requests_in_flight 2$`)
	poll.Until(t, redisTimeout/2, "the search to be in flight", func() bool {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return inFlight.Match(body)
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// The listener closes at once, while the search is still running.
	poll.Until(t, redisTimeout/2, "the listener to close", func() bool {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err != nil
	})
	select {
	case r := <-slow:
		t.Fatalf("the search ended before the listener closed: %+v", r)
	default:
	}

	r := <-slow
	if r.err != nil || r.status != http.StatusOK || !strings.Contains(r.body, `"name":"Paris"`) {
		t.Errorf("search in flight = %d %q, %v; want 200 with Paris", r.status, r.body, r.err)
	}
	if r.elapsed < redisTimeout/2 {
		t.Errorf("search took %s: it was not slow, the test proves nothing", r.elapsed)
	}
	select {
	case err := <-exited:
		exited <- err // for the deferred cleanup
		if err != nil {
			t.Errorf("serve exited with %v, want 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not exit within 10s of answering")
	}
	log := stderr.String()
	for _, want := range []string{`"msg":"shutting down"`, `"msg":"stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %s", want)
		}
	}
}
