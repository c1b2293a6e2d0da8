// Package redistest runs throwaway redis-server processes on the loopback
// interface for tests, with persistence off.
//
// URL gives a test the address of a Redis to share: the one named by
// CITYFINDER_TEST_REDIS_URL, or else one redis-server per test binary,
// started on first use and stopped by Main. Start gives a test a server of
// its own, which it may stop and restart (to test failures). StartCluster
// gives it a Redis Cluster of its own, joined by redis-cli, and
// StartSentinel a master watched by one Sentinel. When no server can be had,
// tests skip, saying why, except in CI (CI set), where they fail. Tests
// sharing a server must keep their keys apart, for example with KeyPrefix;
// nothing here flushes a database.
package redistest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/syncbuf"
)

// EnvURL names the environment variable that points tests at an existing
// Redis (redis://127.0.0.1:6379/0) instead of starting one.
const EnvURL = "CITYFINDER_TEST_REDIS_URL"

// Bounds on starting and stopping a server.
const (
	startAttempts = 5 // a free port can be taken between probing and binding
	readyTimeout  = 10 * time.Second
	stopTimeout   = 10 * time.Second
	// clusterJoinTimeout bounds redis-cli --cluster create, which waits
	// for the nodes' gossip to agree: on a loaded CI machine (the race
	// pass beside the image build) that once took longer than 10 s.
	clusterJoinTimeout = 30 * time.Second
	pollEvery          = 10 * time.Millisecond
)

// Server is one redis-server process listening on 127.0.0.1: a plain
// server, a cluster node or a Sentinel.
type Server struct {
	bin  string
	dir  string
	port int
	kind kind
	// master is the host:port that a Sentinel watches.
	master string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// Addr returns the server's host:port.
func (s *Server) Addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// URL returns the server's redis:// URL.
func (s *Server) URL() string {
	return "redis://" + s.Addr() + "/0"
}

// kind is what a Server runs as.
type kind int

const (
	plain kind = iota
	clusterNode
	sentinel
)

// Start starts a redis-server for the calling test alone, on a free loopback
// port, and stops it when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return startFor(tb, &Server{dir: tb.TempDir()})
}

// startFor starts s, skipping or failing tb if it cannot, and stops it when
// the test ends.
func startFor(tb testing.TB, s *Server) *Server {
	tb.Helper()
	if err := start(s); err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() {
		if err := s.stop(); err != nil {
			tb.Errorf("redistest: %v", err)
		}
	})
	return s
}

// Stop kills the server, as a crash would, and waits until it has exited
// and its port is closed.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	if err := s.stop(); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
}

// Restart starts the stopped server again on the same port, empty.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if err := s.run(); err != nil {
		tb.Fatalf("redistest: restart on %s: %v", s.Addr(), err)
	}
}

var shared struct {
	once sync.Once
	url  string
	srv  *Server
	err  error
}

// URL returns the URL of a Redis for the calling test to share with the
// other tests of its binary: CITYFINDER_TEST_REDIS_URL if set, or else a
// redis-server started on first use. Call Main from TestMain so that it is
// stopped at the end.
func URL(tb testing.TB) string {
	tb.Helper()
	shared.once.Do(func() {
		if u := os.Getenv(EnvURL); u != "" {
			shared.url = u
			return
		}
		dir, err := os.MkdirTemp("", "redistest-")
		if err != nil {
			shared.err = err
			return
		}
		shared.srv = &Server{dir: dir}
		if shared.err = start(shared.srv); shared.err != nil {
			_ = os.RemoveAll(dir)
			return
		}
		shared.url = shared.srv.URL()
	})
	if shared.err != nil {
		unavailable(tb, shared.err)
	}
	return shared.url
}

// Main runs a package's tests and then stops the server that URL started,
// if any: func TestMain(m *testing.M) { redistest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if s := shared.srv; s != nil {
		if err := s.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "redistest: %v\n", err)
		}
		_ = os.RemoveAll(s.dir)
	}
	os.Exit(code)
}

// KeyPrefix returns a prefix for the keys of the calling test that no other
// test, run or binary sharing the server uses.
func KeyPrefix(tb testing.TB) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "test:" + strings.ReplaceAll(tb.Name(), " ", "_") + ":" + hex.EncodeToString(b[:]) + ":"
}

// unavailable skips the test, or fails it in CI, where Redis must be there.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("redistest: no Redis in CI: %v", err)
	}
	tb.Skipf("redistest: no Redis (install redis-server, or set %s): %v", EnvURL, err)
}

// start starts s, a redis-server in s.dir, on a free port.
func start(s *Server) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	s.bin = bin
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	var errs []error
	for range startAttempts {
		if s.port, err = freePort(); err != nil {
			return err
		}
		if err = s.run(); err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("start redis-server %d times: %w", startAttempts, errors.Join(errs...))
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// run starts the process on s.port and waits until it answers PING.
func (s *Server) run() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("redis-server on %s is already running", s.Addr())
	}
	args, err := s.args()
	if err != nil {
		return err
	}
	cmd := exec.Command(s.bin, args...)
	out := &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr() // dies with the test binary where it can
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	if err := waitReady(s.Addr(), done); err != nil {
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("redis-server on port %d: %w; it said: %s", s.port, err, strings.TrimSpace(out.String()))
	}
	s.cmd, s.done = cmd, done
	return nil
}

// args returns the command line of s, writing a Sentinel's config file
// first: Sentinel takes one that it can rewrite.
func (s *Server) args() ([]string, error) {
	common := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	}
	switch s.kind {
	case sentinel:
		text, err := sentinelConfig(s.master)
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(s.dir, "sentinel.conf")
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		return append([]string{conf, "--sentinel"}, common...), nil
	case clusterNode:
		// Each node keeps its cluster state in nodes.conf in its own
		// directory, so that a restarted node rejoins with its slots.
		common = append(common, "--cluster-enabled", "yes", "--cluster-require-full-coverage", "no",
			"--cluster-node-timeout", "5000")
	}
	return append(common, "--save", "", "--appendonly", "no"), nil
}

// waitReady waits until addr answers PING with PONG, or done is closed.
func waitReady(addr string, done <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	var err error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return errors.New("exited at start")
		default:
		}
		if err = ping(addr); err == nil {
			return nil
		}
		time.Sleep(pollEvery)
	}
	return fmt.Errorf("not ready after %s: %w", readyTimeout, err)
}

// ping sends one PING in the Redis protocol and expects +PONG.
func ping(addr string) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.TrimSpace(line) != "+PONG" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// stop kills the process, if running, and waits for it to exit and for its
// port to refuse connections.
func (s *Server) stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		return fmt.Errorf("redis-server on %s did not exit within %s", s.Addr(), stopTimeout)
	}
	s.cmd = nil
	deadline := time.Now().Add(stopTimeout)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", s.Addr(), 100*time.Millisecond)
		if err != nil {
			return nil
		}
		conn.Close()
		time.Sleep(pollEvery)
	}
	return fmt.Errorf("port of the stopped redis-server %s still accepts connections", s.Addr())
}
