// Command relevance measures the ranking on the judged queries of
// pkg/search/relevance/testdata/judgments.tsv: it imports the datasets
// that `make run` serves into a temporary embedded store, runs every case
// through search.Service.Find, and prints hit@1, hit@5 and MRR per
// category beside a plain population-order baseline, then the cases whose
// place did not come first; then the same for the held-out cases of
// validation.tsv, and the keystrokes that the most populous places need.
// See docs/relevance.md.
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
		src        relevance.Sources
		judgments  = flag.String("judgments", "pkg/search/relevance/testdata/judgments.tsv", "the judged queries")
		validation = flag.String("validation", "pkg/search/relevance/testdata/validation.tsv", "the held-out judged queries (none: \"\")")
		keystrokes = flag.Int("keystrokes", relevance.KeystrokePlaces, "how many of the most populous places to type letter by letter (0: none)")
		datasets   = flag.String("datasets", "small,large", "the datasets to measure, comma-separated")
		failures   = flag.Int("failures", 40, "how many cases that were not first to list per dataset (-1: all)")
	)
	flag.StringVar(&src.SmallCSV, "small", "datasets/world-cities.csv", "the okfn CSV (the small dataset; the large one's region names)")
	flag.StringVar(&src.GeoNames, "geonames", "", "the GeoNames dump that completes the small dataset (none: not enriched)")
	flag.StringVar(&src.LargeFile, "large", "", "the large dataset's file")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	sets := []judgedSet{{file: *judgments}}
	if *validation != "" {
		sets = append(sets, judgedSet{name: "validation", file: *validation})
	}
	if err := run(ctx, src, sets, strings.Split(*datasets, ","), *failures, *keystrokes); err != nil {
		log.Fatal(err)
	}
}

// judgedSet is a judgments file, named in the report unless it is the
// judged cases.
type judgedSet struct {
	name, file string
	cases      []relevance.Case
}

func run(ctx context.Context, src relevance.Sources, sets []judgedSet, datasets []string, failures, keystrokes int) error {
	for i := range sets {
		var err error
		if sets[i].cases, err = relevance.LoadJudgments(sets[i].file); err != nil {
			return err
		}
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
		for _, set := range sets {
			report, err := relevance.Evaluate(ctx, svc, d, base, set.cases)
			if err != nil {
				return err
			}
			report.Set = set.name
			if err := report.Write(os.Stdout, failures); err != nil {
				return err
			}
		}
		if keystrokes > 0 {
			k, err := relevance.MeasureKeystrokes(ctx, svc, d, base, keystrokes)
			if err != nil {
				return err
			}
			if err := k.Write(os.Stdout); err != nil {
				return err
			}
		}
	}
	return nil
}
