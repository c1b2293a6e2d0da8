package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// runCLI runs one command line through the real command tree.
func runCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	return runCLIContext(t.Context(), args...)
}

func runCLIContext(ctx context.Context, args ...string) (string, string, error) {
	var out, errOut bytes.Buffer
	err := execute(ctx, args, &out, &errOut)
	return out.String(), errOut.String(), err
}

func mustRunCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("cityfinder %s: %v\nstderr: %s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImportThenQuery(t *testing.T) {
	t.Parallel()
	csv := shareddata.Path(t, "world-cities-2016.csv")
	dir := t.TempDir()
	out := mustRunCLI(t, "import", "--dataset", "small", "--file", csv, "--data-dir", dir)
	if !strings.HasPrefix(out, "imported 22,951 of 23,018 rows into small (0 rejected, 67 duplicates) in ") {
		t.Errorf("import summary = %q", out)
	}

	out = mustRunCLI(t, "query", "istanbul", "--data-dir", dir)
	if got, want := strings.Fields(out), []string{"NAME", "COUNTRY", "REGION", "İstanbul", "Türkiye", "Istanbul"}; !equal(got, want) {
		t.Errorf("query istanbul printed %q, want the fields %q", out, want)
	}

	out = mustRunCLI(t, "query", "SAO", "P", "--data-dir", dir, "--json", "--limit", "2")
	var cities []search.Hit
	if err := json.Unmarshal([]byte(out), &cities); err != nil {
		t.Fatalf("query --json printed %q: %v", out, err)
	}
	if len(cities) != 2 || cities[0].Name != "São Paulo" || cities[0].Slug != "sao-paulo" || cities[0].Country != "Brazil" {
		t.Errorf("query \"SAO P\" --json = %+v, want São Paulo first of 2", cities)
	}
	if len(cities) > 0 && cities[0].Match != (search.Span{Start: 0, End: 5}) {
		t.Errorf("São Paulo's match span = %+v, want 0..5 (\"São P\")", cities[0].Match)
	}

	out = mustRunCLI(t, "query", "qqqqq", "--data-dir", dir, "--json")
	if out != "[]\n" {
		t.Errorf("no match with --json printed %q, want []", out)
	}
}

func TestImportReportsMalformedRows(t *testing.T) {
	csv := writeFile(t, "cities.csv", "name,country,subcountry,geonameid\n"+
		"Paris,France,Ile-de-France,2988507\n"+
		"Broken,France\n"+
		"Lyon,France,Auvergne-Rhone-Alpes,2996944\n")
	dir := t.TempDir()
	// One row in three is far more than a first import may reject: it is
	// refused, unless --allow-shrink says that this is the file meant.
	if _, _, err := runCLI(t, "import", "--file", csv, "--data-dir", t.TempDir()); !errors.Is(err, importer.ErrShrink) ||
		!strings.Contains(err.Error(), "small stays empty") || !strings.Contains(err.Error(), "--allow-shrink") {
		t.Errorf("a first import with a third of its rows bad: err = %v, want it refused, naming --allow-shrink", err)
	}
	out, errOut, err := runCLI(t, "import", "--file", csv, "--data-dir", dir, "--allow-shrink")
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if !strings.Contains(out, "imported 2 of 3 rows into small (1 rejected") {
		t.Errorf("summary %q does not count the rejected row", out)
	}
	if !strings.Contains(errOut, "line 3") {
		t.Errorf("stderr %q does not name line 3", errOut)
	}
	if got := mustRunCLI(t, "query", "lyon", "--data-dir", dir); !strings.Contains(got, "Lyon") {
		t.Errorf("rows after the bad one were lost: %q", got)
	}

	_, _, err = runCLI(t, "import", "--file", csv, "--data-dir", t.TempDir(), "--strict")
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("import --strict: err = %v, want one naming line 3", err)
	}
}

func TestCommandErrors(t *testing.T) {
	empty := t.TempDir()
	bad := writeFile(t, "bad.yaml", "limiter:\n  windw: 3s\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"import", "--file", "/no/such/file.csv", "--data-dir", empty}, "/no/such/file.csv"},
		{"unreadable csv", []string{"import", "--file", writeFile(t, "x.csv", "not,a,cities\nfile\n"), "--data-dir", empty}, "header"},
		{"empty dataset", []string{"query", "istanbul", "--data-dir", empty}, "dataset small is empty: run `cityfinder import --dataset small`"},
		{"unknown dataset", []string{"query", "ist", "--dataset", "huge", "--data-dir", empty}, `invalid --dataset: Unknown dataset "huge"`},
		{"zero window", []string{"serve", "--window", "0s", "--data-dir", empty}, "invalid --window 0s"},
		{"negative max", []string{"serve", "--max", "-1", "--data-dir", empty}, "invalid --max -1"},
		{"bad limit", []string{"query", "ist", "--limit", "0", "--data-dir", empty}, "invalid --limit 0"},
		{"query without letters", []string{"query", "--data-dir", empty, "--", "---"}, "enter at least 3 letters"},
		{"query of two letters", []string{"query", "is", "--data-dir", empty}, "enter at least 3 letters"},
		{"misspelt config key", []string{"--config", bad, "query", "ist"}, "windw"},
		{"missing config file", []string{"--config", "/no/such.yaml", "query", "ist"}, "/no/such.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("cityfinder %s: err = %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
}

func TestRunPrintsOneErrorLine(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"query", "ist", "--data-dir", t.TempDir()}, &out, &errOut)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if got := errOut.String(); got != "cityfinder: dataset small is empty: run `cityfinder import --dataset small`\n" {
		t.Errorf("stderr = %q", got)
	}
}

func TestVersion(t *testing.T) {
	if out := mustRunCLI(t, "version"); out != "cityfinder dev\n" {
		t.Errorf("version printed %q", out)
	}
}

// Each layer of the configuration overrides the ones below it:
// flag > CITYFINDER_* environment > config file > default.
func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, "cityfinder.yaml", "data_dir: /from/file\nlimiter:\n  window: 10s\n  max: 7\nserver:\n  addr: 127.0.0.1:1111\n")
	for _, tc := range []struct {
		name       string
		env        map[string]string
		args       []string
		wantDir    string
		wantWindow time.Duration
		wantMax    int
	}{
		{"defaults", nil, nil, "./data", 3 * time.Second, 5},
		{"config file", nil, []string{"--config", file}, "/from/file", 10 * time.Second, 7},
		{"config file from env", map[string]string{"CITYFINDER_CONFIG": file}, nil, "/from/file", 10 * time.Second, 7},
		{"env over file", map[string]string{"CITYFINDER_WINDOW": "20s", "CITYFINDER_DATA_DIR": "/from/env"},
			[]string{"--config", file}, "/from/env", 20 * time.Second, 7},
		{"flag over env", map[string]string{"CITYFINDER_WINDOW": "20s", "CITYFINDER_MAX": "8"},
			[]string{"--config", file, "--window", "30s", "--data-dir", "/from/flag"}, "/from/flag", 30 * time.Second, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			root := newRootCmd()
			cmd, rest, err := root.Find([]string{"serve"})
			if err != nil || len(rest) != 0 {
				t.Fatalf("find serve: %v %v", rest, err)
			}
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := loadConfig(cmd.Flags())
			if err != nil {
				t.Fatal(err)
			}
			if cfg.DataDir != tc.wantDir || cfg.Limiter.Window != tc.wantWindow || cfg.Limiter.Max != tc.wantMax {
				t.Errorf("got data_dir %q window %s max %d, want %q %s %d",
					cfg.DataDir, cfg.Limiter.Window, cfg.Limiter.Max, tc.wantDir, tc.wantWindow, tc.wantMax)
			}
		})
	}
}

// The limiter's settings layer the same way, lists included.
func TestLimiterSettingsPrecedence(t *testing.T) {
	file := writeFile(t, "cityfinder.yaml", "limiter:\n  trusted_proxies: [10.0.0.0/8]\n  redis_url: redis://file:6379\n  max_clients: 7\n")
	for _, tc := range []struct {
		name        string
		env         map[string]string
		args        []string
		wantProxies []string
		wantRedis   string
		wantClients int
	}{
		{"config file", nil, []string{"--config", file}, []string{"10.0.0.0/8"}, "redis://file:6379", 7},
		{"env over file", map[string]string{"CITYFINDER_REDIS_URL": "redis://env:6379", "CITYFINDER_MAX_CLIENTS": "8"},
			[]string{"--config", file}, []string{"10.0.0.0/8"}, "redis://env:6379", 8},
		{"flag over env", map[string]string{"CITYFINDER_REDIS_URL": "redis://env:6379"},
			[]string{"--config", file, "--redis-url", "redis://flag:6379", "--trusted-proxies", "127.0.0.0/8,::1/128"},
			[]string{"127.0.0.0/8", "::1/128"}, "redis://flag:6379", 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			l := mustLoadConfig(t, "serve", tc.args...).Limiter
			if strings.Join(l.TrustedProxies, ",") != strings.Join(tc.wantProxies, ",") || l.RedisURL != tc.wantRedis || l.MaxClients != tc.wantClients {
				t.Errorf("got proxies %q redis %q max clients %d, want %q %q %d",
					l.TrustedProxies, l.RedisURL, l.MaxClients, tc.wantProxies, tc.wantRedis, tc.wantClients)
			}
		})
	}
}

// The example config file documents every key and decodes cleanly.
func TestExampleConfig(t *testing.T) {
	root := newRootCmd()
	cmd, _, _ := root.Find([]string{"serve"})
	if err := cmd.ParseFlags([]string{"--config", filepath.Join("..", "..", "configs", "cityfinder.yaml")}); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatalf("configs/cityfinder.yaml: %v", err)
	}
	if cfg.Limiter.Window != 3*time.Second || cfg.Limiter.Max != 5 || cfg.Server.Addr != "127.0.0.1:8080" {
		t.Errorf("example config decodes to %+v, want the defaults", cfg)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServe runs `cityfinder serve` until the test ends and waits until it answers.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		// No drain: the test's own clients are done when it ends.
		_, _, err := runCLIContext(ctx, append([]string{"serve", "--addr", addr, "--log-level", "warn", "--drain-delay", "0"}, args...)...)
		done <- err
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	// As long as startReplica and startServeProcess give it: under the race
	// detector, beside the tests that import in parallel, loading a
	// snapshot of tens of thousands of cities can take seconds.
	poll.Until(t, 20*time.Second, "serve to answer on "+addr, func() bool {
		resp, err := http.Get("http://" + addr + "/") // not rate limited
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return "http://" + addr
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func TestServe(t *testing.T) {
	t.Parallel()
	csv := shareddata.Path(t, "world-cities-2016.csv")
	dir := t.TempDir()
	mustRunCLI(t, "import", "--file", csv, "--data-dir", dir)
	base := startServe(t, "--data-dir", dir, "--window", "1500ms", "--max", "2")

	code, body := get(t, base+"/search?q=istanbul")
	if code != 200 || !strings.HasPrefix(body, `[{"name":"İstanbul","label":"İstanbul","slug":"istanbul","country":"Türkiye"`) {
		t.Errorf("GET /search?q=istanbul = %d %s", code, body)
	}
	code, body = get(t, base+"/search?q=ist&dataset=large")
	if code != http.StatusServiceUnavailable || body != `{"message":"This dataset is not available yet"}` {
		t.Errorf("search of the empty large dataset = %d %s, want 503 saying it is not available", code, body)
	}
	code, body = get(t, base+"/search?q=par")
	if code != http.StatusTooManyRequests || body != `{"message":"You can only do 2 searches in 1.5 seconds"}` {
		t.Errorf("third search in the window = %d %s, want the 429 of the configured policy", code, body)
	}

	_, _, err := runCLI(t, "serve", "--addr", strings.TrimPrefix(base, "http://"), "--data-dir", dir)
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("second serve on the same port: err = %v, want address already in use", err)
	}
}

// A running serve switches to a re-imported dataset by itself, and every
// answer meanwhile comes from the old or the new data, never an error.
func TestServeSeesReimport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := writeFile(t, "first.csv", "name,country,subcountry,geonameid\nParis,France,Ile-de-France,1\nParma,Italy,Emilia-Romagna,2\n")
	second := writeFile(t, "second.csv", "name,country,subcountry,geonameid\nParla,Spain,Madrid,3\n")
	mustRunCLI(t, "import", "--file", first, "--data-dir", dir)
	base := startServe(t, "--data-dir", dir, "--max", "100000")

	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 1)
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := http.Get(base + "/search?q=par")
			if err != nil {
				errs <- err
				return
			}
			var cities []search.Hit
			err = json.NewDecoder(resp.Body).Decode(&cities)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || (len(cities) != 2 && len(cities) != 1) {
				errs <- fmt.Errorf("during re-import: status %d, %d cities, %v", resp.StatusCode, len(cities), err)
				return
			}
		}
	})
	mustRunCLI(t, "import", "--file", second, "--data-dir", dir)
	poll.Until(t, 10*time.Second, "serve to answer with the re-imported dataset", func() bool {
		_, body := get(t, base+"/search?q=par")
		return strings.Contains(body, "Parla") && !strings.Contains(body, "Paris")
	})
	close(stop)
	wg.Wait()
	select {
	case err := <-errs:
		t.Error(err)
	default:
	}
}

func equal(a, b []string) bool {
	return len(a) == len(b) && strings.Join(a, "\x00") == strings.Join(b, "\x00")
}
