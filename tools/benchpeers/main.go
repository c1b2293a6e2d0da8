// Command benchpeers measures cityfinder beside the search engines of
// issue 26's table on the same cities and the same query sets, in one
// run: `make bench-peers` runs it. Not part of `make test`, `make bench`
// or CI: the peers install from npm, the Go module proxy and Debian.
//
// It reads the full-size MaxMind look-alike (generated once into the
// cache, as `make bench` does), samples the query sets of tools/benchtable
// (benchenv.SampleQueries: 2,006 prefixes, 500 one-edit and 500 two-edit
// misspellings), writes the cities and the queries into a work directory,
// then runs each peer in a process of its own, one after the other: it
// builds its index, times every query once a round over three rounds with
// one client, and writes back its times, its answers and its memory. The
// table gives the median over the rounds of each set's p50 and p99, the
// share of misspellings whose city is in the top ten, the build time and
// the memory. docs/benchmarks.md says how each peer is configured.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/cityfinder/cityfinder/internal/benchenv"
)

// options are the command's flags.
type options struct {
	bin, file, cache, work, js string
	peers                      string
	rounds                     int
	timeout                    time.Duration
	heapMiB                    int
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("benchpeers: ")
	var opts options
	worker := flag.String("worker", "", "internal: run the Go peer of this name on -work's files")
	flag.StringVar(&opts.bin, "bin", "../../bin/cityfinder", "the cityfinder binary whose import builds the first row's store")
	flag.StringVar(&opts.file, "file", "", "the MaxMind-format dataset (default: the full-size look-alike in -cache, generated on first use)")
	flag.StringVar(&opts.cache, "cache", benchenv.CacheDir(), "directory of the generated dataset and of the node packages")
	flag.StringVar(&opts.work, "work", "", "work directory for the files and indexes (default: a new temporary one, removed after)")
	flag.StringVar(&opts.js, "js", ".", "directory of peers.js, package.json and package-lock.json")
	flag.StringVar(&opts.peers, "peers", strings.Join(peerIDs(), ","), "comma-separated peers to run, in order")
	flag.IntVar(&opts.rounds, "rounds", 3, "rounds over each query set")
	flag.DurationVar(&opts.timeout, "timeout", 30*time.Minute, "time each peer has to build and answer")
	flag.IntVar(&opts.heapMiB, "node-heap-mib", 12288, "heap limit of the node peers (FlexSearch needs about 5 GB on the full-size set)")
	flag.Parse()
	ctx := context.Background()
	if *worker != "" {
		if err := runGoWorker(ctx, *worker, opts); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(ctx, opts, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, opts options, out io.Writer) error {
	if opts.file == "" {
		var err error
		if opts.file, err = benchenv.Dataset(ctx, opts.cache); err != nil {
			return err
		}
	}
	var err error
	if opts.file, err = filepath.Abs(opts.file); err != nil {
		return err
	}
	if opts.bin, err = filepath.Abs(opts.bin); err != nil {
		return err
	}
	if opts.work == "" {
		if opts.work, err = os.MkdirTemp("", "benchpeers-"); err != nil {
			return err
		}
		defer os.RemoveAll(opts.work)
	}
	chosen, err := choosePeers(opts.peers)
	if err != nil {
		return err
	}
	log.Printf("reading %s and sampling the query sets", opts.file)
	w, err := prepare(opts.file, opts.work)
	if err != nil {
		return err
	}
	debug.FreeOSMemory() // the cities are in the files now: no peer should share the machine with them
	log.Printf("%d rows, %d cities, %d queries", w.rows, w.cities, len(w.queries))
	rep := report{file: opts.file, datasetRows: w.rows, cities: w.cities, loadBefore: loadAverage(), started: time.Now()}
	for _, p := range chosen {
		row := peerRow{peer: p}
		if why := p.missing(opts); why != "" {
			row.missing = why
			log.Printf("%s: %s", p.name, why)
		} else {
			log.Printf("%s: building and querying", p.name)
			start := time.Now()
			res, err := runPeer(ctx, p, opts)
			if err != nil {
				row.failed = err
				log.Printf("%s: failed: %v", p.name, err)
			} else {
				row.stats = summarize(res, w)
				log.Printf("%s: done in %s", p.name, time.Since(start).Round(time.Second))
			}
		}
		log.Print(row.line()) // a run cut short still leaves the rows it measured
		rep.peers = append(rep.peers, row)
	}
	rep.loadAfter = loadAverage()
	rep.print(out)
	return nil
}

// loadAverage is /proc/loadavg's first three fields: how loaded the
// machine was, which the absolute figures depend on.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func choosePeers(list string) ([]peer, error) {
	var out []peer
	for _, id := range strings.Split(list, ",") {
		p, ok := peerByID(strings.TrimSpace(id))
		if !ok {
			return nil, fmt.Errorf("no peer %q (the peers: %s)", id, strings.Join(peerIDs(), ", "))
		}
		out = append(out, p)
	}
	return out, nil
}
