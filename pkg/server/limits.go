package server

import "time"

// ServerOption configures a Server made by NewServer.
type ServerOption func(*Server)

// Limits are the timeouts and the header size limit of the http.Server
// that runs the handler. DefaultLimits gives the values NewServer uses.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's line and headers.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the request headers to
	// the end of the response.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers together: a
	// longer URL or larger headers get 431 Request Header Fields Too Large
	// from net/http, before any handler runs.
	MaxHeaderBytes int
}

// DefaultLimits returns the limits NewServer applies unless told otherwise:
// tight, because an autocomplete request and its answer are small and quick.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
	}
}

// WithLimits sets the server's timeouts and header limit. A zero or
// negative field keeps its default: net/http reads a zero as "no limit",
// which a server facing the internet must never have.
func WithLimits(l Limits) ServerOption {
	return func(s *Server) {
		hs := s.httpServer
		if l.ReadHeaderTimeout > 0 {
			hs.ReadHeaderTimeout = l.ReadHeaderTimeout
		}
		if l.ReadTimeout > 0 {
			hs.ReadTimeout = l.ReadTimeout
		}
		if l.WriteTimeout > 0 {
			hs.WriteTimeout = l.WriteTimeout
		}
		if l.IdleTimeout > 0 {
			hs.IdleTimeout = l.IdleTimeout
		}
		if l.MaxHeaderBytes > 0 {
			hs.MaxHeaderBytes = l.MaxHeaderBytes
		}
	}
}

// Limits returns the limits the server applies.
func (s *Server) Limits() Limits {
	hs := s.httpServer
	return Limits{
		ReadHeaderTimeout: hs.ReadHeaderTimeout,
		ReadTimeout:       hs.ReadTimeout,
		WriteTimeout:      hs.WriteTimeout,
		IdleTimeout:       hs.IdleTimeout,
		MaxHeaderBytes:    hs.MaxHeaderBytes,
	}
}
