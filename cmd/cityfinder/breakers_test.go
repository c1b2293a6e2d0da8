package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A Redis or a MongoDB that hangs (accepts connections, never answers)
// costs the first searches a timeout each; once the circuit breaker opens
// (three in a row by default, the start's ping included), searches skip it:
// the limiter fails open at once, MongoDB's searches answer 503 at once.
// /readyz and /metrics say the breaker is open. MongoDB's breaker guards
// --mongo-mode query, where every search is a MongoDB query; in snapshot
// mode searches are answered from memory and never wait for MongoDB.
func TestServeSkipsAHungDependency(t *testing.T) {
	t.Parallel()
	dir := mustImportTwoCities(t)
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		check      string // the /readyz check of the hung service
		breaker    string
	}{
		{"Redis", []string{"--data-dir", dir, "--redis-url", "redis://" + blackhole(t) + "/0"}, http.StatusOK, "limiter", "redis"},
		{"MongoDB", []string{"--mongo-uri", "mongodb://" + blackhole(t) + "/", "--mongo-mode", "query", "--mongo-connect-timeout", "250ms",
			"--mongo-query-timeout", "250ms"}, http.StatusServiceUnavailable, "dataset:small", "mongo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := startServe(t, append(tt.args, "--max", "1000")...)
			// A search that waited for the hung service took at least its
			// timeout (250ms, for Redis the limiter's default); a shorter
			// delay is this shared machine's noise, not a wait.
			const searches, slowest = 20, 250 * time.Millisecond
			var slow []string
			var others time.Duration // the slowest of the fast ones
			for i := range searches {
				start := time.Now()
				resp, _ := fetch(t, http.MethodGet, base+"/search?q=par", nil)
				took := time.Since(start)
				if resp.StatusCode != tt.wantStatus {
					t.Fatalf("search %d = %d, want %d", i, resp.StatusCode, tt.wantStatus)
				}
				if took >= slowest {
					slow = append(slow, fmt.Sprintf("#%d %s", i, took.Round(time.Millisecond)))
				} else {
					others = max(others, took)
				}
			}
			if len(slow) > 3 {
				t.Errorf("%d of %d searches took over %s with %s hung: %s", len(slow), searches, slowest, tt.name, strings.Join(slow, ", "))
			}
			t.Logf("with %s hung: slow searches %v, the others at most %s", tt.name, slow, others)
			_, ready := fetch(t, http.MethodGet, base+"/readyz", nil)
			if want := fmt.Sprintf("%q:%q", tt.check, "circuit_open"); !strings.Contains(ready, want) {
				t.Errorf("/readyz = %s, want %s", ready, want)
			}
			_, metrics := fetch(t, http.MethodGet, base+"/metrics", nil)
			for _, want := range []string{
				fmt.Sprintf(`cityfinder_breaker_state{breaker=%q,state="open"} 1`, tt.breaker),
				fmt.Sprintf(`cityfinder_breaker_opened_total{breaker=%q} 1`, tt.breaker),
			} {
				if !strings.Contains(metrics, want+"\n") {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
	}
}
