package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// geonamesExcerpt writes the rows of the real GeoNames cities1000 dump whose
// names start with the letters the replica tests query, and every 200th
// other row, plus extra rows: about 2,000 cities, as FerretDB reads every
// document for every query and inserts slowly. The dump is read once.
func geonamesExcerpt(t *testing.T, name string, extra ...string) string {
	t.Helper()
	path := shareddata.Path(t, "geonames-cities1000.txt.gz")
	geonamesRows.once.Do(func() { geonamesRows.rows, geonamesRows.err = readGeoNamesExcerpt(path) })
	if geonamesRows.err != nil {
		t.Fatal(geonamesRows.err)
	}
	var b strings.Builder
	b.WriteString(geonamesRows.rows)
	for _, line := range extra {
		b.WriteString(line + "\n")
	}
	return writeFile(t, name, b.String())
}

// geonamesRows is the rows of geonamesExcerpt, read once: a scan of the whole
// dump costs seconds under the race detector.
var geonamesRows struct {
	once sync.Once
	rows string
	err  error
}

func readGeoNamesExcerpt(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for i := 0; sc.Scan(); i++ {
		line := sc.Text()
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) < 3 {
			continue
		}
		slug := search.Slug(fields[1])
		if i%200 == 0 || strings.HasPrefix(slug, "zur") || strings.HasPrefix(slug, "kol") || strings.HasPrefix(slug, "paris") {
			b.WriteString(line + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return b.String(), nil
}

// geonamesRow is a made-up GeoNames row of a city of 10,000 people.
func geonamesRow(id int, name string) string {
	return fmt.Sprintf("%d\t%s\t%s\t\t47.0\t8.0\tP\tPPL\tCH\t\tZH\t\t\t\t10000\t\t400\tEurope/Zurich\t2026-01-01", id, name, name)
}

// replica is a serve run in this process that a test can stop.
type replica struct {
	base string
	stop func()
}

// startReplica runs `cityfinder serve` until stop or the end of the test,
// and waits until it answers.
func startReplica(t *testing.T, args ...string) *replica {
	t.Helper()
	addr := freeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := runCLIContext(ctx, append([]string{"serve", "--addr", addr, "--log-level", "warn", "--drain-delay", "0", "--max", "10000000"}, args...)...)
		done <- err
	}()
	var once sync.Once
	r := &replica{base: "http://" + addr, stop: func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
	}}
	t.Cleanup(r.stop)
	poll.Until(t, 20*time.Second, "serve to answer on "+addr, func() bool {
		resp, err := http.Get(r.base + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return r
}

// firstName GETs a search and returns the first hit's "name, region, country".
func firstName(t *testing.T, base, q string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	code, body := get(t, base+"/search?dataset=large&limit=1&q="+url.QueryEscape(q))
	took := time.Since(start)
	var hits []struct{ Name, Region, Country string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &hits) != nil || len(hits) == 0 {
		return fmt.Sprintf("%d %s", code, body), took
	}
	return hits[0].Name + ", " + hits[0].Region + ", " + hits[0].Country, took
}

// Replicas on one MongoDB answer as the embedded store does, from memory;
// an import reaches every one of them within seconds while they are under
// load, without a 5xx; with MongoDB killed they keep answering, from
// memory and, restarted, from their copies; MongoDB back, they take the
// next import. FerretDB has no change streams: the replicas poll, every
// 500ms here. (On a MongoDB replica set a change stream wakes them first.)
func TestReplicasOnOneMongoDB(t *testing.T) {
	srv := mongotest.Start(t)
	first := geonamesExcerpt(t, "first.txt")
	// The replicas give up on MongoDB after 500ms, so that they see it go
	// at once; the imports, which are never run while it is down, wait as
	// long as the default says, as FerretDB on a busy machine can take
	// longer than that to hand out a connection.
	mongoArgs := []string{"--mongo-uri", srv.URI(), "--mongo-query-timeout", ferretQueryTimeout, "--mongo-connect-timeout", "500ms"}
	importArgs := []string{"import", "--dataset", "large", "--log-level", "warn", "--mongo-uri", srv.URI(), "--mongo-query-timeout", ferretQueryTimeout}
	dir := t.TempDir()
	mustRunCLI(t, "import", "--dataset", "large", "--file", first, "--data-dir", dir, "--log-level", "error")
	start := time.Now()
	mustRunCLI(t, append(importArgs, "--file", first)...)
	t.Logf("import of %s into FerretDB: %s", first, time.Since(start).Round(time.Millisecond))

	embedded := startServe(t, "--data-dir", dir, "--max", "10000000")
	replicaDirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	replicaArgs := func(i int) []string {
		return append([]string{"--data-dir", replicaDirs[i], "--mongo-poll-interval", "500ms", "--ready-datasets", "large"}, mongoArgs...)
	}
	var replicas []*replica
	for i := range replicaDirs {
		start := time.Now()
		replicas = append(replicas, startReplica(t, replicaArgs(i)...))
		t.Logf("replica %d up, its snapshot loaded from FerretDB, in %s", i, time.Since(start).Round(time.Millisecond))
	}

	// The same answers as the embedded store, byte for byte, typos,
	// alternate names, qualifiers, bias and boxes included.
	queries := []string{"zuirch", "cologne", "paris tx", "paris texas", "kol", "zur", "par", "parsi", "colgne", "köln", "paris, fr",
		"zurich&near=47.4,8.5", "par&near=33.6,-95.5&limit=10", "par&box=40,-10,55,20&limit=10", "kol&countries=de", "qqqqq", "p"}
	for _, q := range queries {
		path := "/search?dataset=large&q=" + strings.ReplaceAll(q, " ", "%20")
		wantCode, want := get(t, embedded+path)
		for i, r := range replicas {
			if code, got := get(t, r.base+path); code != wantCode || got != want {
				t.Errorf("replica %d, GET %s:\n replica  %d %s\n embedded %d %s", i, path, code, got, wantCode, want)
			}
		}
	}
	for _, tc := range []struct{ q, want string }{
		{"zuirch", "Zürich, ZH, Switzerland"}, {"cologne", "Köln, 07, Germany"}, {"paris tx", "Paris, TX, United States"},
	} {
		for i, r := range replicas {
			got, _ := firstName(t, r.base, tc.q)
			best := time.Hour
			for range 3 {
				_, took := firstName(t, r.base, tc.q)
				best = min(best, took)
			}
			if got != tc.want || best > 50*time.Millisecond {
				t.Errorf("replica %d, %q: %s in %s, want %s in under 50ms", i, tc.q, got, best, tc.want)
			}
		}
	}

	// An import under load.
	ctx, stopLoad := context.WithCancel(t.Context())
	var requests, failures atomic.Int64
	var wg sync.WaitGroup
	for _, r := range replicas {
		wg.Go(func() {
			for i := 0; ctx.Err() == nil; i++ {
				resp, err := http.Get(r.base + "/search?dataset=large&q=" + []string{"par", "zuirch", "kol", "cologne"}[i%4])
				if err != nil {
					if ctx.Err() == nil {
						failures.Add(1)
					}
					continue
				}
				resp.Body.Close()
				requests.Add(1)
				if resp.StatusCode >= 500 {
					failures.Add(1)
				}
			}
		})
	}
	second := geonamesExcerpt(t, "second.txt", geonamesRow(99000001, "Zurrwiller"))
	start = time.Now()
	mustRunCLI(t, append(importArgs, "--file", second)...)
	imported := time.Since(start)
	for i, r := range replicas {
		poll.Until(t, 10*time.Second, fmt.Sprintf("replica %d to serve the second import", i), func() bool {
			got, _ := firstName(t, r.base, "zurrw")
			return strings.HasPrefix(got, "Zurrwiller")
		})
	}
	reached := time.Since(start) - imported
	stopLoad()
	wg.Wait()
	t.Logf("second import: %s; on every replica %s later, with %d searches meanwhile, %d failed", imported.Round(time.Millisecond),
		reached.Round(time.Millisecond), requests.Load(), failures.Load())
	if failures.Load() != 0 {
		t.Errorf("%d of %d searches during the import failed or got a 5xx", failures.Load(), requests.Load())
	}

	// MongoDB killed: answers from memory.
	srv.Stop(t)
	for i, r := range replicas {
		if got, _ := firstName(t, r.base, "zurrw"); !strings.HasPrefix(got, "Zurrwiller") {
			t.Errorf("replica %d with MongoDB down: %s, want Zurrwiller from memory", i, got)
		}
	}
	// Restarted with MongoDB still down: answers from the copy, and
	// /readyz says so.
	replicas[0].stop()
	replicas[0] = startReplica(t, replicaArgs(0)...)
	if got, _ := firstName(t, replicas[0].base, "zurrw"); !strings.HasPrefix(got, "Zurrwiller") {
		t.Errorf("replica restarted with MongoDB down: %s, want Zurrwiller from its copy", got)
	}
	code, body := get(t, replicas[0].base+"/readyz")
	var ready struct {
		Status string
		Checks map[string]string
	}
	if json.Unmarshal([]byte(body), &ready) != nil || code != http.StatusOK || ready.Status != "degraded" || ready.Checks["mongo"] != "unavailable" ||
		ready.Checks["dataset:large"] != "ok" {
		t.Errorf("/readyz of a replica serving its copy = %d %s, want 200, degraded, mongo unavailable, dataset:large ok", code, body)
	}

	// MongoDB back: the next import reaches every replica.
	srv.Restart(t)
	third := geonamesExcerpt(t, "third.txt", geonamesRow(99000001, "Zurrwiller"), geonamesRow(99000002, "Zurrbach"))
	mustRunCLI(t, append(importArgs, "--file", third)...)
	for i, r := range replicas {
		poll.Until(t, 10*time.Second, fmt.Sprintf("replica %d to serve the import after MongoDB's restart", i), func() bool {
			got, _ := firstName(t, r.base, "zurrb")
			return strings.HasPrefix(got, "Zurrbach")
		})
	}
	if !poll.Within(5*time.Second, func() bool {
		code, body = get(t, replicas[0].base+"/readyz")
		return code == http.StatusOK && strings.Contains(body, `"mongo":"ok"`)
	}) {
		t.Errorf("/readyz of replica 0 once MongoDB is back = %d %s, want 200 with mongo ok", code, body)
	}
}
