package server_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// rejectAll is a search middleware that answers 429 to everything, and
// fails the test if it is ever asked about a request it should not see.
func rejectAll(tb testing.TB, allowed func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if allowed != nil && !allowed(r) {
				tb.Errorf("search middleware saw %s %s", r.Method, r.URL)
			}
			answerTooMany(w)
		})
	}
}

// answerTooMany answers 429 as the rate limiter does (a JSON message and
// Retry-After), so that the answers of the tests' fake limiters hold to
// docs/openapi.json too.
func answerTooMany(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "3")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusTooManyRequests)
	_, _ = w.Write([]byte(`{"message":"You can only do 5 searches in 3 seconds"}`))
}

func checkOK(context.Context) error { return nil }

func checkErr(err error) func(context.Context) error {
	return func(context.Context) error { return err }
}

func TestHealthz(t *testing.T) {
	h := server.New(unreachable(t), server.WithSearchMiddleware(rejectAll(t, func(*http.Request) bool { return false })))
	tests := []struct {
		name, method         string
		wantStatus           int
		wantBody, wantAllow  string
		wantCacheControlNone bool
	}{
		{"GET is alive", http.MethodGet, http.StatusOK, `{"status":"ok"}`, "", false},
		{"HEAD is alive, without a body", http.MethodHead, http.StatusOK, `{"status":"ok"}`, "", false}, // the recorder keeps the body; a real server drops it
		{"POST is not allowed", http.MethodPost, http.StatusMethodNotAllowed, `{"message":"Method not allowed"}`, "GET, HEAD", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, tt.method, "/healthz")
			assertJSON(t, rec, tt.wantStatus, tt.wantBody)
			if got := rec.Header().Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
			if got := rec.Header().Get("Cache-Control"); !tt.wantCacheControlNone && got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
		})
	}
}

func TestReadyz(t *testing.T) {
	hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
	tests := []struct {
		name       string
		checks     []server.Check
		wantStatus int
		wantBody   string
	}{
		{"without checks it is ready", nil, http.StatusOK, `{"status":"ok","checks":{}}`},
		{"every check passes", []server.Check{
			{Name: "dataset:small", Run: checkOK}, {Name: "limiter", Run: checkOK, Optional: true},
		}, http.StatusOK, `{"status":"ok","checks":{"dataset:small":"ok","limiter":"ok"}}`},
		{"an empty dataset is not ready", []server.Check{
			{Name: "dataset:small", Run: checkOK}, {Name: "dataset:large", Run: checkErr(search.EmptyDatasetError(search.Large))},
		}, http.StatusServiceUnavailable, `{"status":"unavailable","checks":{"dataset:large":"empty","dataset:small":"ok"},"failed":["dataset:large"]}`},
		{"a store that is down is not ready", []server.Check{
			{Name: "dataset:small", Run: checkErr(fmt.Errorf("mongo: %w: dial tcp 10.1.2.3:27017: refused", search.ErrUnavailable))},
		}, http.StatusServiceUnavailable, `{"status":"unavailable","checks":{"dataset:small":"unavailable"},"failed":["dataset:small"]}`},
		{"a failing optional check degrades but stays ready", []server.Check{
			{Name: "dataset:small", Run: checkOK}, {Name: "limiter", Run: checkErr(errors.New("dial tcp 10.1.2.3:6379: connection refused")), Optional: true},
		}, http.StatusOK, `{"status":"degraded","checks":{"dataset:small":"ok","limiter":"error"},"failed":["limiter"]}`},
		{"required and optional failing: not ready, both named", []server.Check{
			{Name: "limiter", Run: checkErr(errors.New("down")), Optional: true}, {Name: "dataset:small", Run: checkErr(errors.New("down"))},
		}, http.StatusServiceUnavailable, `{"status":"unavailable","checks":{"dataset:small":"error","limiter":"error"},"failed":["limiter","dataset:small"]}`},
		{"a check that hangs times out", []server.Check{
			{Name: "dataset:small", Run: hang}, {Name: "limiter", Run: checkOK},
		}, http.StatusServiceUnavailable, `{"status":"unavailable","checks":{"dataset:small":"timeout","limiter":"ok"},"failed":["dataset:small"]}`},
		{"a check that panics fails, the server lives on", []server.Check{
			{Name: "dataset:small", Run: func(context.Context) error { panic("boom") }},
		}, http.StatusServiceUnavailable, `{"status":"unavailable","checks":{"dataset:small":"error"},"failed":["dataset:small"]}`},
		{"a required check that is only degraded stays ready, with its word", []server.Check{
			{Name: "dataset:small", Run: checkErr(server.Degraded("file_gone", errors.New("small.cfs was removed")))},
		}, http.StatusOK, `{"status":"degraded","checks":{"dataset:small":"file_gone"},"failed":["dataset:small"]}`},
		{"a degraded check does not hide a failing one", []server.Check{
			{Name: "dataset:small", Run: checkErr(server.Degraded("file_gone", errors.New("gone")))},
			{Name: "dataset:large", Run: checkErr(search.EmptyDatasetError(search.Large))},
		}, http.StatusServiceUnavailable, `{"status":"unavailable","checks":{"dataset:large":"empty","dataset:small":"file_gone"},"failed":["dataset:small","dataset:large"]}`},
		{"a service behind an open circuit breaker", []server.Check{
			{Name: "limiter", Run: checkErr(fmt.Errorf("redis: %w", breaker.ErrOpen)), Optional: true},
		}, http.StatusOK, `{"status":"degraded","checks":{"limiter":"circuit_open"},"failed":["limiter"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := server.New(unreachable(t), server.WithReadiness(tt.checks...),
				server.WithSearchMiddleware(rejectAll(t, func(*http.Request) bool { return false })))
			rec := do(t, h, http.MethodGet, "/readyz")
			assertJSON(t, rec, tt.wantStatus, tt.wantBody)
			if got := rec.Header().Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
		})
	}
}

// A failing check is logged with its error when it starts failing and when
// it recovers, not at every probe.
func TestReadyzLogsChanges(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	var failing error
	h := server.New(unreachable(t), server.WithLogger(logger), server.WithReadiness(server.Check{
		Name: "limiter", Optional: true, Run: func(context.Context) error { return failing },
	}))
	probe := func(wantStatus int) {
		t.Helper()
		if rec := do(t, h, http.MethodGet, "/readyz"); rec.Code != wantStatus {
			t.Fatalf("GET /readyz = %d, want %d", rec.Code, wantStatus)
		}
	}
	probe(http.StatusOK)
	failing = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")
	probe(http.StatusOK)
	probe(http.StatusOK)
	failing = nil
	probe(http.StatusOK)

	if got := strings.Count(logs.String(), `msg="readiness check failing"`); got != 1 {
		t.Errorf("logged the failure %d times, want once:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "connection refused") || !strings.Contains(logs.String(), "check=limiter") {
		t.Errorf("failure log lacks the check or its error:\n%s", logs.String())
	}
	if got := strings.Count(logs.String(), `msg="readiness check recovered"`); got != 1 {
		t.Errorf("logged the recovery %d times, want once:\n%s", got, logs.String())
	}
}

func TestDatasetCheck(t *testing.T) {
	store := mustService(t, testCities()) // small only
	down := searching(func(context.Context, search.Query) ([]search.City, error) {
		return nil, fmt.Errorf("%w: connection refused", search.ErrUnavailable)
	})
	tests := []struct {
		name    string
		s       *search.Service
		d       search.Dataset
		wantErr error // nil for ready
	}{
		{"a loaded dataset is ready", store, search.Small, nil},
		{"an empty dataset is not", store, search.Large, search.ErrEmptyDataset},
		{"a store that is down is not", down, search.Small, search.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := server.DatasetCheck(tt.s, tt.d)
			if want := "dataset:" + string(tt.d); c.Name != want || c.Optional {
				t.Errorf("check %q (optional %v), want %q, required", c.Name, c.Optional, want)
			}
			err := c.Run(t.Context())
			if tt.wantErr == nil && err != nil || tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("Run = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestReadinessCheckNamesMustBeUnique(t *testing.T) {
	for _, checks := range [][]server.Check{
		{{Name: "a", Run: checkOK}, {Name: "a", Run: checkOK}},
		{{Name: "", Run: checkOK}},
		{{Name: "a"}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New with checks %+v did not panic", checks)
				}
			}()
			server.New(unreachable(t), server.WithReadiness(checks...))
		}()
	}
}
