package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
)

// A snapshot file removed, replaced or damaged under a running serve:
// searches go on from memory, but /readyz (degraded, still 200) and
// /metrics say that the file on disk is gone, since a restart would lose
// the dataset; a new import puts things right.
func TestServeSaysWhenASnapshotFileIsGone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		harm func(t *testing.T, path string)
		word string
	}{
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, fileGone},
		{"replaced by another file", func(t *testing.T, path string) {
			if err := os.WriteFile(path+".new", []byte("not a snapshot"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}, fileCorrupt},
		{"damaged in place", func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("damage"), fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, fileCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := mustImportTwoCities(t)
			base := startServe(t, "--data-dir", dir, "--reload-interval", "50ms")
			const whole = `{"status":"degraded","checks":{"dataset:large":"empty","dataset:small":"ok"},"failed":["dataset:large"]}`
			if _, body := fetch(t, http.MethodGet, base+"/readyz", nil); body != whole {
				t.Fatalf("/readyz before = %s, want %s", body, whole)
			}
			tt.harm(t, filepath.Join(dir, "small.cfs"))
			want := fmt.Sprintf(`{"status":"degraded","checks":{"dataset:large":"empty","dataset:small":%q},"failed":["dataset:small","dataset:large"]}`, tt.word)
			poll.UntilNil(t, 5*time.Second, func() error {
				resp, body := fetch(t, http.MethodGet, base+"/readyz", nil)
				if resp.StatusCode != http.StatusOK || body != want {
					return fmt.Errorf("/readyz = %d %s, want 200 %s", resp.StatusCode, body, want)
				}
				return nil
			})
			if resp, body := fetch(t, http.MethodGet, base+"/search?q=par", nil); resp.StatusCode != http.StatusOK || !strings.Contains(body, "Paris") {
				t.Errorf("search with the file %s = %d %s, want Paris from memory", tt.name, resp.StatusCode, body)
			}
			if _, metrics := fetch(t, http.MethodGet, base+"/metrics", nil); !strings.Contains(metrics, `cityfinder_dataset_file_ok{dataset="small"} 0`+"\n") {
				t.Errorf(`/metrics lacks cityfinder_dataset_file_ok{dataset="small"} 0`)
			}

			mustRunCLI(t, "import", "--dataset", "small", "--file", writeFile(t, "cities.csv", twoCities), "--data-dir", dir, "--allow-shrink")
			poll.UntilNil(t, 5*time.Second, func() error {
				if _, body := fetch(t, http.MethodGet, base+"/readyz", nil); body != whole {
					return fmt.Errorf("/readyz after a new import = %s, want %s", body, whole)
				}
				return nil
			})
			if _, metrics := fetch(t, http.MethodGet, base+"/metrics", nil); !strings.Contains(metrics, `cityfinder_dataset_file_ok{dataset="small"} 1`+"\n") {
				t.Errorf(`/metrics after a new import lacks cityfinder_dataset_file_ok{dataset="small"} 1`)
			}
		})
	}
}
