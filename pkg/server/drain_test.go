package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// Once its context is done, a draining server answers /readyz with 503 at
// once and every other request as before, with Connection: close, until
// the drain is cut short; then it shuts down.
func TestServeDrains(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	cut := make(chan struct{})
	srv, err := server.Listen(server.Config{Addr: "127.0.0.1:0", Handler: h, Logger: testLogger(t), DrainDelay: time.Hour, DrainCut: cut})
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + srv.Addr()
	ctx, cancel := context.WithCancel(t.Context())
	done := startServe(ctx, srv)
	if resp, body := mustGet(t, http.MethodGet, base+"/readyz"); resp.StatusCode != http.StatusOK || body != "ok" {
		t.Fatalf("GET /readyz before the drain = %d %s, want the handler's 200", resp.StatusCode, body)
	}

	cancel()
	poll.UntilNil(t, 5*time.Second, func() error {
		resp, body := mustGet(t, http.MethodGet, base+"/readyz")
		if resp.StatusCode != http.StatusServiceUnavailable {
			return fmt.Errorf("GET /readyz answers %d after the context ended", resp.StatusCode)
		}
		if body != `{"status":"draining"}` || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET /readyz while draining = %s %v", body, resp.Header)
		}
		return nil
	})
	resp, body := mustGet(t, http.MethodGet, base+"/search?q=par")
	if resp.StatusCode != http.StatusOK || body != "ok" || !resp.Close {
		t.Errorf("GET /search while draining = %d %s (Connection: close %v), want the handler's 200 closing the connection",
			resp.StatusCode, body, resp.Close)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned during the drain: %v", err)
	default:
	}
	close(cut)
	if err := mustReturn(t, done); err != nil {
		t.Errorf("Serve after the drain: %v", err)
	}
}

// Without a drain delay Serve shuts down as soon as its context is done.
func TestServeWithoutDrain(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	srv, err := server.Listen(server.Config{Addr: "127.0.0.1:0", Handler: h, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := startServe(ctx, srv)
	cancel()
	if err := mustReturn(t, done); err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// Past the drain delay a server keeps accepting while clients keep opening
// connections, and closes its listener once they have stopped: none of
// them is refused, reset or cut.
func TestServeKeepsAcceptingUntilClientsStop(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	srv, err := server.Listen(server.Config{Addr: "127.0.0.1:0", Handler: h, Logger: testLogger(t), DrainDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr() + "/search?q=par"
	ctx, cancel := context.WithCancel(t.Context())
	done := startServe(ctx, srv)
	stop := make(chan struct{})
	var (
		wg       sync.WaitGroup
		failures atomic.Int64
		answered atomic.Int64
		first    atomic.Pointer[error]
	)
	for range 8 {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(url)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err != nil {
					failures.Add(1)
					first.CompareAndSwap(nil, &err)
					continue
				}
				answered.Add(1)
			}
		})
	}
	poll.Until(t, 5*time.Second, "the clients to be answered", func() bool { return answered.Load() > 100 })
	cancel()
	time.Sleep(300 * time.Millisecond) // six drain delays of clients that keep coming
	select {
	case err := <-done:
		t.Fatalf("Serve returned while clients were still connecting: %v", err)
	default:
	}
	close(stop)
	wg.Wait()
	if err := mustReturn(t, done); err != nil {
		t.Errorf("Serve: %v", err)
	}
	if n := failures.Load(); n > 0 {
		t.Errorf("%d of %d requests failed during the drain, the first: %v", n, n+answered.Load(), *first.Load())
	}
}
