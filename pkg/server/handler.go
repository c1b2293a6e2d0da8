package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Limits on the q parameter of /search.
const (
	// minQueryLetters is how many letters or digits a query needs before it
	// is worth answering: fewer match too many cities to be useful.
	minQueryLetters = 3
	// maxQueryRunes bounds q; no city name comes close.
	maxQueryRunes = 100
	// maxCountryBytes bounds the country list: a few dozen names at most.
	maxCountryBytes = 1000
)

// Option configures the handler that New builds.
type Option func(*options)

type options struct {
	logger           *slog.Logger
	searchMiddleware func(http.Handler) http.Handler
	page             *PageConfig
	ops              opsOptions // health, metrics, CORS and caching (ops.go)
}

// WithLogger sets the logger for errors and the access log (at Debug);
// records carry component=server. Without it nothing is logged.
func WithLogger(logger *slog.Logger) Option {
	return func(o *options) { o.logger = logger }
}

// WithSearchMiddleware wraps the /search route, and only that route, in mw
// (typically the rate limiter). A nil mw leaves /search unwrapped.
func WithSearchMiddleware(mw func(http.Handler) http.Handler) Option {
	return func(o *options) { o.searchMiddleware = mw }
}

// WithDemoPage serves the demo page: GET / (an autocomplete box over
// /search), its assets under /static/, and GET /config, which tells the page
// cfg. None of these routes goes through the search middleware.
func WithDemoPage(cfg PageConfig) Option {
	return func(o *options) { o.page = &cfg }
}

// handler holds what the routes share.
type handler struct {
	searcher search.Searcher
	logger   *slog.Logger
	ops      *ops
}

// New returns the HTTP API over searcher:
//
//	GET /search?q=…&dataset=small|large&limit=N
//
// answers a JSON array of cities, and every error a JSON object
// {"message": "..."} with a status chosen by one table (see errorResponse).
// It also answers GET /healthz, GET /readyz (see WithReadiness), OPTIONS
// /search (see WithCORS) and, with WithMetrics, GET /metrics; every answer
// carries X-Request-Id. New panics if searcher is nil.
func New(searcher search.Searcher, opts ...Option) http.Handler {
	if searcher == nil {
		panic("server.New: nil searcher")
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{searcher: searcher, logger: slog.New(LogRequestIDs(logger.Handler())).With("component", "server")}
	h.ops = newOps(o.ops, h.logger)
	return h.accessLog(h.routes(o.searchMiddleware, o.page))
}

// routes builds the mux. Every path is registered twice: with its methods,
// and bare so that other methods get a JSON 405 rather than the mux's plain
// text one; "/" turns every unknown path into a JSON 404. New routes (health,
// metrics, the demo page) slot in here the same way.
func (h *handler) routes(searchMiddleware func(http.Handler) http.Handler, page *PageConfig) *http.ServeMux {
	mux := http.NewServeMux()

	var searchHandler http.Handler = http.HandlerFunc(h.search)
	if searchMiddleware != nil {
		searchHandler = searchMiddleware(searchHandler)
	}
	mux.Handle(searchPattern, h.searchHeaders(searchHandler))                     // GET also answers HEAD
	mux.Handle("OPTIONS /search", h.searchHeaders(http.HandlerFunc(h.preflight))) // CORS, not rate limited
	mux.Handle("/search", h.methodNotAllowed(searchMethods))
	h.opsRoutes(mux)

	if page != nil {
		h.pageRoutes(mux, *page)
	}
	mux.HandleFunc("/", h.notFound)
	return mux
}

// search answers GET /search: decode, call, encode.
func (h *handler) search(w http.ResponseWriter, r *http.Request) {
	q, err := parseSearch(r.URL.Query())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	cities := []search.City{}
	// A query can hold three letters that fold to nothing (unidecode knows no
	// ASCII for "𠀀𠀁𠀂"); it matches no city, and the store rejects an empty prefix.
	if q.Prefix != "" {
		cities, err = h.searcher.Search(r.Context(), q)
		if err != nil {
			h.ops.storeFailed(q.Dataset, err)
			h.fail(w, r, &searchError{query: q, err: err})
			return
		}
		if cities == nil {
			cities = []search.City{} // the contract says non-nil; the wire must never say null
		}
		search.Highlight(cities, q.Prefix)
	}
	h.ops.searchSucceeded(w.Header())
	h.writeJSON(w, http.StatusOK, cities)
}

// parseSearch checks the parameters of /search and turns them into a query
// whose Prefix is the folded q (possibly empty, see search).
func parseSearch(params url.Values) (search.Query, error) {
	q := search.Query{Dataset: search.Small, Limit: search.DefaultLimit}

	text := params.Get("q")
	if !utf8.ValidString(text) {
		return q, badRequest("Query is not valid UTF-8")
	}
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) > maxQueryRunes {
		return q, badRequest(fmt.Sprintf("Query is too long: use at most %d characters", maxQueryRunes))
	}
	if !hasLetters(text, minQueryLetters) {
		return q, badRequest(fmt.Sprintf("Enter at least %d letters", minQueryLetters))
	}

	if name := params.Get("dataset"); name != "" {
		d, err := search.ParseDataset(name)
		if err != nil {
			return q, badRequest(fmt.Sprintf("Unknown dataset %q: use small or large", name))
		}
		q.Dataset = d
	}

	if s := params.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > search.MaxLimit {
			return q, badRequest(fmt.Sprintf("Invalid limit %q: use a whole number from 1 to %d", s, search.MaxLimit))
		}
		q.Limit = n
	}

	if s := params.Get("country"); s != "" {
		if !utf8.ValidString(s) || len(s) > maxCountryBytes {
			return q, badRequest("Invalid country list")
		}
		codes, err := search.ParseCountries(s)
		var unknown *search.UnknownCountryError
		if errors.As(err, &unknown) {
			return q, badRequest(fmt.Sprintf("Unknown country %q: use ISO codes such as cl, or English names", unknown.Name))
		}
		if err != nil {
			return q, badRequest("Invalid country list")
		}
		q.Countries = codes
	}

	q.Fuzzy = true
	if s := params.Get("fuzzy"); s != "" {
		fuzzy, err := strconv.ParseBool(s)
		if err != nil {
			return q, badRequest(fmt.Sprintf("Invalid fuzzy %q: use true or false", s))
		}
		q.Fuzzy = fuzzy
	}

	q.Prefix = search.Slug(text)
	return q, nil
}

// hasLetters reports whether s holds at least n letters or digits; runes,
// not bytes, so "İst" has three and "a-b" two.
func hasLetters(s string, n int) bool {
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if n--; n == 0 {
				return true
			}
		}
	}
	return n <= 0
}

// notFound answers every path that no route claims.
func (h *handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.writeMessage(w, http.StatusNotFound, "Not found")
}

// methodNotAllowed answers a known path asked with a method it does not serve.
func (h *handler) methodNotAllowed(allow string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		h.writeMessage(w, http.StatusMethodNotAllowed, "Method not allowed")
	})
}
