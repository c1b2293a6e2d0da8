// Package server is cityfinder's HTTP API: the handler that answers
// autocomplete queries through a search.Service, and the Server that runs
// it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"
)

// DefaultShutdownTimeout is how long Serve waits for requests in flight
// once its context is done, when Config.ShutdownTimeout is zero.
const DefaultShutdownTimeout = 10 * time.Second

// Config says how a Server runs a handler. Zero fields take defaults.
type Config struct {
	// Addr is the TCP address to listen on, "host:port"; port 0 picks a
	// free port (see Server.Addr).
	Addr string
	// Handler answers the requests, typically New's.
	Handler http.Handler
	// Limits are the http.Server's timeouts and header limit; a zero or
	// negative field keeps DefaultLimits' value.
	Limits Limits
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// once its context is done; DefaultShutdownTimeout when zero.
	ShutdownTimeout time.Duration
	// DrainDelay makes Serve drain before it shuts down: once its context
	// is done, GET /readyz answers 503 {"status":"draining"} at once, so
	// that load balancers stop sending, while every other request is still
	// answered (with Connection: close, so that clients move their next
	// request elsewhere) and new connections are still accepted. After
	// DrainDelay Serve goes on accepting until none of its connections is
	// busy and no new one has come for 100 ms (a load balancer slower to
	// notice than DrainDelay still gets answers, not resets: the kernel
	// resets the connections queued on a listener that closes), at most
	// ShutdownTimeout; then, or as soon as DrainCut is closed (a second
	// signal), it shuts down gracefully. Zero or less shuts down at once; a
	// nil DrainCut never closes.
	DrainDelay time.Duration
	DrainCut   <-chan struct{}
	// Logger hears of the server's life and of net/http's errors; records
	// carry component=server. Nothing is logged when it is nil.
	Logger *slog.Logger
}

// Server runs a handler on a TCP address: Listen binds it, Serve answers
// until its context is done, then drains and shuts down gracefully.
type Server struct {
	cfg        Config
	logger     *slog.Logger
	httpServer *http.Server
	ln         net.Listener
	draining   atomic.Bool
	conns      connTracker // what the drain waits for (drain.go)
}

// Listen binds cfg.Addr and returns the Server that will serve on it, so
// that a port in use fails here, at once, rather than in Serve.
func Listen(cfg Config) (*Server, error) {
	if cfg.Handler == nil {
		return nil, errors.New("listen: no handler")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "server")
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	l := cfg.Limits.withDefaults()
	s := &Server{
		cfg:    cfg,
		logger: logger,
		httpServer: &http.Server{
			ReadHeaderTimeout: l.ReadHeaderTimeout,
			ReadTimeout:       l.ReadTimeout,
			WriteTimeout:      l.WriteTimeout,
			IdleTimeout:       l.IdleTimeout,
			MaxHeaderBytes:    l.MaxHeaderBytes,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}
	s.httpServer.ConnState = s.conns.track
	s.httpServer.Handler = s.drainAware(cfg.Handler)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, listenCause(err))
	}
	s.ln = ln
	return s, nil
}

// listenCause strips the "listen tcp ADDR: bind: " prefixes that net adds,
// which repeat what Listen's own message says; the chain below them (for
// example syscall.EADDRINUSE) stays.
func listenCause(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		err = op.Err
	}
	var sys *os.SyscallError
	if errors.As(err, &sys) {
		err = sys.Err
	}
	return err
}

// Addr returns the address the server listens on, with the port chosen when
// it asked for port 0.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers requests on the address bound by Listen until ctx is done,
// then drains (see Config.DrainDelay) and shuts down: it stops accepting,
// waits for the requests in flight, up to ShutdownTimeout after the drain
// delay, and returns nil once they are answered. If they are not answered
// in time it closes their connections and returns an error.
func (s *Server) Serve(ctx context.Context) error {
	addr := s.Addr()
	errc := make(chan error, 1)
	go func() { errc <- s.httpServer.Serve(s.ln) }()
	s.logger.Info("listening", slog.String("addr", addr))

	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := s.drain(context.WithoutCancel(ctx), addr)
	defer cancel()
	s.logger.Info("shutting down", slog.String("addr", addr), slog.Duration("timeout", s.cfg.ShutdownTimeout))
	if err := s.httpServer.Shutdown(shutdownCtx); err != nil {
		_ = s.httpServer.Close() // the requests still running lose their connections
		<-errc
		return fmt.Errorf("shut down server on %s: %w", addr, err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve on %s: %w", addr, err)
	}
	s.logger.Info("stopped", slog.String("addr", addr))
	return nil
}

// Close stops the server at once: it closes the listener and every
// connection without waiting for requests in flight. It is for a server
// that was made to Listen but will not Serve; Serve shuts down gracefully
// by itself when its context is done.
func (s *Server) Close() error {
	err := s.httpServer.Close()
	if lerr := s.ln.Close(); lerr != nil && !errors.Is(lerr, net.ErrClosed) && err == nil {
		err = lerr
	}
	if err != nil {
		return fmt.Errorf("close server on %s: %w", s.cfg.Addr, err)
	}
	return nil
}
