package server

import "time"

// Limits are the timeouts and the header size limit of the http.Server
// that runs the handler. DefaultLimits gives the values Listen uses.
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

// DefaultLimits returns the limits Listen applies unless told otherwise:
// tight, because an autocomplete request and its answer are small and quick.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      15 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// withDefaults returns l with DefaultLimits' value in every zero or
// negative field: net/http reads a zero as "no limit", which a server
// facing the internet must never have.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = d.ReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = d.ReadTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}
