package redis_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/limiter"
)

// BenchmarkAllow measures decisions against the test's Redis on loopback:
// one round trip each, so the figures are mostly Redis and the network. Like
// a server, it keeps many requests in flight: 8 goroutines per CPU.
func BenchmarkAllow(b *testing.B) {
	p := limiter.Policy{Max: 5, Window: time.Hour}
	b.Run("hot-key-parallel", func(b *testing.B) {
		store, _ := mustOpen(b)
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := store.Allow(b.Context(), "192.0.2.1", p); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	const distinct = 100_000
	keys := make([]string, distinct)
	for i := range keys {
		keys[i] = fmt.Sprintf("10.%d.%d.%d", i>>16, i>>8&0xff, i&0xff)
	}
	b.Run("100k-keys-parallel", func(b *testing.B) {
		store, _ := mustOpen(b)
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			i := rand.IntN(distinct)
			for pb.Next() {
				if _, err := store.Allow(b.Context(), keys[i%distinct], p); err != nil {
					b.Error(err)
					return
				}
				i += 7919
			}
		})
	})
}
