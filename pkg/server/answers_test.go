package server_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// answerCities are synthetic cities with locations, local names and
// homonyms, and the hand-written ones of the other tests.
func answerCities() []search.City {
	cities := syntheticCities(3000)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range cities {
		c := &cities[i]
		c.Lat, c.Lon, c.HasLocation = r.Float64()*140-70, r.Float64()*340-170, i%7 != 0
		if i%5 == 0 {
			local := c.Name + "stadt"
			c.AltNames = append(c.AltNames, local)
			c.LocalNames = append(c.LocalNames, search.LocalName{Lang: "de", Name: local})
		}
	}
	return slices.Concat(cities, testCities(), localCities())
}

// answerTargets are /search requests over cities: prefixes of their names
// as people type them (and mistype them, with a trailing space, in upper
// case), each asked with several sets of the parameters that shape an
// answer, so that a key that left one out would serve one set's answer
// to another.
func answerTargets(cities []search.City, texts, variants int) []string {
	r := rand.New(rand.NewPCG(5, 6))
	params := [][]string{
		{"lang=de", "lang=en,de", "lang=ja", "lang=xx-invalid-"},
		{"format=geojson", "format=json", "format=xml"},
		{"limit=1", "limit=3", "limit=100", "limit=0"},
		{"lat=48.8&lon=2.35", "lat=48.8&lon=2.35&bias_scale=0.05", "lat=-33.4&lon=-70.6&bias_scale=0.9", "lat=10&lon=20&bias_scale=0.1", "lat=10"},
		{"bbox=-10,35,30,60", "bbox=-180,-60,0,60", "bbox=1,2"},
		{"dataset=large", "dataset=small", "dataset=nowhere"},
		{"fuzzy=false", "fuzzy=true"},
		{"country=fr", "country=de,it", "country=atlantis"},
	}
	var targets []string
	for range texts {
		name := []rune(cities[r.IntN(len(cities))].Name)
		text := string(name[:min(len(name), 1+r.IntN(len(name)+1))])
		switch r.IntN(6) {
		case 0: // a typo
			i := r.IntN(len(text))
			text = text[:i] + "x" + text[i+1:]
		case 1:
			text += " "
		case 2:
			text = strings.ToUpper(text)
		}
		for range variants {
			v := url.Values{"q": {text}}
			for _, group := range params {
				if r.IntN(4) == 0 {
					for _, kv := range strings.Split(group[r.IntN(len(group))], "&") {
						name, value, _ := strings.Cut(kv, "=")
						v.Set(name, value)
					}
				}
			}
			targets = append(targets, "/search?"+v.Encode())
		}
	}
	return targets
}

// mustLoadBoth loads cities as both datasets of a memory store, large
// without the first third.
func mustLoadBoth(tb testing.TB, cities []search.City) *memory.Store {
	tb.Helper()
	store := mustStore(tb, cities)
	if _, err := store.Load(tb.Context(), search.Large, &search.SliceReader{Cities: cities[len(cities)/3:]}, search.LoadOptions{}); err != nil {
		tb.Fatalf("load large: %v", err)
	}
	return store
}

// answerOf is everything a client gets: status, headers and body.
func answerOf(rec *httptest.ResponseRecorder) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", rec.Code)
	for _, k := range slices.Sorted(maps.Keys(rec.Header())) {
		fmt.Fprintf(&b, "%s: %q\n", k, rec.Header()[k])
	}
	b.WriteString(rec.Body.String())
	return b.String()
}

// get asks h for target as a browser in acceptLanguage would, with a
// fixed request id, so that two handlers' answers compare byte for byte.
func get(h http.Handler, method, target, acceptLanguage string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	req.Header.Set("X-Request-Id", "answer-test")
	req.Header.Set("Origin", "https://example.com")
	if acceptLanguage != "" {
		req.Header.Set("Accept-Language", acceptLanguage)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// A kept answer is the answer: the same status, headers and body as one
// computed afresh, whatever the parameters, errors included.
func TestAnswerCacheGivesTheSameBytes(t *testing.T) {
	cities := answerCities()
	svc := search.NewService(mustLoadBoth(t, cities))
	common := []server.Option{server.WithCORS("https://example.com"), server.WithCacheMaxAge(time.Minute)}
	reg := prometheus.NewRegistry()
	cached := server.New(svc, append(common, server.WithAnswerCache(16<<20), server.WithMetrics(reg))...)
	plain := server.New(svc, common...)
	languages := []string{"", "de-DE,de;q=0.9", "en", "ja;q=zz"}
	targets := answerTargets(cities, 100, 10)
	answered := 0
	for i, target := range targets {
		lang := languages[i%len(languages)]
		method := http.MethodGet
		if i%50 == 0 {
			method = http.MethodHead
		}
		rec := get(plain, method, target, lang)
		if rec.Code == http.StatusOK {
			answered++
		}
		want := answerOf(rec)
		for round, what := range []string{"first", "again"} {
			if got := answerOf(get(cached, method, target, lang)); got != want {
				t.Fatalf("%s %s (Accept-Language %q), %s with the cache (round %d):\n%s\nwant, without:\n%s", method, target, lang, what, round, got, want)
			}
		}
	}
	hits, misses := cacheCounter(t, cached, "hits"), cacheCounter(t, cached, "misses")
	if hits < answered || misses < answered || answered < len(targets)/4 {
		t.Errorf("hits %d, misses %d for %d targets asked twice, %d of them answered 200: the cache was not used", hits, misses, len(targets), answered)
	}
	if !strings.Contains(scrape(t, cached), "cityfinder_answer_cache_bytes ") {
		t.Error("/metrics has no cityfinder_answer_cache_bytes")
	}
}

// cacheCounter reads cityfinder_answer_cache_<name>_total from h's /metrics.
func cacheCounter(tb testing.TB, h http.Handler, name string) int {
	tb.Helper()
	m := regexp.MustCompile(`(?m)^cityfinder_answer_cache_` + name + `_total (\S+)$`).FindStringSubmatch(scrape(tb, h))
	if m == nil {
		tb.Fatalf("/metrics has no cityfinder_answer_cache_%s_total", name)
	}
	n, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		tb.Fatal(err)
	}
	return int(n)
}

// A kept answer still goes through the search middleware (the rate
// limiter): it counts as a search, and one refused is refused.
func TestAnswerCacheIsBehindTheLimiter(t *testing.T) {
	var seen atomic.Int64
	count := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen.Add(1)
			limitQuery(next).ServeHTTP(w, r)
		})
	}
	h := server.New(mustService(t, testCities()), server.WithAnswerCache(1<<20), server.WithSearchMiddleware(count),
		server.WithMetrics(prometheus.NewRegistry()))
	for range 3 {
		if rec := get(h, http.MethodGet, "/search?q=ist", ""); rec.Code != http.StatusOK {
			t.Fatalf("GET /search?q=ist = %d", rec.Code)
		}
	}
	if n := seen.Load(); n != 3 {
		t.Errorf("the middleware saw %d of 3 searches", n)
	}
	if hits := cacheCounter(t, h, "hits"); hits != 2 {
		t.Errorf("%d hits, want 2", hits)
	}
	if rec := get(h, http.MethodGet, "/search?q=limited", ""); rec.Code != http.StatusTooManyRequests {
		t.Errorf("a refused search = %d, want 429", rec.Code)
	}
}

// A store that does not number its contents has nothing kept: every
// answer is searched.
func TestAnswerCacheNeedsVersions(t *testing.T) {
	var searches atomic.Int64
	store := fakeStore(func(_ context.Context, q search.Query) ([]search.City, error) {
		searches.Add(1)
		return []search.City{newCity(1, "Paris", "France", "fr", "")}, nil
	})
	h := server.New(search.NewService(store), server.WithAnswerCache(1<<20))
	for range 3 {
		get(h, http.MethodGet, "/search?q=par&fuzzy=false", "")
	}
	if n := searches.Load(); n != 3 {
		t.Errorf("%d searches for 3 requests to a store without versions", n)
	}
}

// An import replaces the answers kept: through the serving store, and
// through another process's store on the same directory once the serving
// one reloads (as serve does every --reload-interval and on SIGHUP).
func TestAnswerCacheFollowsImports(t *testing.T) {
	dir := t.TempDir()
	serving, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serving.Close() })
	load := func(s *embedded.Store, cities ...search.City) {
		t.Helper()
		if _, err := s.Load(t.Context(), search.Small, &search.SliceReader{Cities: cities}, search.LoadOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h := server.New(search.NewService(serving), server.WithAnswerCache(1<<20))
	answer := func() string {
		t.Helper()
		rec := get(h, http.MethodGet, "/search?q=par&fuzzy=false", "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET = %d %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	names := func(body string) []string {
		return regexp.MustCompile(`"name":"([^"]+)"`).FindAllString(body, -1)
	}

	load(serving, newCity(1, "Paris", "France", "fr", ""))
	first := answer()
	if answer() != first || !strings.Contains(first, "Paris") {
		t.Fatalf("before any import: %s", first)
	}
	load(serving, newCity(2, "Parla", "Spain", "es", ""))
	if got := answer(); !strings.Contains(got, "Parla") || strings.Contains(got, "Paris") {
		t.Errorf("after an import into the serving store: %v, want Parla only", names(got))
	}

	importer, err := embedded.Open(dir, embedded.Options{ReloadInterval: -1, Lazy: true})
	if err != nil {
		t.Fatal(err)
	}
	load(importer, newCity(3, "Parma", "Italy", "it", ""))
	importer.Close()
	if got := answer(); !strings.Contains(got, "Parla") {
		t.Errorf("after another process's import, before the reload: %v, want the served Parla still", names(got))
	}
	if err := serving.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := answer(); !strings.Contains(got, "Parma") || strings.Contains(got, "Parla") {
		t.Errorf("after the reload: %v, want Parma only", names(got))
	}
	if err := serving.Close(); err != nil {
		t.Fatal(err)
	}
	if rec := get(h, http.MethodGet, "/search?q=par&fuzzy=false", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("after Close: %d %s, want 503 and no kept answer", rec.Code, rec.Body)
	}
}
