package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

func TestMain(m *testing.M) {
	code := mongotest.Run(m)
	served.remove()
	os.Exit(code)
}

// served is the data that `make run` serves, imported once for the tests
// that only read it (the README's examples, the demo page): the small
// dataset enriched with GeoNames, and the large one from GeoNames with
// region names. Importing them is most of what those tests cost.
var served servedFixture

type servedFixture struct {
	once sync.Once
	dir  string
	err  error
}

// remove deletes the served data, if it was imported.
func (s *servedFixture) remove() {
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// servedData returns the directory of the embedded store that holds the
// served data. Tests must not write to it: copy a snapshot out with
// copyServed to change it.
func servedData(t *testing.T) string {
	t.Helper()
	csv := shareddata.Path(t, "world-cities.csv")
	geonames := shareddata.Path(t, "geonames-cities1000.txt.gz")
	served.once.Do(func() {
		if served.dir, served.err = os.MkdirTemp("", "cityfinder-served-"); served.err != nil {
			return
		}
		for _, args := range [][]string{
			{"import", "--dataset", "small", "--file", csv, "--geonames", geonames, "--data-dir", served.dir},
			{"import", "--dataset", "large", "--file", geonames, "--region-names", csv, "--data-dir", served.dir},
		} {
			if _, errOut, err := runCLI(t, args...); err != nil {
				served.err = fmt.Errorf("cityfinder %v: %w\n%s", args, err, errOut)
				return
			}
		}
	})
	if served.err != nil {
		t.Fatalf("import the served data: %v", served.err)
	}
	return served.dir
}

// copyServed copies the served snapshot of dataset d into dir.
func copyServed(t *testing.T, d search.Dataset, dir string) {
	t.Helper()
	name := string(d) + embedded.FileExt
	data, err := os.ReadFile(filepath.Join(servedData(t), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}
