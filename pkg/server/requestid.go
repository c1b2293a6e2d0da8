package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// headerRequestID carries a request's id, both ways.
const headerRequestID = "X-Request-Id"

// maxRequestIDLen bounds a client's request id: a UUID is 36 characters, a
// W3C trace id 32.
const maxRequestIDLen = 64

// stateKey is the context key of a request's state.
type stateKey struct{}

// requestState is what the handler learns of a request as it answers it,
// kept by accessLog in the request's context, which it is: one allocation
// holds the context, the id and its header field, and the recorder of the
// response.
type requestState struct {
	context.Context // the request's own, which this one extends
	id              string
	idField         [1]string // the X-Request-Id field, id
	// searched is set once the /search route has the request's dataset
	// parameter, for the metrics (see metrics.observe).
	searched bool
	dataset  search.Dataset
	rec      statusRecorder
	parsed   bool   // params holds the parameters of the request's URL
	params   values // see paramsOf
}

// Value returns the state itself for stateKey, else what the request's
// own context holds for key.
func (st *requestState) Value(key any) any {
	if key == (stateKey{}) {
		return st
	}
	return st.Context.Value(key)
}

// withState returns r with a new state of request id in its context.
func withState(r *http.Request, id string) (*http.Request, *requestState) {
	st := &requestState{Context: r.Context(), id: id}
	st.idField[0] = id
	return r.WithContext(st), st
}

// stateOf returns the state of r; every request that New's handler serves
// has one (see accessLog).
func stateOf(r *http.Request) *requestState {
	st, _ := r.Context().Value(stateKey{}).(*requestState)
	if st == nil {
		return &requestState{Context: r.Context()}
	}
	return st
}

// RequestID returns the id of the request whose context is ctx, as the
// X-Request-Id response header and the logs show it; "" outside a request
// served by New's handler.
func RequestID(ctx context.Context) string {
	if st, _ := ctx.Value(stateKey{}).(*requestState); st != nil {
		return st.id
	}
	return ""
}

// requestIDs makes ids unique to this process: a random prefix drawn at
// start, then a counter. Cheaper than a random id per request, and still
// unique across replicas for any practical purpose (64 random bits).
var requestIDs = struct {
	prefix string
	next   atomic.Uint64
}{prefix: randomPrefix()}

func randomPrefix() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:]) + "-"
}

// requestID returns the id the client sent when it is sane (see
// saneRequestID), else a new one.
func requestID(sent string) string {
	if saneRequestID(sent) {
		return sent
	}
	var buf [48]byte // one allocation: the string
	return string(strconv.AppendUint(append(buf[:0], requestIDs.prefix...), requestIDs.next.Add(1), 36))
}

// saneRequestID reports whether a client's id can go into logs and headers
// as it is: 1 to maxRequestIDLen characters of [A-Za-z0-9._-]. Anything else
// (empty, huge, spaces, quotes, control characters that could forge a log
// line) is replaced, not escaped.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// LogRequestIDs wraps h so that every record logged with a request's
// context carries request_id, so that the access line, the server's own
// errors and those of the middleware (the rate limiter logs with the
// request's context) of one request can be found together. New wraps the
// handler of WithLogger itself; wrapping twice adds the attribute once.
func LogRequestIDs(h slog.Handler) slog.Handler {
	if _, ok := h.(requestIDHandler); ok {
		return h
	}
	return requestIDHandler{h}
}

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
