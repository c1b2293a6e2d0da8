package limiter_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/limiter/memory"
)

// discard is a ResponseWriter that keeps nothing but its header, so the
// benchmarks measure the middleware rather than a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkMiddleware is the whole per-request cost of the limiter in front
// of a handler that does nothing: the client key, the in-memory decision and
// the RateLimit fields.
func BenchmarkMiddleware(b *testing.B) {
	// The window outlasts the run, so the hot key is accepted about a
	// million times and then rejected, and each of the 100k keys is
	// accepted 100 times and then rejected.
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	newHandler := func(b *testing.B, p limiter.Policy) http.Handler {
		l, err := limiter.New(memory.New(), p)
		if err != nil {
			b.Fatal(err)
		}
		return l.Middleware(noop)
	}
	const distinct = 100_000
	requests := make([]*http.Request, distinct)
	for i := range requests {
		requests[i] = httptest.NewRequest(http.MethodGet, "/search?q=par", nil)
		requests[i].RemoteAddr = fmt.Sprintf("10.%d.%d.%d:1234", i>>16, i>>8&0xff, i&0xff)
	}
	b.Run("hot-key-parallel", func(b *testing.B) {
		h := newHandler(b, limiter.Policy{Max: 1 << 20, Window: time.Hour})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			w := &discard{h: http.Header{}}
			for pb.Next() {
				h.ServeHTTP(w, requests[0])
			}
		})
	})
	b.Run("100k-keys-parallel", func(b *testing.B) {
		h := newHandler(b, limiter.Policy{Max: 100, Window: time.Hour})
		w := &discard{h: http.Header{}}
		for _, r := range requests {
			h.ServeHTTP(w, r)
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			w := &discard{h: http.Header{}}
			i := rand.IntN(distinct)
			for pb.Next() {
				h.ServeHTTP(w, requests[i%distinct])
				i += 7919
			}
		})
	})
}
