package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// demoPage returns a handler with the demo page, limited to 5 searches in 3 s.
func demoPage(tb testing.TB, opts ...server.Option) http.Handler {
	tb.Helper()
	cfg := server.PageConfig{SearchMax: 5, SearchWindow: 3 * time.Second}
	return server.New(mustService(tb, testCities()), append([]server.Option{server.WithDemoPage(cfg)}, opts...)...)
}

// assetLinks are the /static/… URLs that the page links to.
var assetLinks = regexp.MustCompile(`(?:href|src)="(/static/[^"]+)"`)

// pageAssets returns the asset URLs of the page at /.
func pageAssets(tb testing.TB, h http.Handler) []string {
	tb.Helper()
	var urls []string
	for _, m := range assetLinks.FindAllStringSubmatch(do(tb, h, http.MethodGet, "/").Body.String(), -1) {
		urls = append(urls, m[1])
	}
	return urls
}

// assertNoExternalURLs fails when body refers to anything by http:// or
// https://: the page must work offline, from its own origin only.
func assertNoExternalURLs(tb testing.TB, name, body string) {
	tb.Helper()
	for _, scheme := range []string{"http://", "https://"} {
		if i := strings.Index(body, scheme); i >= 0 {
			tb.Errorf("%s refers to %q: the page must not load anything from elsewhere", name, body[i:min(len(body), i+60)])
		}
	}
}

func TestDemoPage(t *testing.T) {
	h := demoPage(t)
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		t.Run(method, func(t *testing.T) {
			rec := do(t, h, method, "/")
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			wantHeaders := map[string]string{
				"Content-Type":           "text/html; charset=utf-8",
				"Cache-Control":          "no-cache",
				"X-Content-Type-Options": "nosniff",
				"Referrer-Policy":        "no-referrer",
			}
			for k, want := range wantHeaders {
				if got := rec.Header().Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
				t.Errorf("Content-Security-Policy = %q, want only the page's own origin", csp)
			}
			if rec.Header().Get("ETag") == "" {
				t.Error("no ETag: browsers could not revalidate the page cheaply")
			}
			if method == http.MethodHead && rec.Body.Len() != 0 {
				t.Errorf("HEAD has a body of %d bytes", rec.Body.Len())
			}
		})
	}

	body := do(t, h, http.MethodGet, "/").Body.String()
	assertNoExternalURLs(t, "index.html", body)
	for _, want := range []string{
		`role="combobox"`, `aria-expanded="false"`, `aria-controls="suggestions"`,
		`role="listbox"`, `role="status"`, `name="dataset" value="small"`, `name="dataset" value="large"`,
		`<select id="lang"`, `<option value="ar" lang="ar" dir="rtl">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if got := pageAssets(t, h); len(got) != 2 {
		t.Errorf("the page links to %q, want the script and the style sheet", got)
	}
}

func TestDemoPageAssets(t *testing.T) {
	h := demoPage(t)
	wantTypes := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
	for _, url := range pageAssets(t, h) {
		t.Run(url, func(t *testing.T) {
			name, version, ok := strings.Cut(url, "?v=")
			if !ok || version == "" {
				t.Fatalf("%s has no version: a new binary's asset would hide behind the cached old one", url)
			}
			wantType := wantTypes[name[strings.LastIndex(name, "."):]]

			rec := do(t, h, http.MethodGet, url)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			if got := rec.Header().Get("Content-Type"); got != wantType {
				t.Errorf("Content-Type = %q, want %q", got, wantType)
			}
			if got := rec.Header().Get("Cache-Control"); got != "public, max-age=31536000, immutable" {
				t.Errorf("Cache-Control of the versioned URL = %q, want it kept for good", got)
			}
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
			assertNoExternalURLs(t, name, rec.Body.String())

			unversioned := do(t, h, http.MethodGet, name)
			if unversioned.Code != http.StatusOK || unversioned.Body.String() != rec.Body.String() {
				t.Errorf("GET %s = %d, want 200 and the same file", name, unversioned.Code)
			}
			if got := unversioned.Header().Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control of %s = %q, want no-cache: the URL does not name one version", name, got)
			}

			req := httptest.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("If-None-Match", rec.Header().Get("ETag"))
			cached := httptest.NewRecorder()
			h.ServeHTTP(cached, req)
			if cached.Code != http.StatusNotModified || cached.Body.Len() != 0 {
				t.Errorf("GET with the current ETag = %d with %d bytes, want 304 and none", cached.Code, cached.Body.Len())
			}
		})
	}
}

func TestDemoPageConfig(t *testing.T) {
	// testCities are the small dataset; large was never imported.
	const datasets = `"datasets":[{"name":"small","available":true,"cities":8},{"name":"large","available":false}]`
	tests := []struct {
		name string
		cfg  server.PageConfig
		want string
	}{
		{"the default limit", server.PageConfig{SearchMax: 5, SearchWindow: 3 * time.Second},
			`{"limit":{"max":5,"window_seconds":3},"min_letters":3,"max_length":100,` + datasets + `}`},
		{"a window in fractions of a second", server.PageConfig{SearchMax: 1, SearchWindow: 1500 * time.Millisecond},
			`{"limit":{"max":1,"window_seconds":1.5},"min_letters":3,"max_length":100,` + datasets + `}`},
		{"no limit", server.PageConfig{},
			`{"limit":null,"min_letters":3,"max_length":100,` + datasets + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := server.New(mustService(t, testCities()), server.WithDemoPage(tt.cfg))
			rec := do(t, h, http.MethodGet, "/config")
			assertJSON(t, rec, http.StatusOK, tt.want)
			if got := rec.Header().Get("Cache-Control"); got != "no-cache" {
				t.Errorf("Cache-Control = %q, want no-cache: a restarted server may have another limit", got)
			}
		})
	}
}

// /config says which datasets can be searched now: an import while the
// server runs shows at the next read, and a store that cannot answer
// leaves every dataset available, for the search to say what is wrong.
func TestDemoPageConfigDatasets(t *testing.T) {
	t.Run("an import shows at the next read", func(t *testing.T) {
		store := mustStore(t, testCities())
		h := server.New(search.NewService(store), server.WithDemoPage(server.PageConfig{}))
		if got := configDatasets(t, h); got != `[{"name":"small","available":true,"cities":8},{"name":"large","available":false}]` {
			t.Errorf("before importing large: datasets = %s", got)
		}
		if _, err := store.Load(t.Context(), search.Large, &search.SliceReader{Cities: testCities()[:3]}, search.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := configDatasets(t, h); got != `[{"name":"small","available":true,"cities":8},{"name":"large","available":true,"cities":3}]` {
			t.Errorf("after importing large: datasets = %s", got)
		}
	})
	t.Run("a store that cannot answer", func(t *testing.T) {
		down := searching(func(context.Context, search.Query) ([]search.City, error) {
			return nil, fmt.Errorf("connect: %w", search.ErrUnavailable)
		})
		h := server.New(down, server.WithDemoPage(server.PageConfig{}))
		if got := configDatasets(t, h); got != `[{"name":"small","available":true},{"name":"large","available":true}]` {
			t.Errorf("datasets = %s", got)
		}
	})
	t.Run("a store that hangs", func(t *testing.T) {
		hung := searching(func(ctx context.Context, _ search.Query) ([]search.City, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		h := server.New(hung, server.WithDemoPage(server.PageConfig{}))
		start := time.Now()
		if got := configDatasets(t, h); got != `[{"name":"small","available":true},{"name":"large","available":true}]` {
			t.Errorf("datasets = %s", got)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("GET /config took %v with a store that hangs, want it bounded", took)
		}
	})
}

// configDatasets returns the "datasets" member of GET /config, as JSON.
func configDatasets(tb testing.TB, h http.Handler) string {
	tb.Helper()
	rec := do(tb, h, http.MethodGet, "/config")
	var body struct{ Datasets json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); rec.Code != http.StatusOK || err != nil {
		tb.Fatalf("GET /config = %d %s (%v)", rec.Code, rec.Body, err)
	}
	return string(body.Datasets)
}

// Loading the page must not cost a client any of its searches: only /search
// goes through the search middleware.
func TestDemoPageIsNotRateLimited(t *testing.T) {
	reject := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { answerTooMany(w) })
	}
	h := demoPage(t, server.WithSearchMiddleware(reject))
	for _, target := range append([]string{"/", "/config"}, pageAssets(t, h)...) {
		if rec := do(t, h, http.MethodGet, target); rec.Code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", target, rec.Code)
		}
	}
	if rec := do(t, h, http.MethodGet, "/search?q=ist"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("GET /search = %d, want the middleware's 429", rec.Code)
	}
}

func TestDemoPageRoutes(t *testing.T) {
	h := demoPage(t)
	tests := []struct {
		name, method, target string
		wantStatus           int
		wantBody, wantAllow  string
	}{
		{"POST to the page", http.MethodPost, "/", http.StatusMethodNotAllowed, `{"message":"Method not allowed"}`, "GET, HEAD"},
		{"POST to the config", http.MethodPost, "/config", http.StatusMethodNotAllowed, `{"message":"Method not allowed"}`, "GET, HEAD"},
		{"DELETE an asset", http.MethodDelete, "/static/app.js", http.StatusMethodNotAllowed, `{"message":"Method not allowed"}`, "GET, HEAD"},
		{"unknown asset", http.MethodGet, "/static/nope.js", http.StatusNotFound, `{"message":"Not found"}`, ""},
		{"the embedding Go file is not an asset", http.MethodGet, "/static/embed.go", http.StatusNotFound, `{"message":"Not found"}`, ""},
		{"the page is only at its root", http.MethodGet, "/index.html", http.StatusNotFound, `{"message":"Not found"}`, ""},
		{"no listing of the assets", http.MethodGet, "/static/", http.StatusNotFound, `{"message":"Not found"}`, ""},
		{"unknown route", http.MethodGet, "/nope", http.StatusNotFound, `{"message":"Not found"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, tt.method, tt.target)
			assertJSON(t, rec, tt.wantStatus, tt.wantBody)
			if got := rec.Header().Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
		})
	}
}

// Without WithDemoPage the API is only the API: / and /config stay 404.
func TestDemoPageIsOptional(t *testing.T) {
	h := server.New(unreachable(t))
	for _, target := range []string{"/", "/config", "/static/app.js"} {
		assertJSON(t, do(t, h, http.MethodGet, target), http.StatusNotFound, `{"message":"Not found"}`)
	}
}
