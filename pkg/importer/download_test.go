package importer_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
)

func TestDownload(t *testing.T) {
	body := "name,country,subcountry,geonameid\n" + strings.Repeat("Tirana,Albania,Tirana,3183875\n", 5000)
	const old = "the copy downloaded last month\n"
	tests := []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
		wantErr string           // "" for success
		wantIs  error
	}{
		{
			name:    "success",
			handler: func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) },
		},
		{
			name:    "not found",
			handler: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) },
			wantErr: "server answered 404 Not Found",
		},
		{
			name: "body cut short",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "100000")
				w.Write([]byte(body[:1000]))
			},
			wantErr: "unexpected EOF",
		},
		{
			name:    "connection refused",
			wantErr: "connection refused",
			wantIs:  syscall.ECONNREFUSED,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			url := srv.URL + "/data/world-cities.csv"
			if tt.handler == nil {
				srv.Close()
			} else {
				defer srv.Close()
			}
			dir := t.TempDir()
			dst := filepath.Join(dir, "world-cities.csv")
			if err := os.WriteFile(dst, []byte(old), 0o644); err != nil {
				t.Fatal(err)
			}
			var p recorder
			err := importer.Download(t.Context(), url, dst, importer.DownloadOptions{Client: srv.Client(), Progress: &p})

			want := body
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.bytes != int64(len(body)) || p.calls < 2 || p.rows != 0 {
					t.Errorf("progress heard %d bytes in %d calls, %d rows; want %d bytes in several calls", p.bytes, p.calls, p.rows, len(body))
				}
			} else {
				want = old
				for _, s := range []string{url, tt.wantErr, "--file PATH"} {
					if err == nil || !strings.Contains(err.Error(), s) {
						t.Errorf("err = %v, want it to say %q", err, s)
					}
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("err = %v, want it to wrap %v", err, tt.wantIs)
				}
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("dst holds %d bytes %.40q…, want %d bytes %.40q…", len(got), got, len(want), want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want only dst (no temporary file left)", len(entries))
			}
		})
	}
}

func TestDownloadCreatesAReadableFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("x")) }))
	defer srv.Close()
	dst := filepath.Join(t.TempDir(), "new.csv")
	if err := importer.Download(t.Context(), srv.URL, dst, importer.DownloadOptions{}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dst)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644 rather than the temporary file's 0600", fi.Mode().Perm())
	}
}
