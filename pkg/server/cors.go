package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// searchMethods are the methods /search answers, for Allow and preflights.
const searchMethods = "GET, HEAD, OPTIONS"

// Header values of /search, shared by every response (net/http only reads
// them).
var (
	noStore       = []string{"no-store"}
	anyOrigin     = []string{"*"}
	exposeHeaders = []string{"RateLimit, RateLimit-Policy, Retry-After, Search-Complete, X-Request-Id"}
	allowMethods  = []string{searchMethods}
	allowHeaders  = []string{headerRequestID}
	// preflightMaxAge is how long a browser may reuse a preflight: two
	// hours, the most Chromium honours.
	preflightMaxAge = []string{"7200"}
)

// WithCORS lets scripts on other origins call /search and read its
// answers: "*" allows any origin; otherwise only the origins listed
// ("https://example.com", scheme, host and port as a browser sends Origin)
// are named in Access-Control-Allow-Origin, with Vary: Origin. Answers also
// expose RateLimit, RateLimit-Policy, Retry-After, Search-Complete and X-Request-Id to the
// script, and OPTIONS /search answers preflights (without counting against
// the rate limit). Without origins /search sends no CORS headers, and
// browsers let only pages of its own origin read it.
func WithCORS(origins ...string) Option {
	return func(o *options) { o.ops.corsOrigins = origins }
}

// WithCacheMaxAge lets browsers and shared caches keep a successful /search
// answer for maxAge (whole seconds): Cache-Control: public, max-age=N. A
// maxAge under a second forbids it (no-store). Errors, 429s included, always
// carry no-store. Without this option a 200 carries no Cache-Control.
//
// A shared cache (a CDN) answers repeated queries without asking the
// server, so those do not count against any client's rate limit; the
// RateLimit fields of a cached answer are those of its first client.
func WithCacheMaxAge(maxAge time.Duration) Option {
	return func(o *options) {
		if s := int64(maxAge / time.Second); s > 0 {
			o.ops.searchCache = []string{"public, max-age=" + strconv.FormatInt(s, 10)}
		} else {
			o.ops.searchCache = noStore
		}
	}
}

// corsPolicy decides the Access-Control-Allow-Origin of a request.
type corsPolicy struct {
	any     bool
	origins map[string]bool // nil: CORS off (unless any)
}

func newCORSPolicy(origins []string) corsPolicy {
	var c corsPolicy
	for _, o := range origins {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		switch o {
		case "":
		case "*":
			c.any = true
		default:
			if c.origins == nil {
				c.origins = make(map[string]bool)
			}
			c.origins[o] = true
		}
	}
	return c
}

// apply sets the CORS headers of an answer to r, and reports whether r's
// origin is allowed.
func (c corsPolicy) apply(hdr http.Header, r *http.Request) bool {
	switch {
	case c.any:
		hdr["Access-Control-Allow-Origin"] = anyOrigin
	case c.origins != nil:
		// The answer depends on Origin, so caches must keep one per origin.
		hdr.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if !c.origins[origin] {
			return false
		}
		hdr["Access-Control-Allow-Origin"] = []string{origin}
	default:
		return false
	}
	hdr["Access-Control-Expose-Headers"] = exposeHeaders
	return true
}

// searchHeaders puts the CORS headers and Cache-Control: no-store on every
// answer of /search, including those of the rate limiter, which it wraps;
// search replaces no-store when it succeeds (see searchSucceeded).
func (h *handler) searchHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := w.Header()
		hdr["Cache-Control"] = noStore
		h.ops.cors.apply(hdr, r)
		next.ServeHTTP(w, r)
	})
}

// searchSucceeded sets the Cache-Control of a successful search.
func (p *ops) searchSucceeded(hdr http.Header) {
	if p.searchCache == nil {
		delete(hdr, "Cache-Control")
		return
	}
	hdr["Cache-Control"] = p.searchCache
}

// preflight answers OPTIONS /search with 204: the methods and the request
// header a script may use, when its origin is allowed. It is not rate
// limited: a browser sends it by itself before a search with X-Request-Id.
func (h *handler) preflight(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr["Allow"] = allowMethods
	if len(hdr["Access-Control-Allow-Origin"]) > 0 { // set by searchHeaders
		hdr["Access-Control-Allow-Methods"] = allowMethods
		hdr["Access-Control-Allow-Headers"] = allowHeaders
		hdr["Access-Control-Max-Age"] = preflightMaxAge
	}
	w.WriteHeader(http.StatusNoContent)
}
