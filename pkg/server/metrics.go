package server

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
//	cityfinder_search_store_errors_total{dataset,reason}  failed store searches: empty, unavailable, timeout, invalid, other
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
			Help: "Searches the store failed, by dataset and reason: empty, unavailable, timeout, invalid or other.",
		}, []string{"dataset", "reason"}),
	}
	for _, d := range search.Datasets {
		m.searchBy[string(d)] = m.searchSeconds.WithLabelValues(string(d))
	}
	m.searchBy[otherDataset] = m.searchSeconds.WithLabelValues(otherDataset)
	return m
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.requests, m.inFlight, m.searchSeconds, m.rateLimited, m.storeErrors}
}

// observe counts one answered request; r.Pattern is the route the mux chose.
func (m *metrics) observe(r *http.Request, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(routeLabel(r.Pattern), statusLabel(status)).Inc()
	if r.Pattern != searchPattern {
		return
	}
	if status == http.StatusTooManyRequests {
		m.rateLimited.Inc()
	}
	m.searchBy[datasetLabel(r.URL.RawQuery)].Observe(elapsed.Seconds())
}

// storeFailed counts a store's error for a search of dataset d. A client
// that left is not the store's fault.
func (p *ops) storeFailed(d search.Dataset, err error) {
	if p.metrics == nil || errors.Is(err, context.Canceled) {
		return
	}
	label := string(d)
	if _, ok := p.metrics.searchBy[label]; !ok {
		label = otherDataset
	}
	p.metrics.storeErrors.WithLabelValues(label, storeErrorReason(err)).Inc()
}

func storeErrorReason(err error) string {
	switch {
	case errors.Is(err, search.ErrEmptyDataset):
		return "empty"
	case errors.Is(err, search.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, search.ErrInvalidQuery), errors.Is(err, search.ErrUnknownDataset):
		return "invalid"
	default:
		return "other"
	}
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

// datasetLabel finds the dataset a /search query string asks for, the way
// url.ParseQuery and parseSearch read it (the first dataset parameter; none
// or empty means small), without allocating for the usual query: a known
// dataset's name, or otherDataset.
func datasetLabel(rawQuery string) string {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		if pair == "" || strings.Contains(pair, ";") { // ParseQuery skips these
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(key, "%+") {
			k, err := url.QueryUnescape(key)
			if err != nil {
				continue
			}
			key = k
		}
		if key != "dataset" {
			continue
		}
		if strings.ContainsAny(value, "%+") {
			v, err := url.QueryUnescape(value)
			if err != nil {
				continue
			}
			value = v
		}
		if value == "" {
			return string(search.Small)
		}
		for _, d := range search.Datasets {
			if value == string(d) {
				return value
			}
		}
		return otherDataset
	}
	return string(search.Small)
}

// DatasetMetrics exports, read from info at each scrape:
//
//	cityfinder_dataset_cities{dataset}                    cities in each dataset (0 when not imported)
//	cityfinder_dataset_import_timestamp_seconds{dataset}  when the imported dataset was written, Unix time
//
// info is typically the embedded store's Info.
func DatasetMetrics(info func(search.Dataset) (cities int, imported time.Time)) prometheus.Collector {
	return datasetCollector(info)
}

var (
	datasetCitiesDesc = prometheus.NewDesc("cityfinder_dataset_cities",
		"Cities in each dataset, 0 when it has not been imported.", []string{"dataset"}, nil)
	datasetImportedDesc = prometheus.NewDesc("cityfinder_dataset_import_timestamp_seconds",
		"When each imported dataset was written (the snapshot file's modification time), in Unix seconds.", []string{"dataset"}, nil)
)

type datasetCollector func(search.Dataset) (int, time.Time)

func (c datasetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- datasetCitiesDesc
	ch <- datasetImportedDesc
}

func (c datasetCollector) Collect(ch chan<- prometheus.Metric) {
	for _, d := range search.Datasets {
		cities, imported := c(d)
		ch <- prometheus.MustNewConstMetric(datasetCitiesDesc, prometheus.GaugeValue, float64(cities), string(d))
		if !imported.IsZero() {
			ch <- prometheus.MustNewConstMetric(datasetImportedDesc, prometheus.GaugeValue,
				float64(imported.UnixNano())/1e9, string(d))
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
