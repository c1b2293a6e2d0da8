package server

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"

	"github.com/cityfinder/cityfinder/pkg/search"
	"golang.org/x/text/language"
)

// Option configures the handler that New builds.
type Option func(*options)

type options struct {
	logger           *slog.Logger
	searchMiddleware func(http.Handler) http.Handler
	page             *PageConfig
	ops              opsOptions // health, metrics, CORS and caching (ops.go)
	answerBytes      int        // the answer cache's size (answers.go)
}

// WithLogger sets the logger for errors and the access log (at Debug);
// records carry component=server. Without it nothing is logged.
func WithLogger(logger *slog.Logger) Option {
	return func(o *options) { o.logger = logger }
}

// WithSearchMiddleware wraps the /search and /reverse routes, and only
// them, in mw (typically the rate limiter). A nil mw leaves them
// unwrapped.
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
	service *search.Service
	logger  *slog.Logger
	ops     *ops
	answers *answerCache // nil without WithAnswerCache
}

// New returns the HTTP API over service:
//
//	GET /search?q=…&dataset=small|large&limit=N&country=…&fuzzy=true|false&lang=…
//
// answers a JSON array of cities;
//
//	GET /cities/{id}?dataset=small|large
//
// the city of that id; and
//
//	GET /reverse?lat=…&lon=…&dataset=…&limit=N&country=…&radius_km=…
//
// the cities around a point, best first (see search.Service.Reverse). Each
// names its cities in the languages of lang, or of Accept-Language without
// it; every error is a JSON object
// {"message": "..."} with a status chosen by one table (see errorTable).
// It also answers GET /healthz, GET /readyz (see WithReadiness), OPTIONS
// /search (see WithCORS) and, with WithMetrics, GET /metrics; every answer
// carries X-Request-Id. GET /openapi.json answers the document of all of
// it (docs.OpenAPI). New panics if service is nil.
func New(service *search.Service, opts ...Option) http.Handler {
	if service == nil {
		panic("server.New: nil service")
	}
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := &handler{service: service, logger: slog.New(LogRequestIDs(logger.Handler())).With("component", "server")}
	h.ops = newOps(o.ops, h.logger)
	if h.answers = newAnswerCache(o.answerBytes); h.answers != nil && o.ops.registry != nil {
		o.ops.registry.MustRegister(h.answers.collectors()...)
	}
	return observed(h.accessLog(h.routes(o.searchMiddleware, o.page)))
}

// observeAnswers, when set, wraps the handler that New returns and the
// answers that a draining Server gives itself: the package's tests set it
// to hold every answer they see to the OpenAPI document (docs.OpenAPI).
// It is nil outside tests.
var observeAnswers func(http.Handler) http.Handler

func observed(h http.Handler) http.Handler {
	if observeAnswers == nil {
		return h
	}
	return observeAnswers(h)
}

// routes builds the mux. Every path is registered twice: with its methods,
// and bare so that other methods get a JSON 405 rather than the mux's plain
// text one; "/" turns every unknown path into a JSON 404. New routes (health,
// metrics, the demo page) slot in here the same way.
func (h *handler) routes(searchMiddleware func(http.Handler) http.Handler, page *PageConfig) *http.ServeMux {
	mux := http.NewServeMux()

	mux.Handle(searchPattern, h.searchHeaders(h.search(searchMiddleware)))        // GET also answers HEAD
	mux.Handle("OPTIONS /search", h.searchHeaders(http.HandlerFunc(h.preflight))) // CORS, not rate limited
	mux.Handle("/search", h.methodNotAllowed(searchMethods))
	mux.Handle("GET /cities/{id}", h.searchHeaders(http.HandlerFunc(h.city)))
	mux.Handle("OPTIONS /cities/{id}", h.searchHeaders(http.HandlerFunc(h.preflight)))
	mux.Handle("/cities/{id}", h.methodNotAllowed(searchMethods))
	mux.Handle("GET /reverse", h.searchHeaders(h.reverse(searchMiddleware)))
	mux.Handle("OPTIONS /reverse", h.searchHeaders(http.HandlerFunc(h.preflight)))
	mux.Handle("/reverse", h.methodNotAllowed(searchMethods))
	h.opsRoutes(mux)

	if page != nil {
		h.pageRoutes(mux, *page)
	}
	mux.HandleFunc("/", h.notFound)
	return mux
}

// search answers GET /search: it parses the parameters, then runs
// middleware (the rate limiter) and, if that lets the request through,
// decodes them, finds the cities and encodes them. Every request counts
// against the limit, well-formed or not, and its dataset parameter names
// the dataset in the metrics even of those the limiter refuses.
func (h *handler) search(middleware func(http.Handler) http.Handler) http.Handler {
	var find http.Handler = http.HandlerFunc(h.find)
	if middleware != nil {
		find = middleware(find)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st := stateOf(r)
		st.searched, st.dataset = true, search.Dataset(paramsOf(r).Get("dataset"))
		find.ServeHTTP(w, r)
	})
}

// find decodes a search, answers it and encodes the answer: from the
// answer cache when it holds the answer (see WithAnswerCache), else from
// the Service, keeping what it encodes.
func (h *handler) find(w http.ResponseWriter, r *http.Request) {
	req, asGeoJSON, err := decodeSearch(paramsOf(r))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	langs, byHeader, err := decodeLanguages(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	form := listForm(asGeoJSON)
	var complete bool
	var keep func(body []byte)
	if h.answers != nil {
		if version, ok := h.service.Version(req.Dataset); ok {
			var buf [256]byte
			key := answerKey(buf[:0], &req, langs, form)
			if e, hit := h.answers.get(key, version); hit {
				setSearchComplete(w.Header(), e.complete)
				h.succeeded(w.Header(), byHeader)
				writeBody(w, http.StatusOK, contentType(form), e.body, e.length)
				return
			}
			kept := string(key) // buf stays on the stack
			keep = func(body []byte) { h.answers.put(kept, version, body, complete) }
		}
	}
	hits := hitSlices.Get().(*[]search.Hit)
	defer releaseHits(hits)
	h.answerIn(w, r, req.Dataset, form, langs, byHeader, keep, func(langs []language.Tag) ([]search.Hit, error) {
		req.Languages = langs
		res, err := h.service.FindAppend(r.Context(), (*hits)[:0], req)
		if err == nil {
			*hits = res.Hits // grown or not, back to the pool
			complete = res.Complete
			setSearchComplete(w.Header(), res.Complete)
		}
		return res.Hits, err
	})
}

// hitSlices holds the memory of /search's hits between requests (see
// search.Service.FindAppend): ten hits are 2.6 KB, most of what a search
// allocates. A request's hits go back once its answer is written, and the
// answer cache keeps bytes, not hits.
var hitSlices = sync.Pool{New: func() any {
	hits := make([]search.Hit, 0, search.DefaultLimit)
	return &hits
}}

// releaseHits returns hits to hitSlices, cleared so that the pool keeps
// no strings of an old snapshot alive, unless they grew past an answer of
// search.MaxLimit.
func releaseHits(hits *[]search.Hit) {
	if cap(*hits) > search.MaxLimit {
		return
	}
	clear((*hits)[:cap(*hits)])
	*hits = (*hits)[:0]
	hitSlices.Put(hits)
}

// geoJSON is an answer to encode as a GeoJSON FeatureCollection.
type geoJSON []search.Hit

// decodeSearch reads the parameters of /search into a request, and
// whether the answer is wanted as GeoJSON; the Service checks what they
// mean. Empty parameters take the defaults.
func decodeSearch(params *values) (req search.Request, geoJSON bool, err error) {
	req, err = decodeQuery(params)
	if err != nil {
		return req, false, err
	}
	if err := decodeLocation(params, &req); err != nil {
		return req, false, err
	}
	geoJSON, err = decodeFormat(params)
	return req, geoJSON, err
}

// decodeFormat reads whether the answer is wanted as GeoJSON.
func decodeFormat(params *values) (geoJSON bool, err error) {
	switch f := params.Get("format"); f {
	case "", "json":
		return false, nil
	case "geojson":
		return true, nil
	default:
		return false, badRequest(fmt.Sprintf("Invalid format %q: use json or geojson", f))
	}
}

// decodeQuery reads the parameters of what to look for.
func decodeQuery(params *values) (search.Request, error) {
	req := search.Request{
		Text:      params.Get("q"),
		Dataset:   search.Dataset(params.Get("dataset")),
		Limit:     search.DefaultLimit,
		Countries: params.Get("country"),
		Fuzzy:     true,
	}
	if s := params.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return req, badRequest(fmt.Sprintf("Invalid limit %q: use a whole number from 1 to %d", s, search.MaxLimit))
		}
		req.Limit = n
	}
	if s := params.Get("fuzzy"); s != "" {
		fuzzy, err := strconv.ParseBool(s)
		if err != nil {
			return req, badRequest(fmt.Sprintf("Invalid fuzzy %q: use true or false", s))
		}
		req.Fuzzy = fuzzy
	}
	return req, nil
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

// decodeLocation reads where the person is (lat, lon, bias_scale) and the
// box to search in (bbox, in Photon's order: minLon,minLat,maxLon,maxLat).
func decodeLocation(params *values, req *search.Request) error {
	lat, hasLat, err := decodeNumber(params, "lat", -90, 90)
	if err != nil {
		return err
	}
	lon, hasLon, err := decodeNumber(params, "lon", -180, 180)
	if err != nil {
		return err
	}
	if hasLat != hasLon {
		return badRequest("Give both lat and lon, or neither")
	}
	if hasLat {
		req.Near = &search.Point{Lat: lat, Lon: lon}
	}
	req.BiasScale = search.DefaultBiasScale
	if scale, ok, err := decodeNumber(params, "bias_scale", 0, 1); err != nil {
		return err
	} else if ok {
		req.BiasScale = scale
	}
	if s := params.Get("bbox"); s != "" {
		box, err := search.ParseBox(s)
		if err != nil {
			return err
		}
		req.Box = box
	}
	return nil
}

// decodeNumber reads parameter name as a finite number from lo to hi; ok
// is false when it is absent or empty.
func decodeNumber(params *values, name string, lo, hi float64) (v float64, ok bool, err error) {
	s := params.Get(name)
	if s == "" {
		return 0, false, nil
	}
	v, ok = search.ParseDecimal(s)
	if !ok || v < lo || v > hi {
		return 0, false, badRequest(fmt.Sprintf("Invalid %s %q: use a number from %g to %g", name, s, lo, hi))
	}
	return v, true, nil
}
