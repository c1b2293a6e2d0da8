package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

// result is what a peer's worker writes into result.json (the node
// workers write the same fields): the time of its build, its memory
// after the queries, and for each set the time of every query in every
// round and the slugs of every answer of the last round.
type result struct {
	Config       string                `json:"config"`
	BuildSeconds float64               `json:"build_seconds"`
	RSSKiB       int64                 `json:"rss_kib"`
	RSSWhat      string                `json:"rss_what,omitempty"`
	Times        map[string][][]int64  `json:"times_ns"` // set → round → query
	Hits         map[string][][]string `json:"hits"`     // set → query → slugs
}

// engine is one peer as a Go worker drives it: Start starts its server,
// if any (not timed), Build indexes every city (in descending
// population), Find returns the slugs of the top ten
// answers to a query as a person types it (q.text), and Close frees what
// Build made. memory reports the resident memory of the index.
type engine interface {
	Start(ctx context.Context) error
	Build(ctx context.Context, cities []city) error
	Find(ctx context.Context, q query) ([]string, error)
	Memory() (kib int64, what string, err error)
	Close() error
	Config() string
}

// runWorker builds the engine on dir's cities, times its queries over
// rounds and writes result.json into dir.
func runWorker(ctx context.Context, e engine, dir string, rounds int) error {
	cities, queries, err := readInput(dir)
	if err != nil {
		return err
	}
	defer e.Close()
	if err := e.Start(ctx); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	start := time.Now()
	if err := e.Build(ctx, cities); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	res := result{Config: e.Config(), BuildSeconds: time.Since(start).Seconds(), Times: map[string][][]int64{}, Hits: map[string][][]string{}}
	cities = nil
	bySet := map[string][]query{}
	for _, q := range queries {
		bySet[q.set] = append(bySet[q.set], q)
	}
	for r := range rounds {
		// One set after the other, each query once a round: no query runs
		// twice in a row (as tools/benchtable's timeRounds).
		for _, set := range setNames {
			times := make([]int64, len(bySet[set]))
			for i, q := range bySet[set] {
				t := time.Now()
				hits, err := e.Find(ctx, q)
				times[i] = time.Since(t).Nanoseconds()
				if err != nil {
					return fmt.Errorf("%s %q: %w", set, q.text, err)
				}
				if r == rounds-1 {
					res.Hits[set] = append(res.Hits[set], hits)
				}
			}
			res.Times[set] = append(res.Times[set], times)
		}
	}
	if res.RSSKiB, res.RSSWhat, err = e.Memory(); err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, resultFile), b, 0o644)
}

// selfRSS is the worker's own resident memory: the peers that live in it.
func selfRSS() (int64, string, error) {
	debug.FreeOSMemory() // what the worker read and dropped is no peer's
	kib, err := benchenv.RSS(os.Getpid())
	return kib, "the worker process", err
}
