// Package server is cityfinder's HTTP API: the handler that answers
// autocomplete queries from a search.Searcher, and the Server that runs it.
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
// once its context is done, when Server.ShutdownTimeout is zero.
const DefaultShutdownTimeout = 10 * time.Second

// Timeouts and limits of the HTTP server. An autocomplete answer is small
// and quick, so they are tight enough to shed slow or stuck clients.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 10 * time.Second
	writeTimeout      = 15 * time.Second
	idleTimeout       = 60 * time.Second
	maxHeaderBytes    = 64 << 10
)

// Server runs a handler on a TCP address: Listen, then Serve until the
// context is done, then shut down gracefully. Run does both.
type Server struct {
	// ShutdownTimeout bounds how long Serve waits for requests in flight
	// once its context is done; DefaultShutdownTimeout when zero.
	ShutdownTimeout time.Duration

	addr       string
	logger     *slog.Logger
	httpServer *http.Server
	ln         net.Listener // set by Listen

	drainDelay time.Duration   // see WithDrain
	drainCut   <-chan struct{} // see WithDrain
	draining   atomic.Bool
}

// NewServer returns a Server that will serve h on addr ("host:port"; port 0
// picks a free port, see Addr). A nil logger logs nothing; records carry
// component=server. Options such as WithLimits tune the http.Server.
func NewServer(addr string, h http.Handler, logger *slog.Logger, opts ...ServerOption) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "server")
	s := &Server{
		addr:   addr,
		logger: logger,
		httpServer: &http.Server{
			ReadHeaderTimeout: readHeaderTimeout,
			ReadTimeout:       readTimeout,
			WriteTimeout:      writeTimeout,
			IdleTimeout:       idleTimeout,
			MaxHeaderBytes:    maxHeaderBytes,
			ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		},
	}
	s.httpServer.Handler = s.drainAware(h)
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Listen binds the server's address, so that a port in use fails here, at
// once, rather than in Serve. After it, Addr tells the bound address.
func (s *Server) Listen() error {
	if s.ln != nil {
		return fmt.Errorf("listen on %s: already listening on %s", s.addr, s.ln.Addr())
	}
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.addr, listenCause(err))
	}
	s.ln = ln
	return nil
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
// it asked for port 0; "" before Listen.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Serve answers requests on the address bound by Listen until ctx is done,
// then drains (see WithDrain) and shuts down: it stops accepting, waits up
// to ShutdownTimeout for the requests in flight, and returns nil once they
// are answered. If they are
// not answered in time it closes their connections and returns an error.
func (s *Server) Serve(ctx context.Context) error {
	if s.ln == nil {
		return errors.New("serve: Listen was not called")
	}
	addr := s.Addr()
	errc := make(chan error, 1)
	go func() { errc <- s.httpServer.Serve(s.ln) }()
	s.logger.Info("listening", slog.String("addr", addr))

	select {
	case err := <-errc:
		return fmt.Errorf("serve on %s: %w", addr, err)
	case <-ctx.Done():
	}
	s.drain(addr)

	timeout := s.ShutdownTimeout
	if timeout <= 0 {
		timeout = DefaultShutdownTimeout
	}
	s.logger.Info("shutting down", slog.String("addr", addr), slog.Duration("timeout", timeout))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
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

// Run listens, then serves until ctx is done (see Listen and Serve).
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Close stops the server at once: it closes the listener and every
// connection without waiting for requests in flight. It is for a server
// that was made to Listen but will not Serve, and for tests; Serve shuts
// down gracefully by itself when its context is done.
func (s *Server) Close() error {
	err := s.httpServer.Close()
	if s.ln != nil {
		if lerr := s.ln.Close(); lerr != nil && !errors.Is(lerr, net.ErrClosed) && err == nil {
			err = lerr
		}
	}
	if err != nil {
		return fmt.Errorf("close server on %s: %w", s.addr, err)
	}
	return nil
}
