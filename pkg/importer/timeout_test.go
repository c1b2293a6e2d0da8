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

// A download has an overall deadline and a size cap besides its phases'
// timeouts: a server that trickles its body a byte at a time, never idle
// for long, fails once Timeouts.Total has passed, and an endless body, or
// one that says it is too large, fails at MaxBytes rather than filling
// the disk. The old file stays, no temporary file is left, and the
// message names the URL without its password.
func TestDownloadDeadlineAndSizeCap(t *testing.T) {
	const short, long = 300 * time.Millisecond, time.Minute
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100000")
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
				w.Write([]byte("x"))
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer trickle.Close()
	endless := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("Tirana,Albania,Tirana,3183875\n", 1000))
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer endless.Close()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000000000")
		w.Write([]byte("name,country,subcountry,geonameid\n"))
	}))
	defer huge.Close()
	withPassword := func(srv *httptest.Server) string {
		u, _ := url.Parse(srv.URL + "/world-cities.csv")
		u.User = url.UserPassword("reader", "S3cr?et")
		return u.String()
	}

	tests := []struct {
		name     string
		url      string
		timeouts importer.Timeouts
		maxBytes int64
		check    func(error) bool
		message  string
	}{
		{"a trickle outlasts the overall deadline", withPassword(trickle),
			importer.Timeouts{Connect: long, TLS: long, Header: long, Idle: long, Total: short}, 0,
			func(err error) bool {
				var te *importer.TimeoutError
				return errors.As(err, &te) && te.Phase == importer.PhaseTotal
			}, "not downloaded within 300ms"},
		{"an endless body passes the size cap", withPassword(endless), importer.Timeouts{Total: long}, 1 << 20,
			func(err error) bool { return errors.Is(err, importer.ErrDownloadTooLarge) }, "more than 1,048,576 bytes"},
		{"a body that says it is too large", withPassword(huge), importer.Timeouts{Total: long}, 1 << 20,
			func(err error) bool { return errors.Is(err, importer.ErrDownloadTooLarge) }, "5,000,000,000 bytes, more than 1,048,576"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "world-cities.csv")
			const old = "the copy downloaded last month\n"
			if err := os.WriteFile(dst, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err := importer.Download(t.Context(), tt.url, dst, importer.DownloadOptions{Timeouts: tt.timeouts, MaxBytes: tt.maxBytes})
			if !tt.check(err) {
				t.Fatalf("err = %v, want the %s", err, tt.name)
			}
			if took := time.Since(start); took > 20*time.Second {
				t.Errorf("the download took %s to fail", took)
			}
			redacted := strings.Replace(tt.url, "S3cr%3Fet", "xxxxx", 1)
			for _, want := range []string{redacted, tt.message, "--file PATH"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "S3cr") {
				t.Errorf("err = %v shows the password", err)
			}
			if got, _ := os.ReadFile(dst); string(got) != old {
				t.Errorf("dst now holds %.40q…, want the old file", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only dst (no temporary file left)", len(entries))
			}
		})
	}
}
