package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/syncbuf"
)

// process is a real cityfinder process: this test binary run as the
// command (see TestHelperProcess), so that a test can signal it.
type process struct {
	cmd    *exec.Cmd
	stderr syncbuf.Buffer
	exited chan struct{}
	err    error // set once exited is closed
}

// startProcess runs cityfinder with args, in dir when it is not "", with
// env added to the environment, and kills it when the test ends.
func startProcess(t *testing.T, dir string, env []string, args ...string) *process {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	p := &process{exited: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Env = append(append(os.Environ(), "CITYFINDER_TEST_MAIN=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = io.Discard, &p.stderr
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cancel() // kills it if it still runs
		<-p.exited
		if t.Failed() {
			t.Logf("cityfinder %s; its log:\n%s", strings.Join(args, " "), p.stderr.String())
		}
	})
	return p
}

func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// wait waits until the process exits and returns its exit error.
func (p *process) wait(t *testing.T, timeout time.Duration) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(timeout):
		t.Fatalf("the process did not exit within %s", timeout)
		return nil
	}
}

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// startServeProcess runs `cityfinder serve` on a free port with args and
// waits until it answers; it returns the process and the base URL.
func startServeProcess(t *testing.T, args ...string) (*process, string) {
	t.Helper()
	addr := freeAddr(t)
	p := startProcess(t, "", nil, append([]string{"serve", "--addr", addr, "--max", "1000000"}, args...)...)
	base := "http://" + addr
	poll.Until(t, 20*time.Second, "serve to answer", func() bool {
		if !p.running() {
			t.Fatalf("serve exited: %v", p.err)
		}
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return p, base
}

// getFresh sends one GET on a connection of its own, as a client that just
// arrived does.
func getFresh(url string) (int, string, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}
