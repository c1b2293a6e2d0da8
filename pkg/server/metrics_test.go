package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// limitQuery is a search middleware that answers 429 to q=limited and
// passes everything else.
func limitQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "limited" {
			answerTooMany(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// scrape returns the body of GET /metrics.
func scrape(tb testing.TB, h http.Handler) string {
	tb.Helper()
	rec := do(tb, h, http.MethodGet, "/metrics")
	if rec.Code != http.StatusOK {
		tb.Fatalf("GET /metrics = %d %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		tb.Errorf("GET /metrics Content-Type = %q, want the text format", ct)
	}
	return rec.Body.String()
}

// importedAt is a memory store whose datasets were all imported at one
// time. It embeds the store's type, not search.Store, so that it keeps
// typo search.
type importedAt struct {
	*memory.Store
	at time.Time
}

func (s importedAt) Stats(ctx context.Context, d search.Dataset) (search.DatasetStats, error) {
	st, err := s.Store.Stats(ctx, d)
	if err == nil {
		st.Imported = s.at
	}
	return st, err
}

func TestMetrics(t *testing.T) {
	limiterErrors := int64(3)
	// small only: large answers 503
	svc := search.NewService(importedAt{mustStore(t, testCities()), time.Unix(1_700_000_000, 500_000_000)})
	reg := prometheus.NewRegistry()
	reg.MustRegister(server.DatasetMetrics(svc), server.LimiterMetrics(func() int64 { return limiterErrors }))
	h := server.New(svc, server.WithMetrics(reg), server.WithSearchMiddleware(limitQuery),
		server.WithReadiness(server.DatasetCheck(svc, search.Small), server.DatasetCheck(svc, search.Large)))

	for _, req := range []struct {
		method, target string
		wantStatus     int
	}{
		{http.MethodGet, "/search?q=ist", http.StatusOK},
		{http.MethodGet, "/search?q=par&dataset=small", http.StatusOK},
		{http.MethodGet, "/search?q=ist&dataset=large", http.StatusServiceUnavailable},
		{http.MethodGet, "/search?q=is", http.StatusBadRequest},
		{http.MethodGet, "/search?q=ist&dataset=huge", http.StatusBadRequest},
		{http.MethodGet, "/search?q=limited", http.StatusTooManyRequests},
		{http.MethodPost, "/search?q=ist", http.StatusMethodNotAllowed},
		{http.MethodOptions, "/search", http.StatusNoContent},
		{http.MethodGet, "/no/such/path", http.StatusNotFound},
		{http.MethodGet, "/healthz", http.StatusOK},
		{http.MethodGet, "/readyz", http.StatusServiceUnavailable},
	} {
		if rec := do(t, h, req.method, req.target); rec.Code != req.wantStatus {
			t.Fatalf("%s %s = %d, want %d", req.method, req.target, rec.Code, req.wantStatus)
		}
	}
	body := scrape(t, h)
	for _, want := range []string{
		`cityfinder_http_requests_total{code="200",route="/search"} 2`,
		`cityfinder_http_requests_total{code="503",route="/search"} 1`,
		`cityfinder_http_requests_total{code="400",route="/search"} 2`,
		`cityfinder_http_requests_total{code="429",route="/search"} 1`,
		`cityfinder_http_requests_total{code="405",route="/search"} 1`,
		`cityfinder_http_requests_total{code="204",route="/search"} 1`,
		`cityfinder_http_requests_total{code="404",route="other"} 1`,
		`cityfinder_http_requests_total{code="200",route="/healthz"} 1`,
		`cityfinder_http_requests_total{code="503",route="/readyz"} 1`,
		`cityfinder_http_requests_in_flight 1`, // the scrape itself
		// GET /search only: not the 405 nor the preflight.
		`cityfinder_search_duration_seconds_count{dataset="small"} 4`,
		`cityfinder_search_duration_seconds_count{dataset="large"} 1`,
		`cityfinder_search_duration_seconds_count{dataset="other"} 1`,
		`cityfinder_search_duration_seconds_bucket{dataset="small",le="+Inf"} 4`,
		`cityfinder_search_rate_limited_total 1`,
		`cityfinder_search_store_errors_total{dataset="large",reason="empty"} 1`,
		`cityfinder_limiter_store_errors_total 3`,
		`cityfinder_dataset_cities{dataset="small"} 8`,
		`cityfinder_dataset_cities{dataset="large"} 0`,
		`cityfinder_dataset_import_timestamp_seconds{dataset="small"} 1.7000000005e+09`,
		`cityfinder_check_up{check="dataset:small"} 1`,
		`cityfinder_check_up{check="dataset:large"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `cityfinder_dataset_import_timestamp_seconds{dataset="large"}`) {
		t.Error("/metrics has an import time for the dataset that was never imported")
	}
	if strings.Contains(body, `/no/such/path`) || strings.Contains(body, `huge`) {
		t.Error("a client's path or dataset became a label value")
	}

	limiterErrors = 5
	if body := scrape(t, h); !strings.Contains(body, "cityfinder_limiter_store_errors_total 5\n") {
		t.Error("cityfinder_limiter_store_errors_total is not read at scrape time")
	}
}

// Errors on the server's side are counted by reason; a client that left or
// asked for too much is not one.
func TestMetricsStoreErrors(t *testing.T) {
	errs := map[string]error{
		"unavailable": search.ErrUnavailable,
		"timeout":     context.DeadlineExceeded,
		"canceled":    context.Canceled,
		"invalid":     search.ErrInvalidQuery,
		"bug":         errors.New("bug"),
	}
	reg := prometheus.NewRegistry()
	h := server.New(searching(func(_ context.Context, q search.Query) ([]search.City, error) {
		return nil, errs[q.Prefix]
	}), server.WithMetrics(reg))
	for q := range errs {
		do(t, h, http.MethodGet, "/search?dataset=large&q="+q)
	}
	body := scrape(t, h)
	for _, want := range []string{
		`cityfinder_search_store_errors_total{dataset="large",reason="unavailable"} 1`,
		`cityfinder_search_store_errors_total{dataset="large",reason="timeout"} 1`,
		`cityfinder_search_store_errors_total{dataset="large",reason="error"} 1`,
		`cityfinder_http_requests_total{code="500",route="/search"} 1`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `reason="canceled"`) || strings.Contains(body, `reason="invalid"`) {
		t.Error("a canceled or invalid search counted as a store error")
	}
}

// Each handler counts in its own registry, so that tests (and two servers
// in one process) stay apart; sharing one is a programming error.
func TestMetricsRegistryPerHandler(t *testing.T) {
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := server.New(mustService(t, testCities()), server.WithMetrics(regA))
	b := server.New(mustService(t, testCities()), server.WithMetrics(regB))
	do(t, a, http.MethodGet, "/search?q=ist")
	if body := scrape(t, b); strings.Contains(body, `route="/search"`) {
		t.Errorf("handler b counted handler a's search:\n%s", body)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second handler on the same registry did not panic")
		}
	}()
	server.New(mustService(t, testCities()), server.WithMetrics(regA))
}

func TestNoMetricsWithoutRegistry(t *testing.T) {
	h := server.New(unreachable(t))
	assertJSON(t, do(t, h, http.MethodGet, "/metrics"), http.StatusNotFound, `{"message":"Not found"}`)
}

// Probes, scrapes and preflights never reach the rate limiter.
func TestOpsRoutesAreNotRateLimited(t *testing.T) {
	h := server.New(mustService(t, testCities()), server.WithMetrics(prometheus.NewRegistry()), server.WithCORS("*"),
		server.WithSearchMiddleware(rejectAll(t, func(r *http.Request) bool { return r.Method == http.MethodGet && r.URL.Path == "/search" })))
	for _, req := range []struct{ method, target string }{
		{http.MethodGet, "/healthz"}, {http.MethodGet, "/readyz"}, {http.MethodGet, "/metrics"}, {http.MethodOptions, "/search?q=ist"},
	} {
		if rec := do(t, h, req.method, req.target); rec.Code == http.StatusTooManyRequests || rec.Code >= 500 {
			t.Errorf("%s %s = %d, want an answer of its own", req.method, req.target, rec.Code)
		}
	}
	if rec := do(t, h, http.MethodGet, "/search?q=ist"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("GET /search = %d, want the middleware's 429", rec.Code)
	}
}

// BenchmarkSearchInstrumented is BenchmarkSearch's first case with metrics,
// CORS and caching on, as serve runs it.
func BenchmarkSearchInstrumented(b *testing.B) {
	h := server.New(mustService(b, syntheticCities(20_000)), server.WithMetrics(prometheus.NewRegistry()),
		server.WithCORS("*"), server.WithCacheMaxAge(time.Minute))
	req := httptest.NewRequest(http.MethodGet, "/search?q=ber", nil)
	w := &discardResponse{header: make(http.Header)}
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(w, req)
	}
	if w.status != http.StatusOK {
		b.Fatalf("status = %d", w.status)
	}
}
