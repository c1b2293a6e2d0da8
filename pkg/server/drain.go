package server

import (
	"net/http"
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
		w.Header()["Cache-Control"] = noStore
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(`{"status":"draining"}`))
		}
	})
}

// drain turns the server's readiness off and waits out the drain delay
// (see Config.DrainDelay), or until the drain is cut short.
func (s *Server) drain(addr string) {
	delay := s.cfg.DrainDelay
	if delay <= 0 {
		return
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
	}
}
