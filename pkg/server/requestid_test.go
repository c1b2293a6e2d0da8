package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// generatedID is the shape of an id the server makes: a random prefix for
// the process, then a counter.
var generatedID = regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-z]+$`)

// accessLines returns the JSON access log records in logs.
func accessLines(tb testing.TB, logs *bytes.Buffer) []map[string]any {
	tb.Helper()
	var lines []map[string]any
	for line := range strings.Lines(logs.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			tb.Fatalf("log line %q: %v", line, err)
		}
		if rec["msg"] == "request" {
			lines = append(lines, rec)
		}
	}
	return lines
}

func TestRequestID(t *testing.T) {
	tests := []struct {
		name, sent string
		wantKept   bool
	}{
		{"none sent: one is made", "", false},
		{"a sane one is kept", "abc-123_DEF.4", true},
		{"a UUID is kept", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", true},
		{"64 characters are kept", strings.Repeat("a", 64), true},
		{"65 characters are replaced", strings.Repeat("a", 65), false},
		{"a space is replaced", "abc def", false},
		{"a quote is replaced", `abc"def`, false},
		{"a forged log line is replaced", "abc\nmsg=request status=200", false},
		{"non-ASCII is replaced", "ünïcode", false},
		{"a NUL is replaced", "abc\x00", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			h := server.New(mustService(t, testCities()), server.WithLogger(logger))
			req := httptest.NewRequest(http.MethodGet, "/search?q=ist", nil)
			if tt.sent != "" {
				req.Header["X-Request-Id"] = []string{tt.sent}
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			id := rec.Header().Get("X-Request-Id")
			if tt.wantKept && id != tt.sent {
				t.Errorf("X-Request-Id = %q, want the client's %q", id, tt.sent)
			}
			if !tt.wantKept && !generatedID.MatchString(id) {
				t.Errorf("X-Request-Id = %q, want a generated one", id)
			}
			lines := accessLines(t, &logs)
			if len(lines) != 1 || lines[0]["request_id"] != id || lines[0]["component"] != "server" {
				t.Errorf("access log = %v, want one line with request_id %q", lines, id)
			}
		})
	}
}

func TestRequestIDsAreUnique(t *testing.T) {
	h := server.New(unreachable(t))
	seen := make(map[string]bool)
	for range 1000 {
		id := do(t, h, http.MethodGet, "/healthz").Header().Get("X-Request-Id")
		if seen[id] || !generatedID.MatchString(id) {
			t.Fatalf("id %q repeated or malformed", id)
		}
		seen[id] = true
	}
}

// Every answer carries the id, those of the middleware and the 404s
// included, and the server's error log names it.
func TestRequestIDOnEveryAnswer(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil)) // Info: no access lines
	broken := searching(func(context.Context, search.Query) ([]search.City, error) { return nil, errors.New("bug") })
	limited := server.New(unreachable(t), server.WithSearchMiddleware(rejectAll(t, nil)))
	failing := server.New(broken, server.WithLogger(logger))
	for _, tt := range []struct {
		name   string
		h      http.Handler
		target string
		status int
	}{
		{"a 429 of the middleware", limited, "/search?q=ist", http.StatusTooManyRequests},
		{"a 404", limited, "/nope", http.StatusNotFound},
		{"a 500", failing, "/search?q=ist", http.StatusInternalServerError},
	} {
		req := httptest.NewRequest(http.MethodGet, tt.target, nil)
		req.Header.Set("X-Request-Id", "req-"+strings.ReplaceAll(tt.name, " ", "_"))
		rec := httptest.NewRecorder()
		tt.h.ServeHTTP(rec, req)
		if rec.Code != tt.status || rec.Header().Get("X-Request-Id") != req.Header.Get("X-Request-Id") {
			t.Errorf("%s: %d with X-Request-Id %q, want %d with %q", tt.name, rec.Code, rec.Header().Get("X-Request-Id"), tt.status, req.Header.Get("X-Request-Id"))
		}
	}
	if !strings.Contains(logs.String(), `"msg":"request failed"`) || !strings.Contains(logs.String(), `"request_id":"req-a_500"`) {
		t.Errorf("the 500's log line lacks its request id:\n%s", logs.String())
	}
}

// LogRequestIDs adds request_id to the records of any logger that logs with
// a request's context (the rate limiter's, say), once even when wrapped twice.
func TestLogRequestIDs(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(server.LogRequestIDs(server.LogRequestIDs(slog.NewTextHandler(&logs, nil)))).With("component", "limiter")
	mw := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			logger.WarnContext(r.Context(), "rate limit store failed")
			if got := server.RequestID(r.Context()); got != "abc" {
				t.Errorf("RequestID = %q, want abc", got)
			}
			next.ServeHTTP(w, r)
		})
	}
	h := server.New(mustService(t, testCities()), server.WithSearchMiddleware(mw))
	req := httptest.NewRequest(http.MethodGet, "/search?q=ist", nil)
	req.Header.Set("X-Request-Id", "abc")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got := logs.String(); strings.Count(got, "request_id=abc") != 1 || !strings.Contains(got, "component=limiter") {
		t.Errorf("log = %q, want one request_id=abc", got)
	}
	if server.RequestID(t.Context()) != "" {
		t.Error("RequestID outside a request is not empty")
	}
}
