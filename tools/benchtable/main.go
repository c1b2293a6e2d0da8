// Command benchtable measures cityfinder on the full-size large dataset and
// prints one table: each figure next to its baseline, measured in the same
// run on the same machine. `make bench` runs it.
//
// It generates the MaxMind look-alike once into a cache directory outside
// the repository, imports it with the cityfinder binary, then measures
// lookups in process, /search over HTTP on 127.0.0.1 (with a bare net/http
// handler as the baseline), the memory and start-up time of `serve`, the
// allocations of the lookup and the handler, biased, boxed and qualified
// queries, the same file imported again enriched with GeoNames, and
// replicas that load the snapshot from MongoDB (FerretDB by default).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("benchtable: ")
	testing.Init()
	bareAddr := flag.String("bare-server", "", "internal: serve a fixed JSON array on this address (the HTTP baseline)")
	bareBody := flag.String("bare-body", "", "internal: file holding the bare server's JSON body")
	bareHeader := flag.String("bare-header", "", "internal: JSON file holding the headers the bare server writes besides its Content-Type")
	bin := flag.String("bin", "bin/cityfinder", "the cityfinder binary to measure")
	cache := flag.String("cache", benchenv.CacheDir(), "directory for the generated dataset and the imported store")
	duration := flag.Duration("http-duration", 5*time.Second, "how long each HTTP load runs")
	conns := flag.Int("conns", 32, "concurrent HTTP connections")
	mongoOnly := flag.Bool("mongo-only", false, "measure only the MongoDB replicas and their baselines, on the stores already imported into -cache")
	httpOnly := flag.Bool("http-only", false, "measure only /search over HTTP (with and without the answer cache) and the bare handler, on the store already imported into -cache")
	flag.Parse()
	if *bareAddr != "" {
		log.Fatal(serveBare(*bareAddr, *bareBody, *bareHeader))
	}
	ctx := context.Background()
	if *httpOnly {
		if err := runHTTP(ctx, *bin, *cache, *duration, *conns, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(ctx, *bin, *cache, *duration, *conns, *mongoOnly, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// Every row the report prints; filled as the measurements run.
type report struct {
	rows                   int
	bareRead, importTime   time.Duration
	lookup                 lookupResult
	httpDefault, httpExact loadResult // /search with typo matching on and off
	httpTyped              loadResult // /search with defaults on the typed log (issue 26)
	// The uniform prefixes and the typed log with the answer cache,
	// without it and on the bare handler, in alternating rounds; the fresh
	// typed log, each text sent once (see freshLog), and its bare handler.
	httpUniform, httpTypedLog roundsLoad
	httpFresh                 cachedLoad
	httpFreshBare             loadResult
	httpBare                  loadResult
	answerHeaders             int        // the headers of a /search answer besides Date and Content-Type
	httpCity, httpReverse     loadResult // /cities/{id} and /reverse (issue 21)
	placesRSSKB               int64      // serve's RSS after them
	rssKB                     int64
	snapshotBytes             int64
	startup                   time.Duration
	lookupAllocs              allocResult
	handlerAllocs             allocResult
	datasetPath, storeDir     string
	enriched                  enrichedResult // the same file imported with --geonames
	mongo                     mongoResult    // replicas loading the snapshot from MongoDB
}

func run(ctx context.Context, bin, cache string, duration time.Duration, conns int, mongoOnly bool, out io.Writer) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("cityfinder binary: %w (run make build first)", err)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	var r report
	var err error
	if r.datasetPath, err = benchenv.Dataset(ctx, cache); err != nil {
		return err
	}
	log.Printf("bare encoding/csv read of %s", r.datasetPath)
	if r.rows, r.bareRead, err = bareRead(r.datasetPath); err != nil {
		return err
	}
	r.storeDir = filepath.Join(cache, "store")
	if _, err := os.Stat(filepath.Join(r.storeDir, "large.cfs")); !mongoOnly || err != nil {
		log.Printf("cityfinder import --dataset large (best of 2)")
		if r.importTime, _, err = timeImport(ctx, bin, r.datasetPath, r.storeDir); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(filepath.Join(r.storeDir, "large.cfs")); err == nil {
		r.snapshotBytes = fi.Size()
	}
	log.Printf("lookups in process")
	prefixes, err := samplePrefixes(r.storeDir)
	if err != nil {
		return err
	}
	if mongoOnly {
		log.Printf("HTTP: serve, the baseline of the replicas, %d connections, %s", conns, duration)
		if err := measureHTTP(ctx, bin, &r, prefixes, conns, duration); err != nil {
			return err
		}
		if err := measureMongo(ctx, bin, &r, prefixes, conns, duration); err != nil {
			return err
		}
		printMongo(out, &r)
		return nil
	}
	if r.lookup, err = measureLookups(ctx, r.storeDir, prefixes); err != nil {
		return err
	}
	if r.lookupAllocs, r.handlerAllocs, err = measureAllocs(r.storeDir); err != nil {
		return err
	}
	log.Printf("HTTP: serve and a bare handler, %d connections, %s each", conns, duration)
	if err := measureHTTP(ctx, bin, &r, prefixes, conns, duration); err != nil {
		return err
	}
	if err := measureEnriched(ctx, bin, &r, prefixes, conns, duration); err != nil {
		return err
	}
	if err := measureMongo(ctx, bin, &r, prefixes, conns, duration); err != nil {
		return err
	}
	printReport(out, &r, conns)
	return nil
}

// runHTTP is -http-only: the HTTP rows of /search on the store already
// imported into cache, for measuring the HTTP path alone, again and again.
func runHTTP(ctx context.Context, bin, cache string, duration time.Duration, conns int, out io.Writer) error {
	r := report{storeDir: filepath.Join(cache, "store")}
	log.Printf("sampling the queries")
	set, err := samplePrefixes(r.storeDir)
	if err != nil {
		return err
	}
	log.Printf("HTTP: serve with and without the answer cache, and the bare handler without and with /search's headers, %d connections, %s each", conns, duration)
	if err := measureHTTP(ctx, bin, &r, set, conns, duration); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n| # | measure | cityfinder | baseline | ratio | target |\n| --- | --- | --- | --- | --- | --- |\n")
	printCacheRows(out, &r, conns)
	return nil
}

// timeImport imports file into dir twice, with the extra flags, and
// returns the best time and the summary line of the last import.
func timeImport(ctx context.Context, bin, file, dir string, extra ...string) (time.Duration, string, error) {
	best, summary := time.Duration(0), ""
	for range 2 {
		start := time.Now()
		args := append([]string{"import", "--dataset", "large", "--file", file, "--data-dir", dir, "--log-level", "warn"}, extra...)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return 0, "", fmt.Errorf("import: %w", err)
		}
		summary = bytesTrim(out)
		log.Printf("  %s", summary)
		if d := time.Since(start); best == 0 || d < best {
			best = d
		}
	}
	return best, summary, nil
}

func bytesTrim(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return string(b)
}

// waitReady polls url until it answers 200 or the deadline passes, and
// returns when it first did.
func waitReady(url string, deadline time.Duration) (time.Time, error) {
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		resp, err := http.Get(url)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Now(), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Time{}, errors.New("no 200 from " + url + " in " + deadline.String())
}
