package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
)

// A snapshot damaged on disk: serve says at start that the dataset is
// corrupt and how to recover, never that it is empty, and so does query;
// the import it names repairs it.
func TestCorruptSnapshotSaysHowToRecover(t *testing.T) {
	dir := mustImportTwoCities(t)
	path := filepath.Join(dir, "small.cfs")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff // the checksum no longer matches
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const howTo = "import it again to replace the file: `cityfinder import --dataset small`"

	p, _ := startServeProcess(t, "--data-dir", dir, "--drain-delay", "0", "--log-level", "info")
	poll.Until(t, 10*time.Second, "the serving line", func() bool { return strings.Contains(p.stderr.String(), `"msg":"serving"`) })
	log := p.stderr.String()
	if !strings.Contains(log, "dataset small is corrupt") || !strings.Contains(log, howTo) {
		t.Errorf("serve's log does not say that small is corrupt and how to recover:\n%s", log)
	}
	if strings.Contains(log, "dataset small is empty") {
		t.Errorf("serve's log calls the corrupt dataset empty:\n%s", log)
	}

	_, _, err = runCLI(t, "query", "par", "--data-dir", dir)
	if err == nil || !strings.HasPrefix(err.Error(), "dataset small is corrupt: ") || !strings.HasSuffix(err.Error(), howTo) {
		t.Errorf("query: err = %v, want it to say that small is corrupt and how to recover", err)
	}
	mustRunCLI(t, "import", "--file", writeFile(t, "cities.csv", twoCities), "--data-dir", dir)
	if out := mustRunCLI(t, "query", "par", "--data-dir", dir); !strings.Contains(out, "Paris") {
		t.Errorf("query after the re-import = %q", out)
	}
}
