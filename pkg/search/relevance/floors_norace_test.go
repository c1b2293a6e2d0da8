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

// TestRelevance runs the judgments on both datasets as `make run` imports
// them, and fails when a category's hit@1, hit@5 or MRR falls below its
// recorded floor. -update records the figures of this run instead.
func TestRelevance(t *testing.T) {
	src := relevance.Sources{
		SmallCSV:  shareddata.Path(t, "world-cities.csv"),
		GeoNames:  shareddata.Path(t, "geonames-cities1000.txt.gz"),
		LargeFile: shareddata.Path(t, "geonames-cities1000.txt.gz"),
	}
	cases, err := relevance.LoadJudgments(judgmentsFile)
	if err != nil {
		t.Fatal(err)
	}
	store, err := embedded.Open(t.TempDir(), embedded.Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc := search.NewService(store)
	var reports []relevance.Report
	for _, d := range search.Datasets {
		base, err := relevance.Import(t.Context(), store, d, src)
		if err != nil {
			t.Fatal(err)
		}
		r, err := relevance.Evaluate(t.Context(), svc, d, base, cases)
		if err != nil {
			t.Fatal(err)
		}
		reports = append(reports, r)
	}
	if *update {
		if err := relevance.WriteFloors(floorsFile, reports); err != nil {
			t.Fatal(err)
		}
		return
	}
	floors, err := relevance.ReadFloors(floorsFile)
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
