package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

const wantExpose = "RateLimit, RateLimit-Policy, Retry-After, Search-Complete, X-Request-Id"

func TestSearchCORS(t *testing.T) {
	tests := []struct {
		name                string
		origins             []string // nil: no WithCORS
		origin              string   // the request's Origin
		wantAllow, wantVary string
		wantExpose          bool
		wantStatus          int
	}{
		{"any origin", []string{"*"}, "https://a.example", "*", "", true, http.StatusOK},
		{"any origin, no Origin sent", []string{"*"}, "", "*", "", true, http.StatusOK},
		{"a listed origin is named", []string{"https://a.example", "https://b.example"}, "https://b.example", "https://b.example", "Origin", true, http.StatusOK},
		{"a listed origin with a slash in the config", []string{"https://a.example/"}, "https://a.example", "https://a.example", "Origin", true, http.StatusOK},
		{"an unlisted origin is not", []string{"https://a.example"}, "https://evil.example", "", "Origin", false, http.StatusOK},
		{"no CORS without the option", nil, "https://a.example", "", "", false, http.StatusOK},
		{"errors carry CORS too, so that a page can read them", []string{"*"}, "https://a.example", "*", "", true, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []server.Option
			if tt.origins != nil {
				opts = append(opts, server.WithCORS(tt.origins...))
			}
			h := server.New(mustService(t, testCities()), opts...)
			target := "/search?q=ist"
			if tt.wantStatus == http.StatusBadRequest {
				target = "/search?q=is"
			}
			req := httptest.NewRequest(http.MethodGet, target, nil)
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			hdr := rec.Header()
			if got := hdr.Get("Access-Control-Allow-Origin"); got != tt.wantAllow {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, tt.wantAllow)
			}
			if got := hdr.Get("Vary"); got != tt.wantVary {
				t.Errorf("Vary = %q, want %q", got, tt.wantVary)
			}
			if got, want := hdr.Get("Access-Control-Expose-Headers"), map[bool]string{true: wantExpose}[tt.wantExpose]; got != want {
				t.Errorf("Access-Control-Expose-Headers = %q, want %q", got, want)
			}
		})
	}
}

// The limiter's 429 is what a page most needs to read (Retry-After), so it
// carries CORS headers too.
func TestSearchCORSOnRateLimited(t *testing.T) {
	h := server.New(unreachable(t), server.WithCORS("*"), server.WithSearchMiddleware(rejectAll(t, nil)))
	rec := do(t, h, http.MethodGet, "/search?q=ist")
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Access-Control-Allow-Origin") != "*" ||
		rec.Header().Get("Access-Control-Expose-Headers") != wantExpose || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("429 = %d with headers %v, want CORS and no-store", rec.Code, rec.Header())
	}
}

func TestSearchPreflight(t *testing.T) {
	tests := []struct {
		name                string
		origins             []string
		origin              string
		wantAllowOrigin     string
		wantCORSPreflightOK bool
	}{
		{"any origin", []string{"*"}, "https://a.example", "*", true},
		{"a listed origin", []string{"https://a.example"}, "https://a.example", "https://a.example", true},
		{"an unlisted origin gets no permission", []string{"https://a.example"}, "https://evil.example", "", false},
		{"CORS off: a plain OPTIONS answer", nil, "https://a.example", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []server.Option
			if tt.origins != nil {
				opts = append(opts, server.WithCORS(tt.origins...))
			}
			// The middleware fails the test if the preflight reaches it.
			opts = append(opts, server.WithSearchMiddleware(rejectAll(t, func(r *http.Request) bool { return r.Method != http.MethodOptions })))
			h := server.New(unreachable(t), opts...)
			req := httptest.NewRequest(http.MethodOptions, "/search?q=ist", nil)
			req.Header.Set("Origin", tt.origin)
			req.Header.Set("Access-Control-Request-Method", "GET")
			req.Header.Set("Access-Control-Request-Headers", "x-request-id")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
				t.Fatalf("OPTIONS /search = %d %q, want 204 and no body", rec.Code, rec.Body)
			}
			hdr := rec.Header()
			want := map[string]string{
				"Allow":                        "GET, HEAD, OPTIONS",
				"Access-Control-Allow-Origin":  tt.wantAllowOrigin,
				"Access-Control-Allow-Methods": "",
				"Access-Control-Allow-Headers": "",
				"Access-Control-Max-Age":       "",
			}
			if tt.wantCORSPreflightOK {
				want["Access-Control-Allow-Methods"] = "GET, HEAD, OPTIONS"
				want["Access-Control-Allow-Headers"] = "X-Request-Id"
				want["Access-Control-Max-Age"] = "7200"
			}
			for k, v := range want {
				if got := hdr.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if hdr.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
		})
	}
}

func TestSearchCacheControl(t *testing.T) {
	failing := searching(func(context.Context, search.Query) ([]search.City, error) {
		return nil, search.ErrUnavailable
	})
	tests := []struct {
		name             string
		searcher         *search.Service
		opts             []server.Option
		target           string
		wantStatus       int
		wantCacheControl string
	}{
		{"a success is cached for max-age", nil, []server.Option{server.WithCacheMaxAge(time.Minute)}, "/search?q=ist", http.StatusOK, "public, max-age=60"},
		{"whole seconds", nil, []server.Option{server.WithCacheMaxAge(2500 * time.Millisecond)}, "/search?q=ist", http.StatusOK, "public, max-age=2"},
		{"an empty answer is a success", nil, []server.Option{server.WithCacheMaxAge(time.Minute)}, "/search?q=zzz", http.StatusOK, "public, max-age=60"},
		{"max-age 0 forbids caching", nil, []server.Option{server.WithCacheMaxAge(0)}, "/search?q=ist", http.StatusOK, "no-store"},
		{"without the option a success says nothing", nil, nil, "/search?q=ist", http.StatusOK, ""},
		{"a 400 is never stored", nil, []server.Option{server.WithCacheMaxAge(time.Minute)}, "/search?q=is", http.StatusBadRequest, "no-store"},
		{"a 503 is never stored", failing, []server.Option{server.WithCacheMaxAge(time.Minute)}, "/search?q=ist", http.StatusServiceUnavailable, "no-store"},
		{"a 429 is never stored", unreachable(t), []server.Option{server.WithCacheMaxAge(time.Minute), server.WithSearchMiddleware(rejectAll(t, nil))}, "/search?q=ist", http.StatusTooManyRequests, "no-store"},
		{"a 405 is not a search answer", nil, []server.Option{server.WithCacheMaxAge(time.Minute)}, "/search?q=ist", http.StatusMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.searcher
			if s == nil {
				s = mustService(t, testCities())
			}
			method := http.MethodGet
			if tt.wantStatus == http.StatusMethodNotAllowed {
				method = http.MethodPut
			}
			rec := do(t, server.New(s, tt.opts...), method, tt.target)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("Cache-Control"); got != tt.wantCacheControl {
				t.Errorf("Cache-Control = %q, want %q", got, tt.wantCacheControl)
			}
		})
	}
}
