package server

import (
	"log/slog"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cityfinder/cityfinder/docs"
)

// opsOptions are the options of the operational parts of the handler:
// health, metrics, CORS and caching of /search.
type opsOptions struct {
	checks      []Check
	registry    *prometheus.Registry
	corsOrigins []string
	searchCache []string // Cache-Control of a /search 200; nil for none
}

// ops is what those parts share at run time. Every method works on a nil
// *metrics, so that a handler without WithMetrics pays nothing for them.
type ops struct {
	readiness *readiness
	metrics   *metrics
	registry  *prometheus.Registry
	cors      corsPolicy
	// searchCache is the Cache-Control of a /search 200; nil for none.
	searchCache []string
}

func newOps(o opsOptions, logger *slog.Logger) *ops {
	p := &ops{
		readiness:   newReadiness(o.checks, logger),
		cors:        newCORSPolicy(o.corsOrigins),
		registry:    o.registry,
		searchCache: o.searchCache,
	}
	if o.registry != nil {
		p.metrics = newMetrics()
		o.registry.MustRegister(p.metrics.collectors()...)
		if len(o.checks) > 0 {
			o.registry.MustRegister(p.readiness.collector())
		}
	}
	return p
}

// opsRoutes adds /healthz, /readyz, /openapi.json and, with WithMetrics,
// /metrics. None of them goes through the search middleware: a probe or a
// scrape must never be rate limited, nor use up a client's searches.
func (h *handler) opsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.Handle("/healthz", h.methodNotAllowed("GET, HEAD"))
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		serveAsset(w, r, openAPIDocument(), cacheRevalidate)
	})
	mux.Handle("/openapi.json", h.methodNotAllowed("GET, HEAD"))
	mux.HandleFunc("GET /readyz", h.readyz)
	mux.Handle("/readyz", h.methodNotAllowed("GET, HEAD"))
	if reg := h.ops.registry; reg != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog:            slog.NewLogLogger(h.logger.Handler(), slog.LevelError),
			Registry:            reg, // promhttp_metric_handler_errors_total
			MaxRequestsInFlight: 4,   // a scrape storm queues nothing: the rest get 503
		}))
		mux.Handle("/metrics", h.methodNotAllowed("GET, HEAD"))
	}
}

// openAPIDocument is docs.OpenAPI, the document of this API, ready to
// serve; it is part of the binary, so failing to read it panics.
var openAPIDocument = sync.OnceValue(func() *asset {
	a, err := newAsset("openapi.json", docs.OpenAPI)
	if err != nil {
		panic(err)
	}
	return a
})
