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

// RemoteIP is a KeyFunc that names the client by the IP address of the
// connection's peer, without its port ("192.0.2.1", "2001:db8::1"), as the
// peer wrote it. Proxy headers such as X-Forwarded-For are ignored because
// any client can forge them. ClientIP, the default, also groups IPv6
// addresses by network and trusts the headers of configured proxies.
func RemoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		// No port, as in some tests and non-TCP listeners: the address is
		// the best key there is.
		return r.RemoteAddr
	}
	return host
}

// DefaultPolicyName names the policy in the RateLimit header fields.
const DefaultPolicyName = "search"

// The RateLimit fields, spelt as Go's canonical header keys so that setting
// them does not allocate a canonical copy per request. Header names are
// case-insensitive, and Header.Get("RateLimit-Policy") finds them.
const (
	headerPolicy    = "Ratelimit-Policy"
	headerRateLimit = "Ratelimit"
)

// Limiter is HTTP middleware that enforces one Policy per client.
type Limiter struct {
	store      Store
	policy     Policy
	name       string
	key        KeyFunc
	log        *slog.Logger
	now        func() time.Time
	failClosed bool

	// With WithSessions: what a request searches for, the rule, and the
	// store that decides by it.
	searchOf     SearchFunc
	sessions     Sessions
	sessionStore SessionStore

	// The caller's words for the 429 and 503 answers.
	limitMessage, unavailableMessage string

	// Built once: the 429 and 503 bodies and the RateLimit-Policy field.
	tooMany, unavailable []byte
	policyField          []string // one value, never modified: shared by every response
	rateLimitPrefix      string   // `"search";r=`
	// rateLimitFields holds the RateLimit field of every decision a
	// policy with few of them can make, by Remaining then seconds to the
	// next slot (fieldSeconds+1 of them), shared as policyField is; nil
	// for a policy with more than maxSharedFields.
	rateLimitFields [][]string
	fieldSeconds    int64

	// Store errors are logged at most once per errorLogEvery; the ones in
	// between are only counted, so a dead store cannot flood the log.
	nextErrorLog atomic.Int64 // Unix nanoseconds
	quietErrors  atomic.Int64

	storeErrors atomic.Int64
	failing     atomic.Bool
}

// errorLogEvery is the least time between two logged store errors.
const errorLogEvery = time.Second

// Option configures a Limiter.
type Option func(*Limiter)

// WithKeyFunc sets how requests are grouped into clients (default: the
// peer's address, IPv6 by /64; see ClientIP).
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

// WithFailClosed makes the middleware answer 503 Service Unavailable while
// the store fails, instead of letting requests through unlimited.
func WithFailClosed(failClosed bool) Option {
	return func(l *Limiter) { l.failClosed = failClosed }
}

// WithPolicyName names the policy in the RateLimit header fields (default
// DefaultPolicyName). It must be printable ASCII without '"' or '\'.
func WithPolicyName(name string) Option {
	return func(l *Limiter) { l.name = name }
}

// WithLimitMessage sets what the 429 answer tells a client over the limit,
// as the JSON body {"message": msg}; for example "You can only do 5 searches
// in 3 seconds" (default "Too Many Requests"). The words are the caller's:
// only it knows what its clients are doing.
func WithLimitMessage(msg string) Option {
	return func(l *Limiter) { l.limitMessage = msg }
}

// WithUnavailableMessage sets what the 503 answer given while the store
// fails says, as the JSON body {"message": msg} (default "Service
// Unavailable"). Only a Limiter made WithFailClosed gives that answer.
func WithUnavailableMessage(msg string) Option {
	return func(l *Limiter) { l.unavailableMessage = msg }
}

// New returns a Limiter that keeps its windows in store and enforces p.
func New(store Store, p Policy, opts ...Option) (*Limiter, error) {
	if store == nil {
		return nil, errors.New("new limiter: nil store")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("new limiter: %w", err)
	}
	l := &Limiter{
		store:              store,
		policy:             p,
		name:               DefaultPolicyName,
		log:                slog.Default(),
		now:                time.Now,
		limitMessage:       http.StatusText(http.StatusTooManyRequests),
		unavailableMessage: http.StatusText(http.StatusServiceUnavailable),
	}
	defaultKey, err := NewClientIP(nil, DefaultIPv6Prefix)
	if err != nil {
		return nil, fmt.Errorf("new limiter: %w", err)
	}
	l.key = defaultKey.Key
	for _, opt := range opts {
		opt(l)
	}
	if l.searchOf != nil {
		if err := l.sessions.Validate(); err != nil {
			return nil, fmt.Errorf("new limiter: %w", err)
		}
		ss, ok := store.(SessionStore)
		if !ok {
			return nil, fmt.Errorf("new limiter: %T cannot count typing sessions", store)
		}
		l.sessionStore = ss
	}
	if !validPolicyName(l.name) {
		return nil, fmt.Errorf("new limiter: policy name %q: use printable ASCII without quotes or backslashes", l.name)
	}
	if l.tooMany, err = messageBody(l.limitMessage); err != nil {
		return nil, fmt.Errorf("new limiter: encode 429 body: %w", err)
	}
	if l.unavailable, err = messageBody(l.unavailableMessage); err != nil {
		return nil, fmt.Errorf("new limiter: encode 503 body: %w", err)
	}
	// The fields carry whole seconds; a window of 1.5s is announced as 2,
	// the longest a client may have to wait for its requests to count no more.
	l.policyField = []string{fmt.Sprintf("%q;q=%d;w=%d", l.name, p.Max, ceilSeconds(p.Window))}
	l.rateLimitPrefix = strconv.Quote(l.name) + ";r="
	if l.fieldSeconds = ceilSeconds(p.Window); p.Max < maxSharedFields && l.fieldSeconds < maxSharedFields &&
		int64(p.Max+1)*(l.fieldSeconds+1) <= maxSharedFields {
		for r := range p.Max + 1 {
			for t := range l.fieldSeconds + 1 {
				l.rateLimitFields = append(l.rateLimitFields, []string{l.formatRateLimit(r, t)})
			}
		}
	}
	return l, nil
}

func messageBody(msg string) ([]byte, error) {
	return json.Marshal(struct {
		Message string `json:"message"`
	}{msg})
}

// validPolicyName reports whether name can be written as a structured field
// string without escapes.
func validPolicyName(name string) bool {
	if name == "" {
		return false
	}
	for i := range len(name) {
		if c := name[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Middleware passes the requests that the policy allows on to next and
// answers the others with 429, a JSON message and Retry-After. Every
// response it decides carries the IETF RateLimit fields, for example
//
//	RateLimit-Policy: "search";q=5;w=3
//	RateLimit: "search";r=2;t=3
//
// where r is how many more requests the client could make right now and t
// how many seconds (rounded up) until one more slot frees. With
// WithSessions both count searches: a request that continues a session
// leaves r as it was. When the store
// fails, requests go through with RateLimit-Policy but no RateLimit, since
// nobody knows what remains (a rate limit is not worth an outage), or get
// 503 with WithFailClosed.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		h := w.Header()
		h[headerPolicy] = l.policyField
		var d Decision
		var err error
		if l.sessionStore != nil {
			d, err = l.allowSearch(ctx, r)
		} else {
			d, err = l.store.Allow(ctx, l.key(r), l.policy)
		}
		if err != nil {
			if ctx.Err() != nil {
				return // the client left; it is not the store's fault
			}
			l.storeFailed(ctx, err)
			if l.failClosed {
				l.write(w, http.StatusServiceUnavailable, "1", l.unavailable)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if l.failing.Load() {
			l.storeRecovered(ctx)
		}
		h[headerRateLimit] = l.rateLimitField(d)
		if !d.Allowed {
			l.write(w, http.StatusTooManyRequests, strconv.FormatInt(max(ceilSeconds(d.RetryAfter), 1), 10), l.tooMany)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxSharedFields bounds the RateLimit fields a Limiter makes up front:
// the default policy (5 in 3 s) has 24, each saving every response that
// carries it two allocations.
const maxSharedFields = 4096

// rateLimitField returns the RateLimit field of d.
func (l *Limiter) rateLimitField(d Decision) []string {
	t := ceilSeconds(d.NextSlot)
	if l.rateLimitFields != nil && d.Remaining >= 0 && d.Remaining <= l.policy.Max && t >= 0 && t <= l.fieldSeconds {
		return l.rateLimitFields[int64(d.Remaining)*(l.fieldSeconds+1)+t]
	}
	return []string{l.formatRateLimit(d.Remaining, t)}
}

// formatRateLimit formats the RateLimit field of remaining requests, one
// more in t seconds.
func (l *Limiter) formatRateLimit(remaining int, t int64) string {
	var buf [64]byte
	b := append(buf[:0], l.rateLimitPrefix...)
	b = strconv.AppendInt(b, int64(remaining), 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, t, 10)
	return string(b)
}

// write answers the request itself, with a JSON message and Retry-After.
func (l *Limiter) write(w http.ResponseWriter, status int, retryAfter string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Retry-After", retryAfter)
	w.WriteHeader(status)
	_, _ = w.Write(body) // the client is gone if this fails; nothing to do
}

// ceilSeconds rounds d up to whole seconds: a client that waits that long is
// never turned away again for being early.
func ceilSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return s
}

// StoreErrors returns how many decisions the store has failed since the
// Limiter was made, for health checks and metrics.
func (l *Limiter) StoreErrors() int64 {
	return l.storeErrors.Load()
}

// storeFailed records err, and logs it unless another store error was
// logged less than errorLogEvery ago; the next log line says how many went
// unlogged.
func (l *Limiter) storeFailed(ctx context.Context, err error) {
	l.storeErrors.Add(1)
	l.failing.Store(true)
	now := l.now().UnixNano()
	next := l.nextErrorLog.Load()
	if now < next || !l.nextErrorLog.CompareAndSwap(next, now+int64(errorLogEvery)) {
		l.quietErrors.Add(1)
		return
	}
	msg := "rate limit store failed, letting requests through"
	if l.failClosed {
		msg = "rate limit store failed, answering 503"
	}
	l.log.LogAttrs(ctx, slog.LevelError, msg,
		slog.Any("err", err),
		slog.Int64("unlogged", l.quietErrors.Swap(0)))
}

// storeRecovered logs, once, that the store decides again after failing.
func (l *Limiter) storeRecovered(ctx context.Context) {
	if !l.failing.CompareAndSwap(true, false) {
		return
	}
	l.log.LogAttrs(ctx, slog.LevelInfo, "rate limit store recovered",
		slog.Int64("errors", l.storeErrors.Load()),
		slog.Int64("unlogged", l.quietErrors.Swap(0)))
}
