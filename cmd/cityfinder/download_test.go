package main

import (
	"crypto/rand"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
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

// --download-timeout ends an import whose server trickles its file, and
// --download-max-bytes one whose body never ends: each with a message that
// names the URL without its password and the flag to raise, and nothing
// left in the downloads.
func TestImportDownloadLimits(t *testing.T) {
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for r.Context().Err() == nil {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	defer trickle.Close()
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, rand.Reader) // until the client hangs up
	}))
	defer endless.Close()
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
		args []string
		want []string
	}{
		{"a trickle", trickle, []string{"--download-timeout", "500ms"},
			[]string{"timed out: not downloaded within 500ms", "raise --download-timeout"}},
		{"an endless body", endless, []string{"--download-max-bytes", "100000"},
			[]string{"the file is more than 100,000 bytes", "raise --download-max-bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, _ := url.Parse(tc.srv.URL + "/world-cities.csv")
			u.User = url.UserPassword("reader", "S3cr?et")
			dir := t.TempDir()
			_, _, err := runCLI(t, append([]string{"import", "--file", u.String(), "--data-dir", dir}, tc.args...)...)
			if err == nil {
				t.Fatal("the import succeeded")
			}
			for _, want := range append(tc.want, "download http://reader:xxxxx@") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "S3cr") {
				t.Errorf("err = %v shows the password", err)
			}
			if entries, _ := os.ReadDir(filepath.Join(dir, "downloads")); len(entries) != 0 {
				t.Errorf("the failed download left %d files in downloads", len(entries))
			}
		})
	}
	if _, _, err := runCLI(t, "import", "--download-max-bytes", "0", "--data-dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "invalid --download-max-bytes") {
		t.Errorf("--download-max-bytes 0: err = %v, want it invalid", err)
	}
}
