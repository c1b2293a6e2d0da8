package main

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// FerretDB, the stand-in for MongoDB in these tests, scans every document
// for each query: a search of thousands of cities takes a second or more
// there, where MongoDB's indexes answer in milliseconds. The tests keep their
// datasets small, give searches that much time, and turn typo matching off
// on the CLI, as it asks the store dozens of times per query.
const ferretQueryTimeout = "30s"

// excerpt writes the rows of the real okfn file that the MongoDB tests
// query (names starting with ist, sao or san) and every 50th other row: a
// thousand rows, as FerretDB reads every document for every query.
func excerpt(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(shareddata.Path(t, "world-cities-2016.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	var b strings.Builder
	b.WriteString(lines[0])
	for i, line := range lines[1:] {
		if slug := search.Slug(line); i%50 == 0 || strings.HasPrefix(slug, "ist") || strings.HasPrefix(slug, "sao") || strings.HasPrefix(slug, "san") {
			b.WriteString(line)
		}
	}
	return writeFile(t, "world-cities-excerpt.csv", b.String())
}

// The same file imported into MongoDB and into the embedded store gives the
// same summary, the same query output and the same API answers.
func TestMongoImportQueryServe(t *testing.T) {
	t.Parallel()
	csv := excerpt(t)
	uri := mongotest.URI(t)
	mongoArgs := []string{"--mongo-uri", uri, "--mongo-db", mongotest.Database(t, uri), "--mongo-query-timeout", ferretQueryTimeout}
	dir := t.TempDir()

	embeddedOut := mustRunCLI(t, "import", "--dataset", "small", "--file", csv, "--data-dir", dir)
	mongoOut := mustRunCLI(t, append([]string{"import", "--dataset", "small", "--file", csv}, mongoArgs...)...)
	// "imported 1,022 of 1,029 rows into small (0 rejected, 7 duplicates) in 0.1s": all but the time.
	summary := func(out string) string { return out[:strings.LastIndex(out, " in ")] }
	if summary(mongoOut) != summary(embeddedOut) || !strings.Contains(embeddedOut, "(0 rejected") {
		t.Errorf("import summaries:\n mongo    %q\n embedded %q", mongoOut, embeddedOut)
	}

	for _, query := range [][]string{{"istanbul"}, {"SAO", "P", "--json", "--limit", "5"}, {"san", "--limit", "100", "--json"}, {"qqqqq"}} {
		query = append(query, "--fuzzy=false")
		want := mustRunCLI(t, append(append([]string{"query"}, query...), "--data-dir", dir)...)
		got := mustRunCLI(t, append(append([]string{"query"}, query...), mongoArgs...)...)
		if got != want {
			t.Errorf("query %q:\n mongo    %q\n embedded %q", query, got, want)
		}
	}
	if got := mustRunCLI(t, append([]string{"query", "istanbul", "--fuzzy=false"}, mongoArgs...)...); !strings.HasPrefix(firstHit(got), "İstanbul") {
		t.Errorf("query istanbul printed %q, want İstanbul", got)
	}

	embeddedBase := startServe(t, "--data-dir", dir, "--max", "100000")
	mongoBase := startServe(t, append([]string{"--max", "100000", "--data-dir", t.TempDir()}, mongoArgs...)...)
	for _, q := range []string{"/search?q=ist", "/search?q=s%C3%A3o%20p&limit=3", "/search?q=san&limit=100&dataset=small",
		"/search?q=ist&dataset=large", "/search?q=istanbul&fuzzy=false"} {
		wantCode, want := get(t, embeddedBase+q)
		code, got := get(t, mongoBase+q)
		if code != wantCode || got != want {
			t.Errorf("GET %s:\n mongo    %d %s\n embedded %d %s", q, code, got, wantCode, want)
		}
	}
}

// In query mode, a running serve answers 503 while its MongoDB is down
// and 200 again once it is back, without a restart. (In snapshot mode it
// answers from memory meanwhile: see TestReplicasOnOneMongoDB.)
func TestMongoServeSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	srv := mongotest.Start(t)
	csv := writeFile(t, "cities.csv", "name,country,subcountry,geonameid\nParis,France,Ile-de-France,2988507\nParma,Italy,Emilia-Romagna,3171457\n")
	// The default database, city-finder, on a server of this test's own.
	mustRunCLI(t, "import", "--file", csv, "--mongo-uri", srv.URI())
	base := startServe(t, "--mongo-uri", srv.URI(), "--mongo-mode", "query", "--max", "100000",
		"--mongo-connect-timeout", "1s", "--mongo-query-timeout", "2s")
	const url = "/search?q=par"
	code, before := get(t, base+url)
	if code != http.StatusOK || !strings.Contains(before, "Paris") {
		t.Fatalf("GET %s with MongoDB up = %d %s", url, code, before)
	}

	srv.Stop(t)
	code, body := pollUntil(t, base+url, 20*time.Second, func(code int) bool { return code != http.StatusOK })
	var msg struct{ Message string }
	if code != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &msg) != nil || msg.Message == "" {
		t.Errorf("GET %s with MongoDB down = %d %s, want 503 and a JSON message", url, code, body)
	}
	// Readiness and metrics say so too.
	// (The check may report "timeout" rather than "unavailable": it gives
	// up before the driver's server selection does.)
	code, body = get(t, base+"/readyz")
	var ready struct{ Failed []string }
	if code != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &ready) != nil || !slices.Contains(ready.Failed, "dataset:small") {
		t.Errorf("GET /readyz with MongoDB down = %d %s, want 503 with dataset:small failed", code, body)
	}
	if _, metrics := get(t, base+"/metrics"); !strings.Contains(metrics, `cityfinder_search_store_errors_total{dataset="small",reason="unavailable"}`) {
		t.Errorf("/metrics with MongoDB down counts no unavailable store errors")
	}

	srv.Restart(t)
	code, after := pollUntil(t, base+url, 30*time.Second, func(code int) bool { return code == http.StatusOK })
	if code != http.StatusOK || after != before {
		t.Errorf("GET %s once MongoDB is back = %d %s, want 200 %s", url, code, after, before)
	}
	if code, body := get(t, base+"/readyz"); code != http.StatusOK || !strings.Contains(body, `"dataset:small":"ok"`) {
		t.Errorf("GET /readyz once MongoDB is back = %d %s, want 200 with dataset:small ok", code, body)
	}
}

// pollUntil GETs url until done(status) or timeout, and returns the last answer.
func pollUntil(t *testing.T, url string, timeout time.Duration, done func(int) bool) (int, string) {
	t.Helper()
	var code int
	var body string
	poll.Within(timeout, func() bool {
		code, body = get(t, url)
		return done(code)
	})
	return code, body
}

// An unreachable MongoDB fails import and query within 5s, with a message
// that names its database and host and nothing else of the URI, whichever
// layer of the configuration names it; serve starts anyway and answers 503.
func TestMongoUnreachable(t *testing.T) {
	const uri = "mongodb://user:secret@127.0.0.1:1/"
	const redacted = "MongoDB database city-finder at 127.0.0.1:1"
	csv := writeFile(t, "cities.csv", "name,country,subcountry,geonameid\nParis,France,Ile-de-France,2988507\n")
	// The first case waits as long as the default timeout says; the others
	// say 200ms, which is all the time that a refused connection needs.
	config := writeFile(t, "cityfinder.yaml", "mongo:\n  uri: "+uri+"\n  connect_timeout: 200ms\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"import with the flag", nil, []string{"import", "--file", csv, "--mongo-uri", uri}},
		{"query with the flag", nil, []string{"query", "par", "--mongo-uri", uri, "--mongo-connect-timeout", "200ms"}},
		{"query with the environment", map[string]string{"CITYFINDER_MONGO_URI": uri, "CITYFINDER_MONGO_CONNECT_TIMEOUT": "200ms"}, []string{"query", "par"}},
		{"import with the config file", nil, []string{"--config", config, "import", "--file", csv}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			start := time.Now()
			_, _, err := runCLI(t, tc.args...)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("failed after %s, want under 5s", took)
			}
			if err == nil || !strings.Contains(err.Error(), redacted) || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "user:") {
				t.Errorf("err = %v, want one naming %s and not the user info", err, redacted)
			}
		})
	}

	// In both modes: in snapshot mode, with no copy in the data directory either.
	for _, mode := range []string{mongoModeSnapshot, mongoModeQuery} {
		base := startServe(t, "--mongo-uri", uri, "--mongo-mode", mode, "--mongo-connect-timeout", "200ms", "--max", "100000", "--data-dir", t.TempDir())
		code, body := get(t, base+"/search?q=par")
		if code != http.StatusServiceUnavailable || !strings.HasPrefix(body, `{"message":`) {
			t.Errorf("%s mode: GET /search with MongoDB unreachable = %d %s, want 503 and a JSON message", mode, code, body)
		}
	}
}

func TestMongoConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"not a MongoDB URI", []string{"query", "par", "--mongo-uri", "http://user:secret@example.com/"}, "invalid --mongo-uri: it must start with mongodb://"},
		{"scheme typo", []string{"query", "par", "--mongo-uri", "mongodb:/user:secret@example.com/"}, "invalid --mongo-uri: it must start with mongodb://"},
		{"unescaped slash", []string{"import", "--mongo-uri", "mongodb://user:secret/pw@example.com/"}, "invalid --mongo-uri: the password holds an unescaped '/': write it as %2F"},
		{"empty database", []string{"query", "par", "--mongo-uri", "mongodb://127.0.0.1:1/", "--mongo-db", ""}, "invalid --mongo-db"},
		{"no pool", []string{"serve", "--mongo-pool-size", "0"}, "invalid --mongo-pool-size 0"},
		{"zero timeout", []string{"query", "par", "--mongo-query-timeout", "0s"}, "invalid --mongo-query-timeout 0s"},
		{"zero batch", []string{"import", "--mongo-batch-size", "0"}, "invalid --mongo-batch-size 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "example.com") {
				t.Errorf("cityfinder %s: err = %v, want one containing %q", strings.Join(tc.args, " "), err, tc.want)
			}
		})
	}
}
