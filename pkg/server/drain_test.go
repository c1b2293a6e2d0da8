package server_test

import (
	"context"
	"fmt"
	"net/http"
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
