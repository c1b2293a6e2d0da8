package embedded_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// FileCheck finds what became of the file of a dataset served from memory:
// removed, replaced by something unreadable, damaged in place, or replaced
// by a newer whole import (which passes). A dataset not served has nothing
// to check.
func TestFileCheck(t *testing.T) {
	write := func(data []byte) func(t *testing.T, path string) {
		return func(t *testing.T, path string) {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name string
		harm func(t *testing.T, path string)
		want error // nil: passes
	}{
		{"untouched", func(*testing.T, string) {}, nil},
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, embedded.ErrFileGone},
		{"replaced by garbage", write([]byte("CFSNAP\x00\x01 not really")), search.ErrCorrupt},
		{"damaged in place", func(t *testing.T, path string) {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0xff
			write(b)(t, path)
		}, search.ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := mustOpen(t, dir, embedded.Options{ReloadInterval: -1})
			defer s.Close()
			check := embedded.NewFileCheck(s)
			if err := check.Check(search.Small); err != nil || check.Serves(search.Small) {
				t.Fatalf("a dataset never loaded: Check = %v, Serves = %v; want nil, false", err, check.Serves(search.Small))
			}
			storetest.MustLoad(t, s, search.Small, storetest.City("Paris", "France", "Ile-de-France", 0))
			if err := check.Check(search.Small); err != nil {
				t.Fatalf("the file as loaded: %v", err)
			}
			tt.harm(t, filepath.Join(dir, "small.cfs"))
			err := check.Check(search.Small)
			if (tt.want == nil) != (err == nil) || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("Check after the file was %s = %v, want %v", tt.name, err, tt.want)
			}
			if got := storetest.MustSearch(t, s, search.Small, "par", 10); len(got) != 1 {
				t.Errorf("searches from memory: %+v", got)
			}
			storetest.MustLoad(t, s, search.Small, storetest.City("Parla", "Spain", "Madrid", 0))
			if err := check.Check(search.Small); err != nil {
				t.Errorf("after a new load: %v", err)
			}
		})
	}
}
