package limiter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Search is what a request asks for, as far as typing sessions go (see
// Sessions): the text a person has typed so far and where it is looked for.
type Search struct {
	// Scope is where the text is searched (a dataset): a request of another
	// scope never continues a session.
	Scope string
	// Text is the query, folded so that two ways of typing one text are
	// equal and a text typed further starts with the text before it.
	Text string
}

// SearchFunc tells what a request searches for.
type SearchFunc func(r *http.Request) Search

// Default session settings (see Sessions).
const (
	// DefaultSessionGap is the idle time that ends a typing session: a
	// person types the next letter of a name well within it, and pauses
	// longer before another name.
	DefaultSessionGap = 2 * time.Second
	// DefaultSessionRequests is the most requests one search may take:
	// twice the letters of a long name ("rio de janeiro" has 14), so that
	// corrections fit.
	DefaultSessionRequests = 32
	// DefaultSessionLength is the longest text a session may reach, in
	// bytes of the folded text: longer than nearly every city name with
	// its region and country.
	DefaultSessionLength = 64
)

// Sessions is the rule that counts searches instead of requests: a typing
// session is one search, however many requests it takes.
//
// A request continues its client's current session, and is not counted,
// when all of these hold:
//
//   - the session's last request was less than Gap ago;
//   - it has the session's Scope;
//   - its Text starts with the session's first text, and either extends
//     the session's last text or is a prefix of it (letters deleted), but is
//     not the last text itself (a repeat is a new search);
//   - the session has taken fewer than MaxRequests requests, and Text is at
//     most MaxLength bytes long.
//
// Any other request is a new search and counts against the Policy like a
// request without sessions; when the window accepts it, it starts the
// client's session, with its Text as the session's first. A rejected request
// leaves the session as it was.
//
// The caps keep the rule from being a way around the limit: a client that
// grows one query forever, or walks a tree of prefixes by adding and
// deleting letters, starts a new search every MaxRequests requests, and
// counts every request once its text is longer than MaxLength. A session's
// texts all start with its first, so a session reaches no city that its
// first text does not match.
type Sessions struct {
	// Gap is the idle time after which the next request starts a new
	// search, more than 0.
	Gap time.Duration
	// MaxRequests is the most requests one session takes, at least 1 (1:
	// every request counts).
	MaxRequests int
	// MaxLength is the longest Text that continues or starts a session, in
	// bytes, at least 1.
	MaxLength int
}

// DefaultSessions returns the default session rule.
func DefaultSessions() Sessions {
	return Sessions{Gap: DefaultSessionGap, MaxRequests: DefaultSessionRequests, MaxLength: DefaultSessionLength}
}

// ErrInvalidSessions means a Sessions rule cannot be enforced as given.
var ErrInvalidSessions = errors.New("invalid typing session rule")

// Validate checks that s can be enforced.
func (s Sessions) Validate() error {
	switch {
	case s.Gap <= 0:
		return fmt.Errorf("%w: gap %s is not positive", ErrInvalidSessions, s.Gap)
	case s.MaxRequests < 1:
		return fmt.Errorf("%w: max requests %d is below 1", ErrInvalidSessions, s.MaxRequests)
	case s.MaxLength < 1:
		return fmt.Errorf("%w: max length %d is below 1", ErrInvalidSessions, s.MaxLength)
	}
	return nil
}

// MaxSessionScope bounds a session's Scope, in bytes: a scope is a dataset
// name, and one longer than this is none, so it starts no session that a
// store must keep.
const MaxSessionScope = 64

// Session is one client's current typing session, as a SessionStore keeps
// it. The zero value is no session.
type Session struct {
	Scope string
	First string // the text that started the session
	Last  string // the text of its last request
	// Requests is how many requests the session has taken, 0 for none.
	Requests int
	// At is the time of its last request, in the store's own units.
	At int64
}

// Continues reports whether a request searching for s at now (in the
// units of Session.At, gap in the same) continues the session under rule.
func (ss Session) Continues(s Search, now, gap int64, rule Sessions) bool {
	return ss.Requests > 0 && ss.Requests < rule.MaxRequests &&
		now-ss.At < gap && s.Scope == ss.Scope &&
		len(s.Text) <= rule.MaxLength && s.Text != ss.Last &&
		strings.HasPrefix(s.Text, ss.First) &&
		(strings.HasPrefix(s.Text, ss.Last) || strings.HasPrefix(ss.Last, s.Text))
}

// Next returns the session after a request searching for s at now, which
// continued the session (continued) or was accepted as a new search.
func (ss Session) Next(s Search, now int64, continued bool, rule Sessions) Session {
	if continued {
		ss.Last, ss.Requests, ss.At = s.Text, ss.Requests+1, now
		return ss
	}
	if len(s.Text) > rule.MaxLength || len(s.Scope) > MaxSessionScope {
		return Session{} // nothing can continue it: keep nothing
	}
	return Session{Scope: s.Scope, First: s.Text, Last: s.Text, Requests: 1, At: now}
}

// SessionStore is a Store that also counts searches by typing session
// (see Sessions). Like Allow, AllowSearch decides and records as one step,
// so concurrent requests of one client never get more than p.Max searches
// accepted in a window, and replicas sharing the store share the client's
// session: a session that moves between them continues.
type SessionStore interface {
	Store
	// AllowSearch decides on one request of client key that searches for
	// s: it continues the client's session under rule (Decision.Continued,
	// always allowed, not recorded in the window), or is decided as Allow
	// decides, and when accepted starts the client's new session. The
	// Decision describes the window after the request, in searches.
	//
	// Errors: ErrInvalidPolicy or ErrInvalidSessions (wrapped) for a
	// policy or rule that fails Validate, and otherwise as Allow's.
	AllowSearch(ctx context.Context, key string, s Search, p Policy, rule Sessions) (Decision, error)
}

// WithSessions makes the Limiter count searches, not requests: a request
// that continues its client's typing session (see Sessions) passes without
// counting. searchOf tells what each request searches for. The store given
// to New must be a SessionStore.
func WithSessions(searchOf SearchFunc, rule Sessions) Option {
	return func(l *Limiter) {
		l.searchOf, l.sessions = searchOf, rule
	}
}

// allowSearch decides on r under the session rule.
func (l *Limiter) allowSearch(ctx context.Context, r *http.Request) (Decision, error) {
	return l.sessionStore.AllowSearch(ctx, l.key(r), l.searchOf(r), l.policy, l.sessions)
}
