// Package shareddata locates the real datasets that tests and benchmarks read
// from ../shared/datasets beside the checkout (never copied into the repo).
package shareddata

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the shared datasets directory: $CITYFINDER_SHARED_DATASETS, or
// ../shared/datasets beside the checkout.
func Dir() string {
	if d := os.Getenv("CITYFINDER_SHARED_DATASETS"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0) // <checkout>/internal/shareddata/shareddata.go
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "datasets")
}

// Path returns the path of the shared dataset file name. When the file is
// missing the test is skipped, saying so, except in CI (CI set), where the
// data is always present and its absence fails the test.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	p := filepath.Join(Dir(), name)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("shared dataset %s is missing in CI: %v", name, err)
		}
		tb.Skipf("shared dataset %s not available (expected in %s): %v", name, Dir(), err)
	}
	return p
}
