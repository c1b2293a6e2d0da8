package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestProbeAddr(t *testing.T) {
	tests := []struct{ listen, want string }{
		{":8080", "127.0.0.1:8080"},
		{"0.0.0.0:8080", "127.0.0.1:8080"},
		{"[::]:8080", "[::1]:8080"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"10.1.2.3:80", "10.1.2.3:80"},
		{"[::1]:80", "[::1]:80"},
		{"cityfinder:8080", "cityfinder:8080"},
	}
	for _, tt := range tests {
		if got := probeAddr(tt.listen); got != tt.want {
			t.Errorf("probeAddr(%q) = %q, want %q", tt.listen, got, tt.want)
		}
	}
}

// answering is a server that answers every request with status and body,
// and records the path asked.
func answering(t *testing.T, status int, body string, asked *string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*asked = r.URL.Path
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

// Healthcheck succeeds on serve's 200s and says why in one line otherwise.
func TestHealthcheckAnswers(t *testing.T) {
	tests := []struct {
		name     string
		ready    bool
		status   int
		body     string
		wantPath string
		wantOut  string // on success
		wantErr  string // "" for success
	}{
		{"alive", false, 200, `{"status":"ok"}`, "/healthz", "/healthz ok\n", ""},
		{"ready", true, 200, `{"status":"ok","checks":{"dataset:small":"ok"}}`, "/readyz", "/readyz ok\n", ""},
		{"ready but degraded", true, 200, `{"status":"degraded","checks":{"limiter":"unavailable"},"failed":["limiter"]}`,
			"/readyz", "/readyz degraded (failed: limiter)\n", ""},
		{"not ready", true, 503, `{"status":"unavailable","checks":{"dataset:small":"empty"},"failed":["dataset:small"]}`,
			"/readyz", "", "is not ready: /readyz answered 503 unavailable (failed: dataset:small)"},
		{"draining", true, 503, `{"status":"draining"}`, "/readyz", "", "is not ready: /readyz answered 503 draining"},
		{"not alive", false, 500, `{"status":"broken"}`, "/healthz", "", "is not healthy: /healthz answered 500 broken"},
		{"something else on the port", false, 200, `<html>hello</html>`, "/healthz", "", `answered 200 "<html>hello</html>", not as cityfinder serve does`},
		{"an error that is not serve's", true, 404, `{"message":"Not found"}`, "/readyz", "", "answered 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var asked string
			args := []string{"healthcheck", "--addr", answering(t, tt.status, tt.body, &asked)}
			if tt.ready {
				args = append(args, "--ready")
			}
			out, _, err := runCLI(t, args...)
			if asked != tt.wantPath {
				t.Errorf("asked %q, want %q", asked, tt.wantPath)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("healthcheck: %v, want success", err)
			case tt.wantErr == "" && out != tt.wantOut:
				t.Errorf("healthcheck printed %q, want %q", out, tt.wantOut)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("healthcheck: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// Healthcheck gives up after --probe-timeout on a server that never answers, and
// at once on a port nobody listens on; either way it exits 1 with one line.
func TestHealthcheckFailsFast(t *testing.T) {
	tests := []struct {
		name, addr, wantErr string
	}{
		{"no answer", blackhole(t), "did not answer /healthz within 300ms"},
		{"nobody listening", freeAddr(t), "does not answer /healthz: connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			start := time.Now()
			code := run([]string{"healthcheck", "--addr", tt.addr, "--probe-timeout", "300ms"}, &out, &errOut)
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("healthcheck took %s with --probe-timeout 300ms", took)
			}
			if code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if got := errOut.String(); !strings.Contains(got, tt.wantErr) || strings.Count(got, "\n") != 1 {
				t.Errorf("stderr = %q, want one line with %q", got, tt.wantErr)
			}
		})
	}
}

// Against a real serve: alive and ready (degraded: the large dataset is not
// imported) with the small dataset, alive but not ready without it.
func TestHealthcheckAgainstServe(t *testing.T) {
	t.Parallel()
	withData := strings.TrimPrefix(startServe(t, "--data-dir", mustImportTwoCities(t)), "http://")
	empty := strings.TrimPrefix(startServe(t, "--data-dir", t.TempDir()), "http://")
	tests := []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"alive", []string{"--addr", withData}, "/healthz ok\n", ""},
		{"ready", []string{"--addr", withData, "--ready"}, "/readyz degraded (failed: dataset:large)\n", ""},
		{"alive without data", []string{"--addr", empty}, "/healthz ok\n", ""},
		{"not ready without data", []string{"--addr", empty, "--ready"}, "", "/readyz answered 503 unavailable (failed: dataset:small, dataset:large)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := runCLI(t, append([]string{"healthcheck"}, tt.args...)...)
			switch {
			case tt.wantErr == "" && (err != nil || out != tt.wantOut):
				t.Errorf("healthcheck = %q, %v; want %q", out, err, tt.wantOut)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("healthcheck: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

// The timeout is a setting: its variable sets it, and it must be positive.
func TestHealthcheckTimeoutSetting(t *testing.T) {
	t.Setenv("CITYFINDER_PROBE_TIMEOUT", "250ms")
	if _, _, err := runCLI(t, "healthcheck", "--addr", blackhole(t)); err == nil || !strings.Contains(err.Error(), "within 250ms") {
		t.Errorf("healthcheck with CITYFINDER_PROBE_TIMEOUT=250ms: %v", err)
	}
	if _, _, err := runCLI(t, "healthcheck", "--probe-timeout", "0s"); err == nil || !strings.Contains(err.Error(), "--probe-timeout") {
		t.Errorf("healthcheck --probe-timeout 0s: %v, want it refused", err)
	}
}
