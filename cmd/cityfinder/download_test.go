package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/importer"
)

// `import --dataset small` with no local copy, through a proxy that
// accepts and never answers, fails once --download-header-timeout has
// passed instead of hanging, naming the URL and the way around it.
func TestImportDownloadThroughAStalledProxy(t *testing.T) {
	proxy := "http://" + blackhole(t)
	work := t.TempDir()
	env := []string{"HTTPS_PROXY=" + proxy, "https_proxy=" + proxy, "HTTP_PROXY=" + proxy, "http_proxy=" + proxy, "NO_PROXY=", "no_proxy="}
	p := startProcess(t, work, env, "import", "--dataset", "small", "--data-dir", filepath.Join(work, "data"),
		"--download-header-timeout", "300ms", "--log-level", "warn")
	if err := p.wait(t, time.Minute); err == nil {
		t.Fatal("import through a stalled proxy succeeded")
	}
	msg := p.stderr.String()
	for _, want := range []string{"download " + importer.OKFNURL, "timed out: no answer within 300ms", "pass --file PATH"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q does not say %q", msg, want)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(work, "data", "downloads")); len(entries) != 0 {
		t.Errorf("the failed download left %d files in data/downloads", len(entries))
	}
}
