package server_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// assertCleanAnswer checks that an answer is a 200 JSON array of cities or
// a 4xx JSON message, never a 5xx.
func assertCleanAnswer(tb testing.TB, what string, rec *httptest.ResponseRecorder) {
	tb.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != jsonContentType {
		tb.Errorf("%s: Content-Type = %q, want JSON", what, ct)
	}
	switch {
	case rec.Code == http.StatusOK:
		var cities []search.Hit
		if err := json.Unmarshal(rec.Body.Bytes(), &cities); err != nil || cities == nil {
			tb.Errorf("%s: 200 body %.200s is not a JSON array: %v", what, rec.Body, err)
		}
	case rec.Code >= 400 && rec.Code < 500:
		var body struct{ Message string }
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Message == "" {
			tb.Errorf("%s: %d body %.200s has no message: %v", what, rec.Code, rec.Body, err)
		}
	default:
		tb.Errorf("%s: status %d (body %.200s), want 200 or 4xx", what, rec.Code, rec.Body)
	}
}

// Queries made of regular-expression or query-operator syntax, broken
// encodings and oversized parameters are either answered like any text or
// refused with a 400, quickly; none reaches a store as anything but a
// folded prefix.
func TestSearchHostileInput(t *testing.T) {
	h := server.New(mustService(t, testCities()))
	ist := do(t, h, http.MethodGet, "/search?q=ist").Body.String()
	istanbul := do(t, h, http.MethodGet, "/search?q=istanbul").Body.String()
	const (
		tooShort = `{"message":"Enter at least 3 letters"}`
		notUTF8  = `{"message":"Query is not valid UTF-8"}`
		tooLong  = `{"message":"Query is too long: use at most 100 characters"}`
	)
	mb := strings.Repeat("a", 1<<20)
	tests := []struct {
		name, rawQuery string
		wantStatus     int
		wantBody       string // "" to only check that the answer is clean
	}{
		{"regex any", "q=.*", http.StatusBadRequest, tooShort},
		{"regex anchors", "q=%5E%24", http.StatusBadRequest, tooShort},
		{"regex class", "q=%5Ba-z%5D", http.StatusBadRequest, tooShort},
		{"regex class with three letters folds to them", "q=%5Ba-z%5Dx", http.StatusOK, "[]"},
		{"open groups", "q=(((", http.StatusBadRequest, tooShort},
		{"a backslash", "q=%5C", http.StatusBadRequest, tooShort},
		{"a Mongo operator", "q=%24ne", http.StatusBadRequest, tooShort},
		{"a Mongo operator object", "q=%7B%22%24gt%22%3A%22%22%7D", http.StatusBadRequest, tooShort},
		{"a Mongo operator as a parameter name", "q%5B%24ne%5D=x", http.StatusBadRequest, tooShort},
		{"a regex around a city is just its letters", "q=%5Eist.*", http.StatusOK, ist},
		{"invalid UTF-8", "q=%ff%fe", http.StatusBadRequest, notUTF8},
		{"invalid UTF-8 after letters", "q=ist%ff", http.StatusBadRequest, notUTF8},
		{"a bad percent escape", "q=ist%zz", http.StatusBadRequest, tooShort}, // ParseQuery drops the pair
		{"a NUL after letters is punctuation", "q=ist%00", http.StatusOK, ist},
		{"only NULs", "q=%00%00%00", http.StatusBadRequest, tooShort},
		{"repeated q: the first counts", "q=a&q=istanbul", http.StatusBadRequest, tooShort},
		{"repeated q, the other way round", "q=istanbul&q=a", http.StatusOK, istanbul},
		{"repeated dataset: the first counts", "q=ist&dataset=small&dataset=large", http.StatusOK, ist},
		{"a semicolon separator is not one", "q=ist;dataset=large", http.StatusBadRequest, tooShort},
		{"a path as dataset", "q=ist&dataset=..%2F..%2Fetc%2Fpasswd", http.StatusBadRequest, `{"message":"Unknown dataset \"../../etc/passwd\": use small or large"}`},
		{"a huge limit", "q=ist&limit=99999999999999999999", http.StatusBadRequest, ""},
		{"a negative limit", "q=ist&limit=-1", http.StatusBadRequest, ""},
		{"a 1 MB q", "q=" + mb, http.StatusBadRequest, tooLong},
		{"a 1 MB q of multi-byte letters", "q=" + strings.Repeat("%C3%A9", 1<<18), http.StatusBadRequest, tooLong},
		{"a 1 MB country list", "q=ist&country=" + mb, http.StatusBadRequest, `{"message":"Invalid country list"}`},
		// net/url refuses more than 10,000 parameters (GODEBUG urlmaxqueryparams) and gives none.
		{"a 1 MB query string of parameters", "q=ist&" + strings.Repeat("x=1&", 1<<18), http.StatusBadRequest, tooShort},
		{"a thousand parameters", "q=ist&" + strings.Repeat("x=1&", 1000), http.StatusOK, ist},
		{"a 1 MB parameter name", mb + "=1&q=ist", http.StatusOK, ist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/search", nil)
			req.URL.RawQuery = tt.rawQuery
			rec := httptest.NewRecorder()
			start := time.Now()
			h.ServeHTTP(rec, req)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s", d)
			}
			assertCleanAnswer(t, tt.name, rec)
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %.200s)", rec.Code, tt.wantStatus, rec.Body)
			}
			if tt.wantBody != "" && rec.Body.String() != tt.wantBody {
				t.Errorf("body = %.300s, want %.300s", rec.Body, tt.wantBody)
			}
		})
	}
}

// rawRequest sends a request line and headers written by hand and returns
// the server's answer.
func rawRequest(tb testing.TB, addr, request string) (*http.Response, string) {
	tb.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	// The server may answer and hang up before it has read everything.
	go io.WriteString(conn, request)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		tb.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// A URL over the header limit is refused by net/http with 431 before any
// handler runs; one under it reaches the handler, which refuses a long q
// with a JSON 400.
func TestServerHeaderLimit(t *testing.T) {
	tests := []struct {
		name       string
		limits     *server.Limits // nil: defaults (64 KiB)
		qBytes     int
		wantStatus int
		wantJSON   bool
	}{
		{"a 1 MB URL gets 431", nil, 1 << 20, http.StatusRequestHeaderFieldsTooLarge, false},
		{"a 32 KB URL reaches the handler", nil, 32 << 10, http.StatusBadRequest, true},
		{"a lower limit is honoured", &server.Limits{MaxHeaderBytes: 4 << 10}, 16 << 10, http.StatusRequestHeaderFieldsTooLarge, false},
		// A zero field keeps the default, where net/http would read "no
		// limit" (its own 1 MB default for headers).
		{"zero fields keep the defaults", &server.Limits{WriteTimeout: 7 * time.Second}, 512 << 10, http.StatusRequestHeaderFieldsTooLarge, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := server.Config{Addr: "127.0.0.1:0", Handler: server.New(mustService(t, testCities())), Logger: testLogger(t)}
			if tt.limits != nil {
				cfg.Limits = *tt.limits
			}
			srv, err := server.Listen(cfg)
			if err != nil {
				t.Fatal(err)
			}
			done := startServe(t.Context(), srv)
			defer func() { srv.Close(); <-done }()

			resp, body := rawRequest(t, srv.Addr(), "GET /search?q="+strings.Repeat("a", tt.qBytes)+" HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %.200s)", resp.StatusCode, tt.wantStatus, body)
			}
			if isJSON := resp.Header.Get("Content-Type") == jsonContentType; isJSON != tt.wantJSON {
				t.Errorf("Content-Type = %q, JSON %v, want %v", resp.Header.Get("Content-Type"), isJSON, tt.wantJSON)
			}
		})
	}
}

func TestDefaultLimitsAreLimits(t *testing.T) {
	l := server.DefaultLimits()
	if l.ReadHeaderTimeout <= 0 || l.ReadTimeout <= 0 || l.WriteTimeout <= 0 || l.IdleTimeout <= 0 || l.MaxHeaderBytes <= 0 {
		t.Errorf("defaults %+v: a zero limit is no limit", l)
	}
}

// A client that never finishes its headers is cut off after
// ReadHeaderTimeout.
func TestServerReadHeaderTimeout(t *testing.T) {
	srv, err := server.Listen(server.Config{Addr: "127.0.0.1:0", Handler: server.New(unreachable(t)), Logger: testLogger(t),
		Limits: server.Limits{ReadHeaderTimeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	done := startServe(t.Context(), srv)
	defer func() { srv.Close(); <-done }()

	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n") // and never the blank line
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after 5s, want it closed after 200ms")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("closed after %s, want about 200ms", d)
	}
}

// FuzzSearchRawQuery sends whole query strings, every parameter at once:
// the answer is always a JSON 200 or 4xx.
func FuzzSearchRawQuery(f *testing.F) {
	for _, s := range []string{
		"q=ist", "q=ist&limit=1&dataset=small", "q=s%C3%A3o+p&country=br,pt&fuzzy=false", "q=.*", "q=%ff%fe",
		"q=ist%00", "q=a&q=istanbul", "q=ist&dataset=large", "q=ist&limit=0", "q=ist;x", "q=%zz", "q=istnbul&fuzzy=true",
		"q=ist&country=" + url.QueryEscape("United Kingdom,xx"), "q=%7B%22%24gt%22%3A%22%22%7D", "dataset=small&limit=100&q=paris",
	} {
		f.Add(s)
	}
	h := server.New(mustService(f, testCities()))
	f.Fuzz(func(t *testing.T, rawQuery string) {
		req := httptest.NewRequest(http.MethodGet, "/search", nil)
		req.URL.RawQuery = rawQuery
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		// The small dataset is loaded and the large one is not: a 503
		// saying so is the only 5xx allowed.
		if rec.Code == http.StatusServiceUnavailable && rec.Body.String() == `{"message":"This dataset is not available yet"}` {
			return
		}
		assertCleanAnswer(t, "q="+rawQuery, rec)
	})
}
