package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
	"github.com/cityfinder/cityfinder/pkg/search/mongo/mirror"
)

// mongoResult is issue 23's measure: the large snapshot served by replicas
// that load it from MongoDB (FerretDB unless CITYFINDER_TEST_MONGO_URI
// names a server), beside the embedded store reading it from disk.
type mongoResult struct {
	server              string // what served MongoDB's protocol
	publish             time.Duration
	load, localRead     time.Duration // in process: from MongoDB, and the embedded store from disk
	startup             time.Duration // serve --mongo-uri, start to first answered /search
	http, httpBoth      loadResult    // one replica; two at once, half the connections each
	rssKB               int64
	propagation         time.Duration // from the end of a publish to both replicas serving it
	propagationPublish  time.Duration
	propagationMeasured bool
}

// replicaReady is how long a replica may take to answer its first /search:
// it downloads the snapshot from MongoDB first, which took 10–23 s from a
// FerretDB on a loaded 2-core machine (the in-process load row).
const replicaReady = 3 * time.Minute

// measureMongo publishes the large snapshot into MongoDB, times its load by
// a mirror in process and by `serve --mongo-uri`, loads /search on one
// replica and on two, then publishes the enriched snapshot (if it was
// built) and times until both replicas serve it.
func measureMongo(ctx context.Context, bin string, r *report, set prefixSet, conns int, duration time.Duration) error {
	m := &r.mongo
	uri := os.Getenv(mongotest.EnvURI)
	m.server = "MongoDB at " + mongo.Describe(uri, "cityfinder_bench")
	if uri == "" {
		dir, err := os.MkdirTemp("", "cityfinder-bench-ferretdb-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		srv, err := mongotest.StartServer(dir)
		if err != nil {
			return err
		}
		defer srv.Close()
		uri, m.server = srv.URI(), "FerretDB 1.24 on SQLite, same host"
	}
	open := func() (*mongo.Store, error) {
		return mongo.Open(mongo.Options{URI: uri, Database: "cityfinder_bench", QueryTimeout: time.Minute})
	}
	pub, err := open()
	if err != nil {
		return err
	}
	defer pub.Close()
	snapshot := filepath.Join(r.storeDir, "large"+embedded.FileExt)
	cities, err := snapshotCities(r.storeDir)
	if err != nil {
		return err
	}
	log.Printf("MongoDB: publish %s into %s", snapshot, m.server)
	start := time.Now()
	if _, err := pub.PublishSnapshot(ctx, search.Large, snapshot, cities); err != nil {
		return err
	}
	m.publish = time.Since(start)

	start = time.Now()
	local, err := embedded.Open(r.storeDir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		return err
	}
	m.localRead = time.Since(start)
	local.Close()
	src, err := open()
	if err != nil {
		return err
	}
	mirrorDir, err := os.MkdirTemp("", "cityfinder-bench-mirror-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(mirrorDir)
	start = time.Now()
	mir, err := mirror.Open(ctx, src, mirror.Options{Dir: mirrorDir, PollInterval: -1})
	if err != nil {
		return err
	}
	m.load = time.Since(start)
	if mir.Generation(search.Large) == 0 {
		err := mir.Sync(ctx)
		mir.Close()
		return fmt.Errorf("the mirror did not load the large snapshot: %w", err)
	}
	mir.Close()

	log.Printf("MongoDB: two replicas, /search with defaults on one, then on both")
	var replicas []string
	for i := range 2 {
		dir := filepath.Join(mirrorDir, fmt.Sprint("replica", i))
		serve, base, startup, err := startServe(ctx, bin, dir, replicaReady, "--mongo-uri", uri, "--mongo-db", "cityfinder_bench", "--mongo-poll-interval", "1s")
		if err != nil {
			return err
		}
		defer benchenv.Stop(serve, 10*time.Second)
		replicas = append(replicas, base)
		if i == 0 {
			m.startup = startup
			urls := defaultURLs(base, set)
			load(urls, conns, time.Second) // warm up
			m.http = load(urls, conns, duration)
			if m.rssKB, err = benchenv.RSS(serve.Process.Pid); err != nil {
				return err
			}
		}
	}
	var both []string
	for i, u := range defaultURLs("", set) {
		both = append(both, replicas[i%2]+u)
	}
	m.httpBoth = load(both, conns, duration)

	enriched := filepath.Join(r.storeDir+"-enriched", "large"+embedded.FileExt)
	if _, err := os.Stat(enriched); err != nil {
		return nil // the enriched store was not built: no second generation to send
	}
	log.Printf("MongoDB: publish %s, until both replicas serve it", enriched)
	before := make([][]byte, len(replicas))
	for i, base := range replicas {
		if before[i], err = importStamp(base); err != nil {
			return err
		}
	}
	cities, err = snapshotCities(r.storeDir + "-enriched")
	if err != nil {
		return err
	}
	start = time.Now()
	if _, err := pub.PublishSnapshot(ctx, search.Large, enriched, cities); err != nil {
		return err
	}
	m.propagationPublish = time.Since(start)
	start = time.Now()
	for i, base := range replicas {
		for {
			now, err := importStamp(base)
			if err != nil {
				return err
			}
			if !bytes.Equal(now, before[i]) {
				break
			}
			if time.Since(start) > 2*time.Minute {
				return fmt.Errorf("replica %s did not serve the new generation in 2 minutes", base)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	m.propagation, m.propagationMeasured = time.Since(start), true
	return nil
}

// snapshotCities is how many cities the large snapshot in dir holds.
func snapshotCities(dir string) (int, error) {
	s, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1, Lazy: true})
	if err != nil {
		return 0, err
	}
	defer s.Close()
	st, err := s.Stats(context.Background(), search.Large)
	return st.Cities, err
}

// importStamp is the line of /metrics that gives the large dataset's import
// time: it changes when a replica serves a new generation.
func importStamp(base string) ([]byte, error) {
	body, err := fetch(base + "/metrics")
	if err != nil {
		return nil, err
	}
	for line := range bytes.SplitSeq(body, []byte("\n")) {
		if bytes.HasPrefix(line, []byte(`cityfinder_dataset_import_timestamp_seconds{dataset="large"}`)) {
			return line, nil
		}
	}
	return nil, fmt.Errorf("%s/metrics gives no import time of large", base)
}

// printMongo prints issue 23's rows.
func printMongo(w io.Writer, r *report) {
	m, d := r.mongo, r.httpDefault
	row(w, "10", "publish the large snapshot into "+m.server+" (GridFS, "+mb(r.snapshotBytes)+")", sec(m.publish), "", "", "", true)
	row(w, "10", "load the large snapshot from MongoDB in process (download, SHA-256, read)", sec(m.load),
		"embedded store reading it from disk: "+sec(m.localRead), ratio(m.load, m.localRead), "", true)
	row(w, "10", "serve --mongo-uri start to first answered /search (snapshot downloaded)", sec(m.startup),
		"serve on the data directory: "+sec(r.startup), ratio(m.startup, r.startup), "", true)
	row(w, "10", "replica: HTTP /search with defaults, requests/s", fmt.Sprintf("%.0f (%d failed)", m.http.rps, m.http.failures),
		fmt.Sprintf("embedded serve: %.0f", d.rps), fmt.Sprintf("%.0f%%", 100*m.http.rps/d.rps), "≥ 90%", m.http.rps >= 0.9*d.rps && m.http.failures == 0)
	row(w, "10", "two replicas on the same cores: HTTP /search with defaults, requests/s together", fmt.Sprintf("%.0f (%d failed)", m.httpBoth.rps, m.httpBoth.failures),
		fmt.Sprintf("embedded serve: %.0f", d.rps), fmt.Sprintf("%.0f%%", 100*m.httpBoth.rps/d.rps), "", true)
	row(w, "10", "replica RSS after loading and querying large", rss(m.rssKB), "embedded serve: "+rss(r.rssKB),
		fmt.Sprintf("%.2f×", float64(m.rssKB)/float64(r.rssKB)), "", true)
	if m.propagationMeasured {
		row(w, "10", "a new generation (the enriched snapshot): publish, then until both replicas serve it (poll 1 s)",
			sec(m.propagationPublish)+" + "+sec(m.propagation), "", "", "≤ 10 s to every replica", m.propagation <= 10*time.Second)
	}
}
