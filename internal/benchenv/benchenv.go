// Package benchenv is what `make bench`, `make loadtest` and `make soak` share: the
// cached full-size dataset, and starting, watching and stopping processes
// on the loopback interface.
package benchenv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cityfinder/cityfinder/internal/shareddata"
)

// CacheDir is where the generated dataset is kept: $CITYFINDER_BENCH_CACHE,
// or cityfinder-bench in the user's cache directory.
func CacheDir() string {
	if d := os.Getenv("CITYFINDER_BENCH_CACHE"); d != "" {
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "cityfinder-bench")
}

// Dataset returns the full-size MaxMind look-alike in cache, generating it
// with ../shared/datasets/gen-maxmind.py on first use (about 30 s).
func Dataset(ctx context.Context, cache string) (string, error) {
	path := filepath.Join(cache, "worldcitiespop.txt")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", err
	}
	gen := filepath.Join(shareddata.Dir(), "gen-maxmind.py")
	if _, err := os.Stat(gen); err != nil {
		return "", fmt.Errorf("no cached dataset and no generator: %w", err)
	}
	log.Printf("generating %s with %s (about 30 s, once)", path, gen)
	tmp := path + ".tmp"
	cmd := exec.CommandContext(ctx, "python3", gen, tmp)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("generate dataset: %w", err)
	}
	return path, os.Rename(tmp, path)
}

// FreeAddr returns a loopback address with a port that was free just now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Stop sends a started process SIGTERM, waits up to grace for it to exit,
// then kills it. It does nothing for a process already waited for.
func Stop(cmd *exec.Cmd, grace time.Duration) {
	if cmd.Process == nil || cmd.ProcessState != nil {
		return
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		cmd.Process.Kill()
		<-done
	}
}

// WaitReady polls url until it answers 200, within timeout: a server
// started for a benchmark, a load test or a soak is ready.
func WaitReady(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s not ready within %s (last: %v)", url, timeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Serve is a `cityfinder serve` process that StartServe started on a free
// loopback port, logging into a file.
type Serve struct {
	Cmd  *exec.Cmd
	Addr string // host:port
	Log  *os.File
}

// StartServe starts `bin serve --addr ADDR args…` on a free loopback port,
// its stderr in the file logPath; the caller stops it (Stop) and closes
// Log.
func StartServe(ctx context.Context, bin, logPath string, args ...string) (*Serve, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	return &Serve{Cmd: cmd, Addr: addr, Log: logFile}, nil
}

// PrintLogTail writes the last n bytes of serve's log to out, if any, for a
// run that failed.
func (s *Serve) PrintLogTail(out io.Writer, n int) {
	s.Log.Sync()
	if b, err := os.ReadFile(s.Log.Name()); err == nil && len(b) > 0 {
		fmt.Fprintf(out, "\nserve's log (last %d KiB):\n%s\n", n/1024, b[max(0, len(b)-n):])
	}
}

// RSS reads a process's resident set size in KiB from /proc.
func RSS(pid int) (int64, error) { return procKiB(pid, "status", "VmRSS:") }

// PSS reads a process's proportional set size in KiB from /proc: its
// resident memory with the pages it shares divided among those sharing
// them, so that the processes of one server add up to the server's memory.
func PSS(pid int) (int64, error) { return procKiB(pid, "smaps_rollup", "Pss:") }

// procKiB reads the figure in kB of the line starting with field in the
// /proc file of process pid.
func procKiB(pid int, file, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/%s", strings.TrimSuffix(field, ":"), pid, file)
}
