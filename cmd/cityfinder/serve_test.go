package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"
)

// serve refuses a --data-dir that does not exist, with query's message,
// rather than start and answer 503 to every search; an empty directory,
// where datasets are yet to be imported, it serves.
func TestServeRefusesAMissingDataDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nowhere")
	_, _, queryErr := runCLI(t, "query", "par", "--data-dir", missing)
	if queryErr == nil {
		t.Fatal("query of a missing data directory succeeded")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, _, err := runCLIContext(ctx, "serve", "--data-dir", missing, "--addr", "127.0.0.1:0", "--drain-delay", "0")
	if ctx.Err() != nil {
		t.Fatalf("serve --data-dir %s started (and ran until the test stopped it: %v), want it refused", missing, err)
	}
	if err == nil || err.Error() != queryErr.Error() {
		t.Errorf("serve --data-dir %s:\n got  %v\n want %v (as query says)", missing, err, queryErr)
	}
	base := startServe(t, "--data-dir", t.TempDir())
	if status, _ := get(t, base+"/search?q=par"); status != 503 {
		t.Errorf("search of an empty data directory = %d, want 503", status)
	}
}
