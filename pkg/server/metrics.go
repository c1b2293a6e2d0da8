package server

import (
	"context"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// WithMetrics serves GET /metrics, in the Prometheus text format, from reg,
// and registers the handler's own metrics in it:
//
//	cityfinder_http_requests_total{route,code}        every answer, by route pattern and status
//	cityfinder_http_requests_in_flight                requests being answered
//	cityfinder_search_duration_seconds{dataset}       histogram of /search answers, 429s included
//	cityfinder_search_rate_limited_total              /search answers 429
//	cityfinder_search_store_errors_total{dataset,reason}  searches that failed on the server's side: empty, unavailable, timeout, error
//	cityfinder_check_up{check}                        each readiness check (with WithReadiness), run at each scrape
//
// Give each handler a registry of its own (prometheus.NewRegistry, not the
// global default): New panics when reg already holds these metrics. The
// caller may register more in reg, such as DatasetMetrics, LimiterMetrics
// and the Go and process collectors. /metrics is not rate limited.
func WithMetrics(reg *prometheus.Registry) Option {
	return func(o *options) { o.ops.registry = reg }
}

// searchPattern is the route of searches, as ServeMux reports it in
// Request.Pattern; routes registers it.
const searchPattern = "GET /search"

// otherDataset labels searches of a dataset that does not exist, so that
// clients cannot mint label values.
const otherDataset = "other"

// searchBuckets suit an autocomplete: most answers take well under a
// millisecond, and a person notices 100 ms.
var searchBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}

// metrics are the handler's own collectors.
type metrics struct {
	requests      *prometheus.CounterVec
	inFlight      prometheus.Gauge
	searchSeconds *prometheus.HistogramVec
	// searchBy holds the histogram's observers by dataset label, made once
	// so that a request does not look its labels up.
	searchBy    map[string]prometheus.Observer
	rateLimited prometheus.Counter
	storeErrors *prometheus.CounterVec
	// requestsBy holds the counters of requests by route label and
	// status met so far, copied on write (see requestCounter).
	requestsBy   atomic.Pointer[map[requestKey]prometheus.Counter]
	requestsByMu sync.Mutex
}

// requestKey is the labels of cityfinder_http_requests_total.
type requestKey struct {
	route  string
	status int
}

func newMetrics() *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cityfinder_http_requests_total",
			Help: "HTTP requests answered, by route pattern (other for unknown paths) and status code.",
		}, []string{"route", "code"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cityfinder_http_requests_in_flight",
			Help: "HTTP requests being answered.",
		}),
		searchSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "cityfinder_search_duration_seconds",
			Help:    "Time to answer GET /search, rate limiting included, by dataset (other for unknown names).",
			Buckets: searchBuckets,
		}, []string{"dataset"}),
		searchBy: make(map[string]prometheus.Observer),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cityfinder_search_rate_limited_total",
			Help: "GET /search answers 429 Too Many Requests.",
		}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cityfinder_search_store_errors_total",
			Help: "Searches that failed on the server's side, by dataset and reason: empty, unavailable, timeout or error.",
		}, []string{"dataset", "reason"}),
	}
	for _, d := range search.Datasets {
		m.searchBy[string(d)] = m.searchSeconds.WithLabelValues(string(d))
	}
	m.searchBy[otherDataset] = m.searchSeconds.WithLabelValues(otherDataset)
	m.requestsBy.Store(&map[requestKey]prometheus.Counter{})
	return m
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.inFlight, m.searchSeconds, m.rateLimited, m.storeErrors}
}

// observe counts one answered request; r.Pattern is the route the mux
// chose, st what the handler learnt of it.
func (m *metrics) observe(r *http.Request, st *requestState, status int, elapsed time.Duration) {
	m.requestCounter(routeLabel(r.Pattern), status).Inc()
	if !st.searched {
		return
	}
	if status == http.StatusTooManyRequests {
		m.rateLimited.Inc()
	}
	m.searchBy[m.datasetLabel(st.dataset)].Observe(elapsed.Seconds())
}

// requestCounter returns the counter of requests to route answered with
// status. The routes and statuses are few, so each pair is looked up in
// the CounterVec once, then read from a map that only a new pair copies:
// the CounterVec's lookup hashes the labels and takes a lock that every
// request shared.
func (m *metrics) requestCounter(route string, status int) prometheus.Counter {
	key := requestKey{route, status}
	if c, ok := (*m.requestsBy.Load())[key]; ok {
		return c
	}
	m.requestsByMu.Lock()
	defer m.requestsByMu.Unlock()
	old := *m.requestsBy.Load()
	if c, ok := old[key]; ok {
		return c
	}
	c := m.requests.WithLabelValues(route, statusLabel(status))
	next := maps.Clone(old)
	next[key] = c
	m.requestsBy.Store(&next)
	return c
}

// datasetLabel is the label of a search of dataset d: its name when it is
// a known dataset (none means small), else otherDataset, so that clients
// cannot mint label values.
func (m *metrics) datasetLabel(d search.Dataset) string {
	if d == "" {
		return string(search.Small)
	}
	if _, ok := m.searchBy[string(d)]; !ok || d == otherDataset {
		return otherDataset
	}
	return string(d)
}

// storeFailed counts an error of the Service for a search of dataset d,
// unless it was the client's fault (an invalid request, a client that
// left).
func (p *ops) storeFailed(d search.Dataset, err error) {
	e := lookupError(err)
	if p.metrics == nil || e.status < http.StatusInternalServerError {
		return
	}
	p.metrics.storeErrors.WithLabelValues(p.metrics.datasetLabel(d), e.reason).Inc()
}

// routeLabel turns a ServeMux pattern into the route label: the path
// pattern without its method ("GET /search" and "/search" are both
// "/search"), "/" for the demo page, and "other" for the catch-all 404 and
// the mux's redirects, so that unknown paths cannot mint label values.
func routeLabel(pattern string) string {
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		pattern = pattern[i+1:]
	}
	switch pattern {
	case "", "/":
		return "other"
	case "/{$}":
		return "/"
	}
	return pattern
}

// statusLabels are the status codes as strings, made once.
var statusLabels = func() (labels [600]string) {
	for i := range labels {
		labels[i] = strconv.Itoa(i)
	}
	return labels
}()

func statusLabel(status int) string {
	if status >= 0 && status < len(statusLabels) {
		return statusLabels[status]
	}
	return strconv.Itoa(status)
}

// DatasetMetrics exports, read from the service's Stats at each scrape:
//
//	cityfinder_dataset_cities{dataset}                    cities in each dataset (0 when not imported or unreadable)
//	cityfinder_dataset_import_timestamp_seconds{dataset}  when the dataset was imported, Unix time
func DatasetMetrics(service *search.Service) prometheus.Collector {
	return datasetCollector{service}
}

var (
	datasetCitiesDesc = prometheus.NewDesc("cityfinder_dataset_cities",
		"Cities in each dataset, 0 when it has not been imported or cannot be read.", []string{"dataset"}, nil)
	datasetImportedDesc = prometheus.NewDesc("cityfinder_dataset_import_timestamp_seconds",
		"When each dataset was imported, in Unix seconds.", []string{"dataset"}, nil)
)

type datasetCollector struct{ service *search.Service }

func (c datasetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- datasetCitiesDesc
	ch <- datasetImportedDesc
}

func (c datasetCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	for _, d := range search.Datasets {
		st, _ := c.service.Stats(ctx, d) // an error reads as 0 cities; cityfinder_check_up says why
		ch <- prometheus.MustNewConstMetric(datasetCitiesDesc, prometheus.GaugeValue, float64(st.Cities), string(d))
		if !st.Imported.IsZero() {
			ch <- prometheus.MustNewConstMetric(datasetImportedDesc, prometheus.GaugeValue,
				float64(st.Imported.UnixNano())/1e9, string(d))
		}
	}
}

// LimiterMetrics exports cityfinder_limiter_store_errors_total, the rate
// limit decisions its store failed (each let through unlimited, or answered
// 503 when failing closed), read from storeErrors at each scrape; that is
// typically the limiter's StoreErrors.
func LimiterMetrics(storeErrors func() int64) prometheus.Collector {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "cityfinder_limiter_store_errors_total",
		Help: "Rate limit decisions the limiter's store failed (requests then go through unlimited, or get 503 when failing closed).",
	}, func() float64 { return float64(storeErrors()) })
}
