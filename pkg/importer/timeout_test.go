package importer_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/silent"
	"github.com/cityfinder/cityfinder/pkg/importer"
)

// A download through a server or proxy that stalls at any phase fails with
// that phase's timeout instead of hanging, names the URL, says to pass
// --file, and leaves the old file alone. Only the phase under test has a
// short timeout, so the error's phase shows which one fired.
func TestDownloadTimeouts(t *testing.T) {
	const short, long = 200 * time.Millisecond, time.Minute
	hang := silent.Listen(t) // accepts, reads, never answers
	stalledBody := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte("name,country,subcountry,geonameid\n"))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // the client gives up
	}))
	defer stalledBody.Close()
	backlog := fullBacklog(t) // "" where the test cannot make one
	viaProxy := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: hang})}}

	tests := []struct {
		name     string
		url      string
		client   *http.Client
		timeouts importer.Timeouts
		phase    string
		message  string
	}{
		{"nothing accepts the connection", "http://" + backlog + "/world-cities.csv", nil,
			importer.Timeouts{Connect: short, TLS: long, Header: long, Idle: long}, importer.PhaseConnect, "not connected within 200ms"},
		{"server accepts and says nothing to a TLS hello", "https://" + hang + "/world-cities.csv", nil,
			importer.Timeouts{Connect: long, TLS: short, Header: long, Idle: long}, importer.PhaseTLS, "no TLS handshake within 200ms"},
		{"server accepts and never answers the request", "http://" + hang + "/world-cities.csv", nil,
			importer.Timeouts{Connect: long, TLS: long, Header: short, Idle: long}, importer.PhaseHeader, "no answer within 200ms"},
		{"proxy accepts and never answers CONNECT", "https://example.invalid/world-cities.csv", viaProxy,
			importer.Timeouts{Connect: long, TLS: long, Header: short, Idle: long}, importer.PhaseHeader, "no answer within 200ms"},
		{"server sends the headers then stalls the body", stalledBody.URL + "/world-cities.csv", nil,
			importer.Timeouts{Connect: long, TLS: long, Header: long, Idle: short}, importer.PhaseIdle, "no data for 200ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.phase == importer.PhaseConnect && backlog == "" {
				t.Skip("a connection that hangs needs Linux")
			}
			dir := t.TempDir()
			dst := filepath.Join(dir, "world-cities.csv")
			const old = "the copy downloaded last month\n"
			if err := os.WriteFile(dst, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			err := importer.Download(t.Context(), tt.url, dst, importer.DownloadOptions{Client: tt.client, Timeouts: tt.timeouts})
			var te *importer.TimeoutError
			if !errors.As(err, &te) || te.Phase != tt.phase {
				t.Fatalf("err = %v, want a %s timeout", err, tt.phase)
			}
			for _, want := range []string{tt.url, tt.message, "--file PATH"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
			if got, _ := os.ReadFile(dst); string(got) != old {
				t.Errorf("dst now holds %q, want the old file", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only dst (no temporary file left)", len(entries))
			}
		})
	}
}
