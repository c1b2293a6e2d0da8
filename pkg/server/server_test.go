package server_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// testLogger logs to the test's output, shown on failure or with -v.
func testLogger(tb testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// mustListen returns a server for h that listens on a free local port.
func mustListen(tb testing.TB, h http.Handler) *server.Server {
	tb.Helper()
	srv, err := server.Listen(server.Config{Addr: "127.0.0.1:0", Handler: h, Logger: testLogger(tb)})
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

// startServe runs srv.Serve(ctx) and returns where its result will arrive.
func startServe(ctx context.Context, srv *server.Server) <-chan error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	return done
}

// mustReturn waits for a Serve or Run result.
func mustReturn(tb testing.TB, done <-chan error) error {
	tb.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		tb.Fatal("server did not return within 5s")
		return nil
	}
}

// mustGet fetches url and returns the response with its body read.
func mustGet(tb testing.TB, method, url string) (*http.Response, string) {
	tb.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		tb.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, string(body)
}

func TestServerServesUntilContextDone(t *testing.T) {
	srv := mustListen(t, server.New(mustService(t, testCities())))
	addr := srv.Addr()
	if addr == "" || strings.HasSuffix(addr, ":0") {
		t.Fatalf("Addr() = %q, want the bound port", addr)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := startServe(ctx, srv)

	resp, body := mustGet(t, http.MethodGet, "http://"+addr+"/search?q=ist&limit=1")
	if resp.StatusCode != http.StatusOK || body != "["+matched(istraJSON, 0, 3)+"]" {
		t.Errorf("GET /search = %d %s, want 200 [%s]", resp.StatusCode, body, istraJSON)
	}
	if got := resp.Header.Get("Content-Type"); got != jsonContentType {
		t.Errorf("Content-Type = %q, want %q", got, jsonContentType)
	}

	cancel()
	if err := mustReturn(t, done); err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
	if _, err := http.Get("http://" + addr + "/search?q=ist"); err == nil {
		t.Error("server still answers after Serve returned")
	}
}

func TestServerHeadHasNoBody(t *testing.T) {
	ts := httptest.NewServer(server.New(mustService(t, testCities())))
	defer ts.Close()
	get, getBody := mustGet(t, http.MethodGet, ts.URL+"/search?q=ist")
	head, headBody := mustGet(t, http.MethodHead, ts.URL+"/search?q=ist")
	if head.StatusCode != http.StatusOK || headBody != "" {
		t.Errorf("HEAD = %d with body %q, want 200 and none", head.StatusCode, headBody)
	}
	if head.ContentLength != int64(len(getBody)) || get.ContentLength != int64(len(getBody)) {
		t.Errorf("Content-Length: HEAD %d, GET %d, want %d", head.ContentLength, get.ContentLength, len(getBody))
	}
}

// blockingSearcher answers once release is closed, or fails when its
// request's context ends; entered tells that a search has started.
type blockingSearcher struct {
	entered chan struct{}
	release chan struct{}
}

func newBlockingSearcher(tb testing.TB) *blockingSearcher {
	s := &blockingSearcher{entered: make(chan struct{}, 1), release: make(chan struct{})}
	tb.Cleanup(func() {
		select {
		case <-s.release:
		default:
			close(s.release)
		}
	})
	return s
}

func (s *blockingSearcher) Search(ctx context.Context, q search.Query) ([]search.City, error) {
	s.entered <- struct{}{}
	select {
	case <-s.release:
		return []search.City{newCity(1, "Istra", "Russia", "ru", "Moscow Oblast")}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestServerShutdownWaitsForRequestsInFlight(t *testing.T) {
	store := newBlockingSearcher(t)
	srv := mustListen(t, server.New(searching(store.Search)))
	ctx, cancel := context.WithCancel(t.Context())
	done := startServe(ctx, srv)

	status := make(chan int, 1)
	go func() {
		resp, err := http.Get("http://" + srv.Addr() + "/search?q=ist")
		if err != nil {
			t.Errorf("request in flight: %v", err)
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	<-store.entered
	cancel()

	select {
	case err := <-done:
		t.Fatalf("Serve returned %v with a request in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(store.release)
	if got := <-status; got != http.StatusOK {
		t.Errorf("request in flight got %d, want 200", got)
	}
	if err := mustReturn(t, done); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

func TestServerShutdownTimeout(t *testing.T) {
	store := newBlockingSearcher(t)
	srv, err := server.Listen(server.Config{Addr: "127.0.0.1:0", Handler: server.New(searching(store.Search)),
		Logger: testLogger(t), ShutdownTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := startServe(ctx, srv)

	go func() {
		resp, err := http.Get("http://" + srv.Addr() + "/search?q=ist")
		if err == nil { // the connection is cut, so this is not expected
			resp.Body.Close()
		}
	}()
	<-store.entered
	cancel()

	err = mustReturn(t, done)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "shut down server on "+srv.Addr()+": ") {
		t.Errorf("Serve = %v, want a shutdown error wrapping context.DeadlineExceeded", err)
	}
}

func TestServerAddressInUse(t *testing.T) {
	first := mustListen(t, server.New(unreachable(t)))
	t.Cleanup(func() { first.Close() })

	_, err := server.Listen(server.Config{Addr: first.Addr(), Handler: server.New(unreachable(t))})
	want := fmt.Sprintf("listen on %s: %v", first.Addr(), syscall.EADDRINUSE)
	if err == nil || err.Error() != want {
		t.Errorf("Listen = %v, want %q", err, want)
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("Listen = %v, want it to wrap syscall.EADDRINUSE", err)
	}
}

func TestServerServeStopsWhenContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	srv := mustListen(t, server.New(unreachable(t)))
	if err := srv.Serve(ctx); err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

func TestServerMisuse(t *testing.T) {
	t.Run("no handler", func(t *testing.T) {
		if _, err := server.Listen(server.Config{Addr: "127.0.0.1:0"}); err == nil {
			t.Error("Listen without a handler = nil, want an error")
		}
	})
	t.Run("Close without Serve frees the port", func(t *testing.T) {
		srv := mustListen(t, server.New(unreachable(t)))
		addr := srv.Addr()
		if err := srv.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
		again, err := server.Listen(server.Config{Addr: addr, Handler: server.New(unreachable(t))})
		if err != nil {
			t.Fatalf("listen again after Close: %v", err)
		}
		again.Close()
	})
}

func TestServerListenErrorsNameTheAddress(t *testing.T) {
	_, err := server.Listen(server.Config{Addr: "127.0.0.1:99999", Handler: server.New(unreachable(t))})
	const want = "listen on 127.0.0.1:99999: address 99999: invalid port"
	if err == nil || err.Error() != want {
		t.Errorf("Listen = %v, want %q", err, want)
	}
}
