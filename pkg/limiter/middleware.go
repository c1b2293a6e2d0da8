package limiter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// KeyFunc names the client a request counts against. Requests whose key is
// "" share one window.
type KeyFunc func(r *http.Request) string

// RemoteIP is the default KeyFunc: the IP address of the connection's peer,
// without its port ("192.0.2.1", "2001:db8::1"). Proxy headers such as
// X-Forwarded-For are ignored because any client can forge them; behind a
// reverse proxy all clients therefore share the proxy's window, and trusting
// its headers takes a KeyFunc that knows which peers are proxies.
func RemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		// No port, as in some tests and non-TCP listeners: the address is
		// the best key there is.
		return r.RemoteAddr
	}
	return host
}

// Limiter is HTTP middleware that enforces one Policy per client.
type Limiter struct {
	store  Store
	policy Policy
	key    KeyFunc
	log    *slog.Logger
	now    func() time.Time
	body   []byte // the 429 body, built once

	// Store errors are logged at most once per errorLogEvery; the ones in
	// between are only counted, so a dead store cannot flood the log.
	nextErrorLog atomic.Int64 // Unix nanoseconds
	quietErrors  atomic.Int64
}

// errorLogEvery is the least time between two logged store errors.
const errorLogEvery = time.Second

// Option configures a Limiter.
type Option func(*Limiter)

// WithKeyFunc sets how requests are grouped into clients (default RemoteIP).
func WithKeyFunc(key KeyFunc) Option {
	return func(l *Limiter) {
		if key != nil {
			l.key = key
		}
	}
}

// WithLogger sets where store errors are logged (default slog.Default()).
func WithLogger(log *slog.Logger) Option {
	return func(l *Limiter) {
		if log != nil {
			l.log = log
		}
	}
}

// New returns a Limiter that keeps its windows in store and enforces p.
func New(store Store, p Policy, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("new limiter: nil store")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("new limiter: %w", err)
	}
	body, err := json.Marshal(struct {
		Message string `json:"message"`
	}{p.Message()})
	if err != nil {
		return nil, fmt.Errorf("new limiter: encode 429 body: %w", err)
	}
	l := &Limiter{
		store:  store,
		policy: p,
		key:    RemoteIP,
		log:    slog.Default(),
		now:    time.Now,
		body:   body,
	}
	for _, opt := range opts {
		opt(l)
	}
	return l, nil
}

// Middleware passes the requests that the policy allows on to next and
// answers the others with 429, a JSON message and Retry-After. When the store
// fails, requests go through: a rate limit is not worth an outage.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := l.store.Allow(r.Context(), l.key(r), l.policy)
		if err != nil {
			l.storeFailed(r.Context(), err)
			next.ServeHTTP(w, r)
			return
		}
		if !d.Allowed {
			l.reject(w, d)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// reject writes the 429 response for a rejected decision.
func (l *Limiter) reject(w http.ResponseWriter, d Decision) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Retry-After", strconv.FormatInt(retryAfterSeconds(d.RetryAfter), 10))
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write(l.body) // the client is gone if this fails; nothing to do
}

// retryAfterSeconds rounds d up to whole seconds, at least 1: a client that
// waits that long is never turned away again for being early.
func retryAfterSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return max(s, 1)
}

// storeFailed logs err unless another store error was logged less than
// errorLogEvery ago; the next log line says how many went unlogged.
func (l *Limiter) storeFailed(ctx context.Context, err error) {
	now := l.now().UnixNano()
	next := l.nextErrorLog.Load()
	if now < next || !l.nextErrorLog.CompareAndSwap(next, now+int64(errorLogEvery)) {
		l.quietErrors.Add(1)
		return
	}
	l.log.LogAttrs(ctx, slog.LevelError, "rate limit store failed, letting requests through",
		slog.Any("err", err),
		slog.Int64("unlogged", l.quietErrors.Swap(0)))
}
