// Command relevance measures the ranking on the judged queries of
// pkg/search/relevance/testdata/judgments.tsv: it imports the datasets
// that `make run` serves into a temporary embedded store, runs every case
// through search.Service.Find, and prints hit@1, hit@5 and MRR per
// category beside a plain population-order baseline, then the cases whose
// place did not come first. See docs/relevance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/relevance"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("relevance: ")
	var (
		src       relevance.Sources
		judgments = flag.String("judgments", "pkg/search/relevance/testdata/judgments.tsv", "the judged queries")
		datasets  = flag.String("datasets", "small,large", "the datasets to measure, comma-separated")
		failures  = flag.Int("failures", 40, "how many cases that were not first to list per dataset (-1: all)")
	)
	flag.StringVar(&src.SmallCSV, "small", "datasets/world-cities.csv", "the okfn CSV (the small dataset; the large one's region names)")
	flag.StringVar(&src.GeoNames, "geonames", "", "the GeoNames dump that completes the small dataset (none: not enriched)")
	flag.StringVar(&src.LargeFile, "large", "", "the large dataset's file")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, src, *judgments, strings.Split(*datasets, ","), *failures); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, src relevance.Sources, judgments string, datasets []string, failures int) error {
	cases, err := relevance.LoadJudgments(judgments)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "cityfinder-relevance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		return err
	}
	defer store.Close()
	svc := search.NewService(store)
	for _, name := range datasets {
		d, err := search.ParseDataset(name)
		if err != nil {
			return err
		}
		if d == search.Large && src.LargeFile == "" {
			return fmt.Errorf("the large dataset needs -large")
		}
		start := time.Now()
		base, err := relevance.Import(ctx, store, d, src)
		if err != nil {
			return err
		}
		log.Printf("imported %s in %s", d, time.Since(start).Round(time.Millisecond))
		report, err := relevance.Evaluate(ctx, svc, d, base, cases)
		if err != nil {
			return err
		}
		if err := report.Write(os.Stdout, failures); err != nil {
			return err
		}
	}
	return nil
}
