// Package limiter throttles each client of the HTTP API with a sliding window
// and answers the requests over its limit with 429 Too Many Requests.
//
// # The window
//
// A Policy allows Max requests per Window. For every client a Store keeps the
// times of its last Max accepted requests. A request is accepted when fewer
// than Max are kept, or when the oldest of them is at least Window old; that
// oldest time is then dropped and the new one kept. A rejected request is not
// kept, so a client that retries while blocked is not blocked any longer for
// it: its next request passes as soon as its oldest accepted one leaves the
// window.
//
// Unlike a counter reset every Window, the window slides, so a client never
// gets 2×Max requests through by straddling a reset.
//
// # Searches, not keystrokes
//
// With WithSessions the Limiter counts searches instead of requests: the
// requests of one typing session (a person typing a name letter by letter,
// each letter a request) count as one search, the first, and the others
// pass without being recorded, as long as each comes within a short gap of
// the one before and extends, or deletes back, the same text. A
// SessionStore decides it; see Sessions for the rule and its caps.
//
// # Clients
//
// A KeyFunc names the client a request counts against. The default,
// ClientIP with no trusted proxies, is the connection's peer address, with
// IPv6 addresses grouped by their /64 network; NewClientIP trusts
// X-Forwarded-For from configured reverse proxies.
//
// # Responses
//
// The Middleware puts the IETF RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers) on every response it decides,
// answers the requests over the limit with 429 and Retry-After, and, when its
// Store fails, lets requests through (or answers 503 with WithFailClosed).
// The package has no words of its own for people: the JSON bodies of the 429
// and 503 answers carry the caller's (WithLimitMessage,
// WithUnavailableMessage), and the status text of HTTP until it gives some.
//
// # Backends
//
// Store is the seam between the window and where it lives. The memory
// sub-package keeps windows in process, for one server; the redis
// sub-package keeps them in Redis (one server, a Cluster or behind Sentinel),
// so that every replica of the server shares one window per client. Both
// pass the conformance suite, storetest. A Store that depends on a service
// also implements Pinger, so that its caller can check on it.
package limiter

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store keeps the sliding window of every client. Implementations are safe
// for concurrent use: deciding on a request and recording it happen as one
// step, so concurrent requests of one client never get more than Max accepted
// between them.
type Store interface {
	// Allow decides on one request of client key under policy p, at the
	// store's current time, and records the request if it is accepted.
	//
	// The store keeps at most p.Max times per client: when a call brings a
	// smaller Max than earlier calls, only the newest times count.
	//
	// Errors: ErrInvalidPolicy (wrapped) when p fails Validate; any other
	// error means the store could not decide (a backing service is down, ctx
	// ended). The Limiter lets a request through when Allow fails, so a broken
	// store never takes the API down with it.
	Allow(ctx context.Context, key string, p Policy) (Decision, error)
}

// Pinger is implemented by a Store that lives in a service it can check
// without deciding on a request, such as the redis sub-package's Store. The
// Limiter never pings; its caller may, for a readiness check or a warning at
// start. Ping returns nil when the store can decide right now, and otherwise
// an error that says why. The error may name the service's hosts but never
// its credentials, so that it is safe to log and to show. Ping gives up when
// ctx ends.
type Pinger interface {
	Ping(ctx context.Context) error
}

// ErrInvalidPolicy means a Policy cannot limit anything as given.
var ErrInvalidPolicy = errors.New("invalid rate limit policy")

// Policy allows each client Max requests in any span of Window.
type Policy struct {
	// Max is how many requests a client may make per window, at least 1.
	Max int
	// Window is the span the requests are counted over, more than 0.
	Window time.Duration
}

// Validate checks that p can be enforced.
func (p Policy) Validate() error {
	if p.Max < 1 {
		return fmt.Errorf("%w: max %d is below 1", ErrInvalidPolicy, p.Max)
	}
	if p.Window <= 0 {
		return fmt.Errorf("%w: window %s is not positive", ErrInvalidPolicy, p.Window)
	}
	return nil
}

// Decision is a Store's verdict on one request, seen at the instant it was
// made.
type Decision struct {
	// Allowed reports whether the request was accepted (and recorded).
	Allowed bool
	// Remaining is how many more requests the client could make at this
	// instant, after this one.
	Remaining int
	// RetryAfter is how long until the client's next request would be
	// accepted: the time until its oldest kept request leaves the window. It
	// is 0 when Remaining > 0, and always more than 0 for a rejected request.
	RetryAfter time.Duration
	// NextSlot is how long until one more request would be accepted than
	// Remaining says: the time until the oldest kept request that is still
	// inside the window leaves it. It equals RetryAfter when Remaining is 0,
	// and is 0 only when no kept request is inside the window.
	NextSlot time.Duration
	// Reset is how long until every kept request of the client has left the
	// window, so that Max requests would be accepted again. After an accepted
	// request it is the whole Window.
	Reset time.Duration
	// Continued reports that the request continued its client's typing
	// session (see Sessions): it was allowed without being recorded.
	Continued bool
}
