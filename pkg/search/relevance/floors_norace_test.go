//go:build !race

// The relevance run is single-threaded ranking over two real datasets: the
// race detector finds nothing in it and makes it seven times slower, so
// `make test` runs it in a pass of its own, without -race.

package relevance_test

import (
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/relevance"
)

// TestRelevance imports both datasets as `make run` does, and fails when a
// figure falls below its recorded floor: a category's hit@1, hit@5 or MRR
// on the judged cases, or on the held-out validation cases (each file
// with floors of its own), or the keystrokes of the most populous places.
// -update records the figures of this run instead.
func TestRelevance(t *testing.T) {
	src := relevance.Sources{
		SmallCSV:  shareddata.Path(t, "world-cities.csv"),
		GeoNames:  shareddata.Path(t, "geonames-cities1000.txt.gz"),
		LargeFile: shareddata.Path(t, "geonames-cities1000.txt.gz"),
	}
	store, err := embedded.Open(t.TempDir(), embedded.Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := search.NewService(store)
	bases := map[search.Dataset]*relevance.Baseline{}
	for _, d := range search.Datasets {
		if bases[d], err = relevance.Import(t.Context(), store, d, src); err != nil {
			t.Fatal(err)
		}
	}
	for _, set := range []struct{ name, judgments, floors string }{
		{"judgments", judgmentsFile, floorsFile},
		{"validation", validationFile, validationFloorsFile},
	} {
		t.Run(set.name, func(t *testing.T) {
			checkJudgments(t, svc, bases, set.name, set.judgments, set.floors)
		})
	}
	t.Run("keystrokes", func(t *testing.T) {
		var measures []relevance.Keystrokes
		for _, d := range search.Datasets {
			k, err := relevance.MeasureKeystrokes(t.Context(), svc, d, bases[d], relevance.KeystrokePlaces)
			if err != nil {
				t.Fatal(err)
			}
			measures = append(measures, k)
		}
		if *update {
			if err := relevance.WriteKeystrokeFloors(keystrokeFloorsFile, measures); err != nil {
				t.Fatal(err)
			}
			return
		}
		floors, err := relevance.ReadKeystrokeFloors(keystrokeFloorsFile)
		if err != nil {
			t.Fatal(err)
		}
		for i := range measures {
			if drops := floors.Check(&measures[i]); len(drops) > 0 {
				var out strings.Builder
				if err := measures[i].Write(&out); err != nil {
					t.Fatal(err)
				}
				t.Errorf("%s\n%s", strings.Join(drops, "\n"), out.String())
			}
		}
	})
}

// checkJudgments evaluates the cases of judgments on every dataset of
// bases and compares the figures with the floors recorded in floorsPath,
// or records them with -update.
func checkJudgments(t *testing.T, svc *search.Service, bases map[search.Dataset]*relevance.Baseline, set, judgments, floorsPath string) {
	t.Helper()
	cases, err := relevance.LoadJudgments(judgments)
	if err != nil {
		t.Fatal(err)
	}
	var reports []relevance.Report
	for _, d := range search.Datasets {
		r, err := relevance.Evaluate(t.Context(), svc, d, bases[d], cases)
		if err != nil {
			t.Fatal(err)
		}
		if set != "judgments" {
			r.Set = set
		}
		reports = append(reports, r)
	}
	if *update {
		if err := relevance.WriteFloors(floorsPath, reports); err != nil {
			t.Fatal(err)
		}
		return
	}
	floors, err := relevance.ReadFloors(floorsPath)
	if err != nil {
		t.Fatal(err)
	}
	for i := range reports {
		drops := floors.Check(&reports[i])
		if len(drops) == 0 {
			continue
		}
		var out strings.Builder
		if err := reports[i].Write(&out, -1); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%s\n%s\n(a ranking that is better on the whole may record new floors: go test ./pkg/search/relevance -run TestRelevance -update)",
			strings.Join(drops, "\n"), out.String())
	}
}
