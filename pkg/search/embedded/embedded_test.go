package embedded_test

import (
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

func mustOpen(t testing.TB, dir string, opts embedded.Options) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(dir, opts)
	if err != nil {
		t.Fatalf("open %s: %v", dir, err)
	}
	return s
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) search.Store { return mustOpen(t, t.TempDir(), embedded.Options{}) })
}

// A small scan limit sends most prefixes of the conformance data through the
// lists precomputed at load time.
func TestStorePrecomputed(t *testing.T) {
	storetest.Run(t, func(t *testing.T) search.Store {
		return mustOpen(t, t.TempDir(), embedded.Options{ScanLimit: 2})
	})
}
