package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary act as the harness's Go worker: runPeer
// starts os.Executable() with -worker, which under `go test` is this
// binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-worker" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestPeersAnswer runs the harness on a small generated dataset with every
// peer installed here, each in its own process as `make bench-peers` runs
// them, and checks that each answered the queries: every query timed in
// every round, and nearly every prefix of a real name answered. A peer
// that is not installed is skipped, saying how to install it. The
// cityfinder row needs a built binary (make build).
func TestPeersAnswer(t *testing.T) {
	work := t.TempDir()
	file := filepath.Join(t.TempDir(), "cities.txt")
	writeMaxMind(t, file, 3000)
	opts := options{bin: "../../bin/cityfinder", file: file, cache: t.TempDir(), work: work, js: ".", rounds: 2, timeout: 5 * time.Minute, heapMiB: 1024}
	if cache := os.Getenv("CITYFINDER_BENCH_CACHE"); cache != "" {
		opts.cache = cache // the node packages, installed once
	}
	var err error
	if opts.bin, err = filepath.Abs(opts.bin); err != nil {
		t.Fatal(err)
	}
	w, err := prepare(file, work)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		t.Run(p.id, func(t *testing.T) {
			if why := p.missing(opts); why != "" {
				t.Skipf("%s: %s", p.name, why)
			}
			res, err := runPeer(t.Context(), p, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, set := range setNames {
				if n := len(res.Times[set]); n != opts.rounds {
					t.Errorf("%s: %d rounds timed, want %d", set, n, opts.rounds)
				}
			}
			var prefixes, answered int
			for i, q := range w.queries {
				if q.set == setPrefix {
					prefixes++
					if i < len(res.Hits[setPrefix]) && len(res.Hits[setPrefix][i]) > 0 {
						answered++
					}
				}
			}
			if answered < prefixes*9/10 {
				t.Errorf("%d of %d prefixes of real names answered, want 90%%", answered, prefixes)
			}
			if res.BuildSeconds <= 0 || res.RSSKiB <= 0 {
				t.Errorf("build %.3f s, RSS %d KiB: want both measured", res.BuildSeconds, res.RSSKiB)
			}
			var out bytes.Buffer
			(&report{peers: []peerRow{{peer: p, stats: summarize(res, w)}}}).print(&out)
			t.Log(out.String())
		})
	}
}

// writeMaxMind writes n cities with random names of 5–12 letters, some of
// two words, in the MaxMind format, enough for benchenv.SampleQueries'
// 2,000 distinct prefixes.
func writeMaxMind(t *testing.T, path string, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(26, 2))
	word := func() string {
		b := make([]byte, 5+rng.IntN(8))
		for i := range b {
			b[i] = "abcdefghijklmnopqrstuvwxyz"[rng.IntN(26)]
		}
		return string(b)
	}
	var b strings.Builder
	b.WriteString("Country,City,AccentCity,Region,Population,Latitude,Longitude\n")
	for range n {
		name := word()
		if rng.IntN(4) == 0 {
			name += " " + word()
		}
		fmt.Fprintf(&b, "fr,%s,%s,A8,%d,%.4f,%.4f\n", name, name, rng.IntN(100000), rng.Float64()*90, rng.Float64()*180)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
