package server

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// DefaultDrainDelay is a drain long enough for a load balancer that probes
// /readyz every second or two to see it fail and stop sending.
const DefaultDrainDelay = 5 * time.Second

// readyzPath is the readiness route, which a draining Server answers itself.
const readyzPath = "/readyz"

// drainAware wraps the handler: while the server drains it answers
// readiness probes with 503 and asks clients to close their connections.
func (s *Server) drainAware(h http.Handler) http.Handler {
	notReady := observed(http.HandlerFunc(answerDraining))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.draining.Load() {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Connection", "close")
		if r.URL.Path != readyzPath || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			h.ServeHTTP(w, r)
			return
		}
		notReady.ServeHTTP(w, r)
	})
}

// answerDraining answers a readiness probe while the server drains.
func answerDraining(w http.ResponseWriter, r *http.Request) {
	w.Header()["Cache-Control"] = noStore
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method == http.MethodGet {
		_, _ = w.Write([]byte(`{"status":"draining"}`))
	}
}

// drainQuiet is how long the listener must have had no new connection, with
// none of its connections busy, before a drained Server closes it: the
// kernel resets the connections still queued when a listener closes, so
// while clients keep coming (a load balancer that has not yet seen /readyz
// fail) serve keeps answering them.
const drainQuiet = 100 * time.Millisecond

// drainPoll is how often the drain looks whether it may close the listener.
const drainPoll = 10 * time.Millisecond

// drain turns the server's readiness off and waits out the drain delay
// (see Config.DrainDelay), then keeps accepting until no connection is
// busy and none has come for drainQuiet; or stops at once when the drain is
// cut short. It returns the context of the shutdown that follows: its
// ShutdownTimeout is counted from the end of the delay, and bounds the
// wait for quiet too.
func (s *Server) drain(ctx context.Context, addr string) (context.Context, context.CancelFunc) {
	delay := s.cfg.DrainDelay
	if delay <= 0 {
		return context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	}
	s.draining.Store(true)
	s.logger.Info("draining: /readyz answers 503 while requests are still served",
		"addr", addr, "delay", delay)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.cfg.DrainCut:
		s.logger.Info("drain cut short by a second signal", "addr", addr)
		return context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	}
	shutdownCtx, cancel := context.WithTimeout(ctx, s.cfg.ShutdownTimeout)
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for !s.conns.quiet(time.Now(), drainQuiet) {
		select {
		case <-tick.C:
		case <-s.cfg.DrainCut:
			s.logger.Info("drain cut short by a second signal", "addr", addr)
			return shutdownCtx, cancel
		case <-shutdownCtx.Done():
			return shutdownCtx, cancel
		}
	}
	return shutdownCtx, cancel
}

// connTracker counts the server's busy connections (accepted and not yet
// idle: a request on its way or being answered) and remembers when the
// last one was accepted, from http.Server's ConnState.
type connTracker struct {
	mu       sync.Mutex
	busy     map[net.Conn]bool
	accepted time.Time
}

// track is the http.Server's ConnState.
func (c *connTracker) track(conn net.Conn, state http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch state {
	case http.StateNew:
		c.accepted = time.Now()
		fallthrough
	case http.StateActive:
		if c.busy == nil {
			c.busy = make(map[net.Conn]bool)
		}
		c.busy[conn] = true
	default: // idle, hijacked or closed
		delete(c.busy, conn)
	}
}

// quiet reports whether no connection is busy at now and none has been
// accepted for the last d.
func (c *connTracker) quiet(now time.Time, d time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.busy) == 0 && now.Sub(c.accepted) >= d
}
