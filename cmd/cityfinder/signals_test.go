package main

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/pkg/importer"
)

// SIGTERM under load: /readyz turns 503 at once, and serve goes on
// answering every client that opens a new connection during the drain, as
// a load balancer's last requests do; none is refused or reset. A second
// SIGTERM ends the drain, and serve exits 0.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	p, base := startServeProcess(t, "--data-dir", mustImportTwoCities(t), "--drain-delay", "10m", "--log-level", "info")

	const clients, afterDrain = 16, 10
	var (
		draining atomic.Bool
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
		total    atomic.Int64
	)
	served := make([]atomic.Int64, clients) // requests answered since the drain began
	for i := range clients {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				during := draining.Load()
				code, body, err := getFresh(base + "/search?q=par")
				if err != nil || code != http.StatusOK || !strings.Contains(body, "Paris") {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("client %d (draining: %v): %d %.80s %v", i, during, code, body, err))
					mu.Unlock()
					return
				}
				total.Add(1)
				if during {
					served[i].Add(1)
				}
			}
		})
	}
	poll.Until(t, 20*time.Second, "the clients to be answered", func() bool { return total.Load() >= 2*clients })
	p.signal(t, syscall.SIGTERM)
	poll.Until(t, 10*time.Second, "/readyz to answer 503", func() bool {
		code, body, err := getFresh(base + "/readyz")
		return err == nil && code == http.StatusServiceUnavailable && body == `{"status":"draining"}`
	})
	draining.Store(true)
	poll.Until(t, 60*time.Second, fmt.Sprintf("each client to be answered %d times during the drain", afterDrain), func() bool {
		mu.Lock()
		failed := len(failures) > 0
		mu.Unlock()
		if failed {
			return true
		}
		for i := range served {
			if served[i].Load() < afterDrain {
				return false
			}
		}
		return true
	})
	close(stop)
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if !p.running() {
		t.Fatalf("serve exited during the drain: %v", p.err)
	}

	p.signal(t, syscall.SIGTERM)
	if err := p.wait(t, 20*time.Second); err != nil {
		t.Errorf("serve exited with %v, want 0", err)
	}
	log := p.stderr.String()
	for _, want := range []string{`"msg":"draining: /readyz answers 503`, `"msg":"drain cut short by a second signal"`, `"msg":"stopped"`} {
		if !strings.Contains(log, want) {
			t.Errorf("serve's log lacks %s", want)
		}
	}
}

// SIGHUP makes serve read the datasets again and say so, instead of
// killing it; with --reload-interval 0 only SIGHUP does.
func TestServeReloadsOnSIGHUP(t *testing.T) {
	dir := mustImportTwoCities(t)
	p, base := startServeProcess(t, "--data-dir", dir, "--reload-interval", "0", "--drain-delay", "0", "--log-level", "info")
	mustRunCLI(t, "import", "--file", writeFile(t, "next.csv", "name,country,subcountry,geonameid\nParla,Spain,Madrid,3114256\n"), "--data-dir", dir)
	if code, body, err := getFresh(base + "/search?q=par"); err != nil || !strings.Contains(body, "Paris") {
		t.Fatalf("before SIGHUP: %d %s %v, want the old Paris (no polling)", code, body, err)
	}

	p.signal(t, syscall.SIGHUP)
	poll.Until(t, 10*time.Second, "the reload's log line", func() bool {
		if !p.running() {
			t.Fatalf("serve exited on SIGHUP: %v", p.err)
		}
		return strings.Contains(p.stderr.String(), `"msg":"SIGHUP: datasets reloaded"`)
	})
	if code, body, err := getFresh(base + "/search?q=par"); err != nil || code != http.StatusOK || !strings.Contains(body, "Parla") || strings.Contains(body, "Paris") {
		t.Errorf("after SIGHUP: %d %s %v, want only the new Parla", code, body, err)
	}
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, "SIGHUP: datasets reloaded") && !strings.Contains(line, `"small":1,`) {
			t.Errorf("the reload's log line does not count the new dataset: %s", line)
		}
	}

	p.signal(t, syscall.SIGTERM)
	if err := p.wait(t, 20*time.Second); err != nil {
		t.Errorf("serve exited with %v, want 0", err)
	}
}

// The drain, reload and download settings layer like every other one, and
// the example config holds their defaults.
func TestLifecycleAndDownloadSettings(t *testing.T) {
	file := writeFile(t, "cityfinder.yaml", "server:\n  drain_delay: 2s\n  reload_interval: 0s\ndownload:\n  idle_timeout: 7s\n  connect_timeout: 3s\n")
	example := filepath.Join("..", "..", "configs", "cityfinder.yaml")
	for _, tc := range []struct {
		name    string
		cmd     string
		env     map[string]string
		args    []string
		drain   time.Duration
		reload  time.Duration
		timeout importer.Timeouts
	}{
		{"defaults", "serve", nil, nil, 5 * time.Second, time.Second, importer.DefaultTimeouts()},
		{"example config", "serve", nil, []string{"--config", example}, 5 * time.Second, time.Second, importer.DefaultTimeouts()},
		{"config file", "import", nil, []string{"--config", file}, 2 * time.Second, 0,
			importer.Timeouts{Connect: 3 * time.Second, TLS: 10 * time.Second, Header: 30 * time.Second, Idle: 7 * time.Second, Total: time.Hour}},
		{"env over file", "import", map[string]string{"CITYFINDER_DOWNLOAD_IDLE_TIMEOUT": "8s", "CITYFINDER_DRAIN_DELAY": "3s"}, []string{"--config", file}, 3 * time.Second, 0,
			importer.Timeouts{Connect: 3 * time.Second, TLS: 10 * time.Second, Header: 30 * time.Second, Idle: 8 * time.Second, Total: time.Hour}},
		{"flag over env", "import", map[string]string{"CITYFINDER_DOWNLOAD_IDLE_TIMEOUT": "8s"},
			[]string{"--config", file, "--download-idle-timeout", "9s", "--download-header-timeout", "1s"}, 2 * time.Second, 0,
			importer.Timeouts{Connect: 3 * time.Second, TLS: 10 * time.Second, Header: time.Second, Idle: 9 * time.Second, Total: time.Hour}},
		{"serve's flags", "serve", nil, []string{"--config", file, "--drain-delay", "0", "--reload-interval", "250ms"}, 0, 250 * time.Millisecond,
			importer.Timeouts{Connect: 3 * time.Second, TLS: 10 * time.Second, Header: 30 * time.Second, Idle: 7 * time.Second, Total: time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cfg := mustLoadConfig(t, tc.cmd, tc.args...)
			if cfg.Server.DrainDelay != tc.drain || cfg.Server.ReloadInterval != tc.reload || downloadTimeouts(cfg) != tc.timeout {
				t.Errorf("got drain %s, reload %s, download %+v; want %s, %s, %+v",
					cfg.Server.DrainDelay, cfg.Server.ReloadInterval, downloadTimeouts(cfg), tc.drain, tc.reload, tc.timeout)
			}
		})
	}
	for _, args := range [][]string{
		{"serve", "--drain-delay", "-1s"}, {"serve", "--reload-interval", "-1s"},
		{"import", "--download-idle-timeout", "0s"}, {"import", "--download-connect-timeout", "-1s"},
	} {
		if _, _, err := runCLI(t, append(args, "--data-dir", t.TempDir())...); err == nil || !strings.Contains(err.Error(), "invalid "+args[1]) {
			t.Errorf("cityfinder %s: err = %v, want it invalid", strings.Join(args, " "), err)
		}
	}
}

// mustLoadConfig returns the configuration that command would run with,
// given args.
func mustLoadConfig(t *testing.T, command string, args ...string) *config {
	t.Helper()
	cmd, _, err := newRootCmd().Find([]string{command})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// SIGTERM while many clients open new connections, behind a load balancer
// slower to take serve out of rotation than the drain delay (two failed
// health checks 150 ms apart against a 300 ms delay): serve keeps
// accepting past the delay until the connections stop coming, so that no
// client is reset, sees EOF or is refused; then it exits 0.
func TestServeSIGTERMResetsNoConnection(t *testing.T) {
	p, base := startServeProcess(t, "--data-dir", mustImportTwoCities(t), "--drain-delay", "300ms", "--log-level", "info")
	const (
		clients       = 32
		checkInterval = 150 * time.Millisecond
		unhealthyEnd  = 2 // failed checks before the balancer stops sending
	)
	var (
		inRotation atomic.Bool
		wg         sync.WaitGroup
		mu         sync.Mutex
		failures   []string
		refused    atomic.Int64 // of the failures
		total      atomic.Int64
	)
	inRotation.Store(true)
	for i := range clients {
		wg.Go(func() {
			for inRotation.Load() {
				code, body, err := getFresh(base + "/search?q=par")
				if err != nil || code != http.StatusOK || !strings.Contains(body, "Paris") {
					if errors.Is(err, syscall.ECONNREFUSED) {
						refused.Add(1)
					}
					mu.Lock()
					failures = append(failures, fmt.Sprintf("client %d: %d %.80s %v", i, code, body, err))
					mu.Unlock()
					continue
				}
				total.Add(1)
			}
		})
	}
	balancer := make(chan struct{})
	go func() { // the load balancer's health checks
		failed := 0
		for ; failed < unhealthyEnd; time.Sleep(checkInterval) {
			if code, _, err := getFresh(base + "/readyz"); err != nil || code != http.StatusOK {
				failed++
			}
		}
		inRotation.Store(false)
		close(balancer)
	}()
	poll.Until(t, 20*time.Second, "the clients to be answered", func() bool { return total.Load() >= 4*clients })
	before := total.Load()
	p.signal(t, syscall.SIGTERM)
	sent := time.Now()
	<-balancer
	out := time.Since(sent)
	wg.Wait()
	if err := p.wait(t, 20*time.Second); err != nil {
		t.Errorf("serve exited with %v, want 0", err)
	}
	for _, f := range failures[:min(len(failures), 10)] {
		t.Error(f)
	}
	t.Logf("%d searches answered after SIGTERM, %d failed (%d refused, the others reset or cut); the balancer took serve out after %s",
		total.Load()-before, len(failures), refused.Load(), out.Round(time.Millisecond))
}
