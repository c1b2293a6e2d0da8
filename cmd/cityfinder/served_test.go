package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

// TestMain starts importing the served data at once when a test that reads
// it is to run, and stops the FerretDB that the MongoDB tests share, if they
// started one.
func TestMain(m *testing.M) {
	flag.Parse()
	served.env = importEnv(os.Environ())
	if runs(servedReaders...) {
		csv := filepath.Join(shareddata.Dir(), servedCSV)
		geonames := filepath.Join(shareddata.Dir(), servedGeoNames)
		if exists(csv) && exists(geonames) {
			go served.load(csv, geonames)
		}
	}
	code := mongotest.Run(m)
	served.remove()
	os.Exit(code)
}

// servedReaders are the tests that read the served data. TestMain imports
// it while the tests that run one at a time go, so that these, which run
// in parallel after them, find it ready.
var servedReaders = []string{"TestREADMEExamples", "TestBrowserDemoPage", "TestImportEnrichesWithTheWholeGeoNamesDump", "TestImportReadsNoOtherSnapshot"}

// The shared files that the served data is imported from.
const (
	servedCSV      = "world-cities.csv"
	servedGeoNames = "geonames-cities1000.txt.gz"
)

// runs reports whether -test.run selects a top-level test of one of these
// names (-test.skip aside: a test skipped costs one import that nobody reads).
func runs(names ...string) bool {
	pattern := flag.Lookup("test.run").Value.String()
	if pattern == "" {
		return true
	}
	top, _, _ := strings.Cut(pattern, "/")
	re, err := regexp.Compile(top)
	if err != nil {
		return false
	}
	for _, name := range names {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// served is the data that `make run` serves, imported once for the tests
// that only read it (the README's examples, the demo page, the whole
// GeoNames enrichment): the small dataset enriched with GeoNames, and the
// large one from GeoNames with region names. Importing them is most of
// what those tests cost.
var served servedFixture

type servedFixture struct {
	once    sync.Once
	env     []string // the environment the imports run in (see importEnv)
	dir     string
	binDir  string // the cityfinder that imported it, if not this test binary
	err     error
	summary map[search.Dataset]string // what each import printed
}

// load imports the served data, once; every call returns when it is done.
func (s *servedFixture) load(csv, geonames string) {
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", "cityfinder-served-"); s.err != nil {
			return
		}
		s.summary = make(map[search.Dataset]string)
		name, prefix, err := s.importer()
		if err != nil {
			s.err = err
			return
		}
		for _, imp := range []struct {
			dataset search.Dataset
			args    []string
		}{
			{search.Small, []string{"import", "--dataset", "small", "--file", csv, "--geonames", geonames, "--data-dir", s.dir}},
			{search.Large, []string{"import", "--dataset", "large", "--file", geonames, "--region-names", csv, "--data-dir", s.dir}},
		} {
			// A process of its own: the tests that run meanwhile set
			// CITYFINDER_* variables (t.Setenv) that an import in this
			// process would read.
			cmd := exec.CommandContext(context.Background(), name, append(prefix, imp.args...)...)
			cmd.Env = s.env
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			out, err := cmd.Output()
			if err != nil {
				s.err = fmt.Errorf("cityfinder %v: %w\n%s", imp.args, err, errOut.String())
				return
			}
			s.summary[imp.dataset] = string(out)
		}
	})
}

// importer returns the program that imports the served data and the
// arguments before cityfinder's own: this test binary (see
// TestHelperProcess), or, under the race detector, where these imports
// take 35 CPU-seconds rather than 4, a cityfinder built from the same
// sources without it. The data is a fixture, not what the tests check:
// the imports they check run under the detector.
func (s *servedFixture) importer() (name string, prefix []string, err error) {
	self := []string{"-test.run=^TestHelperProcess$", "--"}
	if !raceEnabled {
		return os.Args[0], self, nil
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return os.Args[0], self, nil // a test binary run on its own
	}
	if s.binDir, err = os.MkdirTemp("", "cityfinder-served-bin-"); err != nil {
		return "", nil, err
	}
	bin := filepath.Join(s.binDir, "cityfinder")
	if out, err := exec.Command(gobin, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("build cityfinder without the race detector to import the served data: %w\n%s", err, out)
	}
	return bin, nil, nil
}

// importEnv returns env without the CITYFINDER_ settings a person's shell
// may hold, plus what makes the test binary run cityfinder (see
// TestHelperProcess): the served data is the defaults' import.
func importEnv(env []string) []string {
	kept := []string{"CITYFINDER_TEST_MAIN=1"}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CITYFINDER_") {
			kept = append(kept, kv)
		}
	}
	return kept
}

// remove deletes the served data, once an import under way is done.
func (s *servedFixture) remove() {
	s.once.Do(func() {})
	for _, dir := range []string{s.dir, s.binDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
}

// servedData returns the directory of the embedded store that holds the
// served data. Tests must not write to it: copy a snapshot out with
// copyServed to change it.
func servedData(t *testing.T) string {
	t.Helper()
	served.load(shareddata.Path(t, servedCSV), shareddata.Path(t, servedGeoNames))
	if served.err != nil {
		t.Fatalf("import the served data: %v", served.err)
	}
	return served.dir
}

// servedSummary returns what the import of dataset d of the served data
// printed.
func servedSummary(t *testing.T, d search.Dataset) string {
	t.Helper()
	servedData(t)
	return served.summary[d]
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
