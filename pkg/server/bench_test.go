package server_test

import (
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// syntheticCities makes n plausible, reproducible cities from syllables.
func syntheticCities(n int) []search.City {
	syllables := []string{"ber", "lin", "ka", "ro", "ma", "sa", "to", "na", "ri", "vel", "dor", "an", "ist", "mo", "ne", "pa", "la", "gor", "tam", "bu"}
	countries := []string{"France", "Germany", "Italy", "Spain", "Poland", "Brazil", "India", "Japan", "Kenya", "Peru"}
	r := rand.New(rand.NewPCG(1, 2))
	cities := make([]search.City, n)
	for i := range cities {
		var name strings.Builder
		for range 2 + r.IntN(3) {
			name.WriteString(syllables[r.IntN(len(syllables))])
		}
		s := name.String()
		s = strings.ToUpper(s[:1]) + s[1:]
		country := countries[r.IntN(len(countries))]
		cities[i] = search.City{
			ID: uint32(i + 1), Name: s, Slug: search.Slug(s), Country: country,
			CountryCode: strings.ToLower(country[:2]), Subcountry: "Region " + string(rune('A'+i%26)),
			Population: int64(r.IntN(1_000_000)),
		}
	}
	return cities
}

// discardResponse is a ResponseWriter that keeps nothing but its headers,
// so that the benchmark counts the handler's allocations, not a recorder's.
type discardResponse struct {
	header http.Header
	status int
}

func (w *discardResponse) Header() http.Header         { return w.header }
func (w *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardResponse) WriteHeader(status int)      { w.status = status }

func BenchmarkSearch(b *testing.B) {
	h := server.New(mustService(b, syntheticCities(20_000)))
	benchmarks := []struct {
		name, target string
		status       int
	}{
		{"prefix limit 10", "/search?q=ber", http.StatusOK},
		{"prefix limit 100", "/search?q=ber&limit=100", http.StatusOK},
		{"long prefix", "/search?q=berlinka", http.StatusOK},
		{"no match", "/search?q=zzz", http.StatusOK},
		{"too short", "/search?q=be", http.StatusBadRequest},
	}
	for _, bm := range benchmarks {
		b.Run(bm.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bm.target, nil)
			w := &discardResponse{header: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
			if w.status != bm.status {
				b.Fatalf("status = %d, want %d", w.status, bm.status)
			}
		})
	}
}

// BenchmarkSearchAnswerCache is /search answered from the answer cache,
// with the metrics and CORS that serve adds, beside the same search
// answered by the Service.
func BenchmarkSearchAnswerCache(b *testing.B) {
	svc := mustService(b, syntheticCities(20_000))
	for _, bm := range []struct {
		name  string
		bytes int
	}{{"cached", 32 << 20}, {"searched", 0}} {
		b.Run(bm.name, func(b *testing.B) {
			h := server.New(svc, server.WithMetrics(prometheus.NewRegistry()), server.WithCORS("*"),
				server.WithCacheMaxAge(time.Minute), server.WithAnswerCache(bm.bytes))
			req := httptest.NewRequest(http.MethodGet, "/search?q=berlin&dataset=small", nil)
			w := &discardResponse{header: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.header)
				h.ServeHTTP(w, req)
			}
			if w.status != http.StatusOK {
				b.Fatalf("status = %d", w.status)
			}
		})
	}
}

// BenchmarkSearchServed is /search through the chain that serve builds
// (the rate limiter with its sessions, metrics, CORS, Cache-Control, a
// logger at warn) with the answer cache off, so that every request is
// searched and encoded: on the full-size large set when
// CITYFINDER_BENCH_STORE names its store (as make bench imports it), else
// on the synthetic cities.
func BenchmarkSearchServed(b *testing.B) {
	svc, dataset, texts := servedService(b)
	lim, err := limiter.New(memory.New(), limiter.Policy{Max: 1 << 30, Window: time.Second},
		limiter.WithSessions(server.LimitedSearch, limiter.DefaultSessions()))
	if err != nil {
		b.Fatal(err)
	}
	h := server.New(svc, server.WithLogger(slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		server.WithSearchMiddleware(lim.Middleware), server.WithMetrics(prometheus.NewRegistry()), server.WithCORS("*"),
		server.WithCacheMaxAge(time.Minute), server.WithAnswerCache(0))
	reqs := make([]*http.Request, len(texts))
	for i, q := range texts {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/search?dataset="+dataset+"&q="+q, nil)
	}
	w := &discardResponse{header: make(http.Header)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		clear(w.header)
		r := *reqs[i%len(reqs)] // a request's Form is parsed anew each time, as it arrives
		h.ServeHTTP(w, &r)
		if w.status != http.StatusOK {
			b.Fatalf("%s: status = %d", r.URL, w.status)
		}
		i++
	}
}

// servedService is the Service of BenchmarkSearchServed, the dataset it
// searches and the texts to ask it.
func servedService(b *testing.B) (*search.Service, string, []string) {
	b.Helper()
	dir := os.Getenv("CITYFINDER_BENCH_STORE")
	if dir == "" {
		return mustService(b, syntheticCities(20_000)), "small", []string{"ber", "berlin", "kar", "rom", "sato", "nama"}
	}
	store, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	return search.NewService(store), "large", []string{"san", "zuri", "lond", "mosc", "bar", "kyo", "frankf", "rio%20d", "new%20y", "ist"}
}
