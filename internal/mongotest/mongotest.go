// Package mongotest gives tests a MongoDB-protocol server: the MongoDB named
// by CITYFINDER_TEST_MONGO_URI when it is set, otherwise a FerretDB that it
// builds from internal/mongotest/ferretdb (a Go module of its own) and starts
// on a free loopback port.
//
// When no server can be had (the variable is unset and FerretDB cannot be
// built or started) a test is skipped, saying why, except in CI (CI set),
// where it fails: CI must run the MongoDB tests.
//
// FerretDB is a stand-in, not MongoDB: it scans every document for every
// query (indexes are accepted but not used for reads), and it lacks
// collation, transactions and renameCollection's dropTarget. Tests keep their
// data small and never assert query plans or latency.
package mongotest

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Environment variables that tests read.
const (
	// EnvURI names a MongoDB server for the tests, for example
	// mongodb://localhost:27017; unset, the tests start FerretDB.
	EnvURI = "CITYFINDER_TEST_MONGO_URI"
	// EnvFerretDB is the path of a ferretdb binary built from
	// internal/mongotest/ferretdb; unset, the tests build one into the
	// user's cache directory (once: about two minutes on two cores).
	EnvFerretDB = "CITYFINDER_FERRETDB"
)

// Bounds on the waits of this package.
const (
	buildTimeout = 10 * time.Minute
	startTimeout = 15 * time.Second
	stopTimeout  = 10 * time.Second
	dropTimeout  = 10 * time.Second
)

// unavailable skips tb, or fails it in CI, because no server can be had.
func unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		tb.Fatalf("MongoDB tests cannot run in CI: %s", msg)
	}
	tb.Skipf("no MongoDB server for this test (set %s to use one): %s", EnvURI, msg)
}

// shared is the FerretDB that the tests of one test binary share.
var shared struct {
	once sync.Once
	srv  *Server
	err  error
}

// URI returns the URI of the server shared by this test binary's tests:
// $CITYFINDER_TEST_MONGO_URI, or a FerretDB started on first use and stopped
// by Main. Tests keep apart by each using its own Database.
func URI(tb testing.TB) string {
	tb.Helper()
	if uri := os.Getenv(EnvURI); uri != "" {
		return uri
	}
	shared.once.Do(func() {
		var dir string
		if dir, shared.err = os.MkdirTemp("", "cityfinder-ferretdb-"); shared.err != nil {
			return
		}
		shared.srv, shared.err = start(dir, "127.0.0.1:0")
		if shared.err != nil {
			os.RemoveAll(dir)
		}
	})
	if shared.err != nil {
		unavailable(tb, "%v", shared.err)
	}
	return shared.srv.uri
}

// Main runs the tests of a package that uses URI and stops the shared
// FerretDB afterwards: call it from TestMain. (Without it the server still
// exits when the test binary does, as it watches its standard input.)
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main for a TestMain that has more to do after the tests: it
// returns their exit code instead of exiting.
func Run(m *testing.M) int {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.stop()
		os.RemoveAll(shared.srv.dir)
	}
	return code
}

// Database returns the name of a new database on the server at uri, unique
// to the caller, and drops it when tb ends.
func Database(tb testing.TB, uri string) string {
	tb.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "cityfinder_test_" + hex.EncodeToString(b[:])
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(dropTimeout))
		if err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
			return
		}
		defer client.Disconnect(ctx)
		if err := client.Database(name).Drop(ctx); err != nil {
			tb.Errorf("drop test database %s: %v", name, err)
		}
	})
	return name
}

// Client returns a client of the server at uri, disconnected when tb ends,
// for tests that look at what a store wrote.
func Client(tb testing.TB, uri string) *mongo.Client {
	tb.Helper()
	client, err := mongo.Connect(options.Client().ApplyURI(uri).SetServerSelectionTimeout(dropTimeout))
	if err != nil {
		tb.Fatalf("connect to %s: %v", uri, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), dropTimeout)
		defer cancel()
		_ = client.Disconnect(ctx)
	})
	return client
}

// Server is a FerretDB process that a test owns, so that it can stop the
// server and start it again, as fault tests do.
type Server struct {
	bin, dir, addr, uri string
	cmd                 *exec.Cmd
	stdin               io.Closer // closing it stops the server
	exited              chan struct{}
	stderr              *strings.Builder
	mu                  sync.Mutex // guards stderr
}

// Start starts a FerretDB of tb's own on a free loopback port, with its
// data in a temporary directory, and stops it when tb ends. It needs the
// FerretDB binary even when CITYFINDER_TEST_MONGO_URI is set: a real MongoDB
// cannot be stopped and restarted by a test.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start(tb.TempDir(), "127.0.0.1:0")
	if err != nil {
		unavailable(tb, "%v", err)
	}
	tb.Cleanup(s.stop)
	return s
}

// StartServer starts a FerretDB on a free loopback port with its data in
// dir, for programs that are not tests (benchmarks); Close stops it.
func StartServer(dir string) (*Server, error) { return start(dir, "127.0.0.1:0") }

// Close stops a server that StartServer started.
func (s *Server) Close() { s.stop() }

// URI is the server's MongoDB URI, the same across Stop and Restart.
func (s *Server) URI() string { return s.uri }

// Stop kills the server and waits until it has exited.
func (s *Server) Stop(tb testing.TB) {
	tb.Helper()
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Fatalf("kill ferretdb: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		tb.Fatalf("ferretdb did not exit within %s of a kill", stopTimeout)
	}
}

// Restart starts the server again, on the same port and with the same data.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	n, err := start(s.dir, s.addr)
	if err != nil {
		tb.Fatalf("restart ferretdb on %s: %v", s.addr, err)
	}
	s.cmd, s.stdin, s.exited, s.stderr = n.cmd, n.stdin, n.exited, n.stderr
}

// stop ends the server gently (its standard input closes), then for sure.
func (s *Server) stop() {
	s.stdin.Close()
	select {
	case <-s.exited:
		return
	case <-time.After(stopTimeout):
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
	}
}

// start runs the FerretDB binary on addr with its data in dir and waits
// until it prints its URI.
func start(dir, addr string) (*Server, error) {
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-addr", addr, "-dir", filepath.Join(dir, "data"))
	// FerretDB decodes every document of a collection for each query: with
	// the collector off until 1 GiB, the conformance suite runs a third faster.
	cmd.Env = append(os.Environ(), "GOGC=off", "GOMEMLIMIT=1GiB")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, cmd: cmd, stdin: stdin, exited: make(chan struct{}), stderr: new(strings.Builder)}
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.stderr.Len() < 64<<10 {
			s.stderr.Write(p)
		}
		return len(p), nil
	})
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start ferretdb: %w", err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	fail := func(format string, args ...any) (*Server, error) {
		s.stop()
		s.mu.Lock()
		defer s.mu.Unlock()
		return nil, fmt.Errorf("%s %s: %s; its stderr:\n%s", bin, addr, fmt.Sprintf(format, args...), s.stderr.String())
	}
	select {
	case line, ok := <-lines:
		if !ok || !strings.HasPrefix(line, "mongodb://") {
			return fail("printed %q instead of its URI", line)
		}
		s.uri = line
	case <-time.After(startTimeout):
		return fail("no URI within %s", startTimeout)
	}
	// The URI is mongodb://127.0.0.1:PORT/; a restart listens on that port.
	s.addr = strings.TrimSuffix(strings.TrimPrefix(s.uri, "mongodb://"), "/")
	return s, nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// build is the one FerretDB build of this test binary.
var build struct {
	once sync.Once
	path string
	err  error
}

// binary returns the path of the FerretDB program: $CITYFINDER_FERRETDB, or
// a binary built from internal/mongotest/ferretdb into the user's cache
// directory, named after a hash of its sources so that a change rebuilds it.
// A file lock keeps test binaries that run at once from building it twice.
func binary() (string, error) {
	if p := os.Getenv(EnvFerretDB); p != "" {
		return p, nil
	}
	build.once.Do(func() { build.path, build.err = buildBinary() })
	return build.path, build.err
}

func buildBinary() (string, error) {
	_, file, _, _ := runtime.Caller(0) // <checkout>/internal/mongotest/mongotest.go
	src := filepath.Join(filepath.Dir(file), "ferretdb")
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, name := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return "", fmt.Errorf("FerretDB program sources: %w", err)
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "cityfinder")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("FerretDB cache directory: %w", err)
	}
	bin := filepath.Join(dir, "ferretdb-"+hex.EncodeToString(h.Sum(nil)[:8]))
	unlock, err := lock(bin + ".lock")
	if err != nil {
		return "", fmt.Errorf("lock the FerretDB build: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	gobin, err := goCommand()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	cmd := exec.CommandContext(ctx, gobin, "build", "-buildvcs=false", "-o", tmp, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("build FerretDB (go build in %s): %w\n%s", src, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", fmt.Errorf("build FerretDB: %w", err)
	}
	return bin, nil
}

// goCommand finds the go command; go test puts its own first on PATH.
func goCommand() (string, error) {
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("no go command to build FerretDB with: %w", err)
	}
	return p, nil
}
