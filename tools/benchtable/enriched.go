package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

// enrichedFile completes the MaxMind rows with GeoNames' populations,
// locations and alternate names (import --geonames).
const enrichedFile = "geonames-cities1000.txt.gz"

// enrichedResult is the large dataset imported with --geonames, measured
// as the plain one is, to compare with it.
type enrichedResult struct {
	missing       error // the GeoNames file could not be found: nothing measured
	importTime    time.Duration
	enrichedRows  int // as the import's summary line says
	snapshotBytes int64
	median, p99   time.Duration // top-10 lookup
	http          loadResult    // /search with its defaults
	rssKB         int64
}

var enrichedCount = regexp.MustCompile(`([\d,]+) enriched from GeoNames`)

// measureEnriched imports the dataset again with --geonames into a second
// directory (best of 2), then times its lookups and /search with the
// defaults over the same prefixes as the plain import's, and reads serve's
// RSS.
func measureEnriched(ctx context.Context, bin string, r *report, set prefixSet, conns int, duration time.Duration) error {
	e := &r.enriched
	file := filepath.Join(shareddata.Dir(), enrichedFile)
	if _, e.missing = os.Stat(file); e.missing != nil {
		log.Printf("no enriched rows: %v", e.missing)
		return nil
	}
	dir := r.storeDir + "-enriched"
	log.Printf("cityfinder import --dataset large --geonames %s (best of 2)", file)
	summary := ""
	var err error
	if e.importTime, summary, err = timeImport(ctx, bin, r.datasetPath, dir, "--geonames", file); err != nil {
		return err
	}
	m := enrichedCount.FindStringSubmatch(summary)
	if m == nil {
		return fmt.Errorf("no enriched count in the import's summary %q", summary)
	}
	e.enrichedRows, _ = strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	fi, err := os.Stat(filepath.Join(dir, "large.cfs"))
	if err != nil {
		return err
	}
	e.snapshotBytes = fi.Size()

	log.Printf("lookups in process, enriched")
	store, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		return err
	}
	times, err := timeSearch(ctx, store, set.all())
	store.Close()
	if err != nil {
		return err
	}
	e.median, e.p99 = percentile(times, 50), percentile(times, 99)

	log.Printf("HTTP: serve on the enriched store, %d connections, %s", conns, duration)
	serve, base, _, err := startServe(ctx, bin, dir, serveReady)
	if err != nil {
		return err
	}
	defer benchenv.Stop(serve, 10*time.Second)
	urls := defaultURLs(base, set)
	load(urls, conns, time.Second) // warm up
	e.http = load(urls, conns, duration)
	e.rssKB, err = benchenv.RSS(serve.Process.Pid)
	return err
}
