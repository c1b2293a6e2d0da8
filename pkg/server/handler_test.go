package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/server"
)

const jsonContentType = "application/json; charset=utf-8"

// testCities is a small dataset with every folding case the tests need.
func testCities() []search.City {
	return []search.City{
		newCity(745044, "İstanbul", "Turkey", "tr", "Istanbul"),
		newCity(3012649, "Istres", "France", "fr", "Provence-Alpes-Côte d'Azur"),
		newCity(555980, "Istra", "Russia", "ru", "Moscow Oblast"),
		newCity(3448439, "São Paulo", "Brazil", "br", "São Paulo"),
		newCity(2410763, "São Tomé", "Sao Tome and Principe", "st", "São Tomé Island"),
		{ID: 2988507, Name: "Paris", Slug: "paris", Country: "France", CountryCode: "fr", Subcountry: "Île-de-France",
			Lat: 48.85341, Lon: 2.3488, HasLocation: true},
		newCity(2656173, "Bath", "United Kingdom", "gb", "England"),
		newCity(1276058, "Bathinda", "India", "in", "Punjab"),
	}
}

// The wire form of testCities, written out by hand so that a change to the
// encoding shows up here.
const (
	istraJSON    = `{"name":"Istra","label":"Istra","slug":"istra","country":"Russia","country_code":"ru","subcountry":"Moscow Oblast","id":555980}`
	istresJSON   = `{"name":"Istres","label":"Istres","slug":"istres","country":"France","country_code":"fr","subcountry":"Provence-Alpes-Côte d'Azur","id":3012649}`
	istanbulJSON = `{"name":"İstanbul","label":"İstanbul","slug":"istanbul","country":"Turkey","country_code":"tr","subcountry":"Istanbul","id":745044}`
	saoPauloJSON = `{"name":"São Paulo","label":"São Paulo","slug":"sao-paulo","country":"Brazil","country_code":"br","subcountry":"São Paulo","id":3448439}`
	saoTomeJSON  = `{"name":"São Tomé","label":"São Tomé","slug":"sao-tome","country":"Sao Tome and Principe","country_code":"st","subcountry":"São Tomé Island","id":2410763}`
	parisJSON    = `{"name":"Paris","label":"Paris","slug":"paris","country":"France","country_code":"fr","subcountry":"Île-de-France","lat":48.85341,"lon":2.3488,"id":2988507}`
)

// matched adds the span of the name that the query matched to a city's
// wire form, as every search answer carries it.
func matched(cityJSON string, start, end int) string {
	return fmt.Sprintf(`%s,"match":{"start":%d,"end":%d}}`, strings.TrimSuffix(cityJSON, "}"), start, end)
}

func newCity(id uint32, name, country, code, subcountry string) search.City {
	return search.City{ID: id, Name: name, Slug: search.Slug(name), Country: country, CountryCode: code, Subcountry: subcountry}
}

// mustStore returns a memory store with cities loaded as the small dataset.
func mustStore(tb testing.TB, cities []search.City) *memory.Store {
	tb.Helper()
	store := memory.New()
	if _, err := store.Load(tb.Context(), search.Small, &search.SliceReader{Cities: cities}, search.LoadOptions{}); err != nil {
		tb.Fatalf("load small: %v", err)
	}
	return store
}

// mustService returns a service over a memory store with cities loaded as
// the small dataset.
func mustService(tb testing.TB, cities []search.City) *search.Service {
	tb.Helper()
	return search.NewService(mustStore(tb, cities))
}

// fakeStore is a search.Store whose searches a function answers, for
// tests of what the handler makes of a store's answers and errors. Its
// Stats asks the function too; it loads nothing.
type fakeStore func(ctx context.Context, q search.Query) ([]search.City, error)

func (f fakeStore) Search(ctx context.Context, dst []search.Found, q search.Query) ([]search.Found, error) {
	cities, err := f(ctx, q)
	if err != nil {
		return dst, err
	}
	for _, c := range cities {
		dst = append(dst, search.Found{City: c, Key: search.NameKey{Slug: c.Slug}})
	}
	return dst, nil
}

func (f fakeStore) Stats(ctx context.Context, d search.Dataset) (search.DatasetStats, error) {
	if _, err := f(ctx, search.Query{Dataset: d, Prefix: "a", Limit: 1}); err != nil {
		return search.DatasetStats{}, err
	}
	return search.DatasetStats{Cities: 1}, nil
}

// Lookup finds the first city that the function gives for a search of
// "a" with that id.
func (f fakeStore) Lookup(ctx context.Context, d search.Dataset, id uint32) (search.City, error) {
	cities, err := f(ctx, search.Query{Dataset: d, Prefix: "a", Limit: search.MaxLimit})
	if err != nil {
		return search.City{}, err
	}
	for _, c := range cities {
		if c.ID == id {
			return c, nil
		}
	}
	return search.City{}, search.ErrNotFound
}

// Nearby gives what the function gives for a search of "a", as it is.
func (f fakeStore) Nearby(ctx context.Context, dst []search.City, q search.NearQuery) ([]search.City, error) {
	cities, err := f(ctx, search.Query{Dataset: q.Dataset, Prefix: "a", Limit: q.Limit, Countries: q.Countries})
	if err != nil {
		return dst, err
	}
	return append(dst, cities...), nil
}

func (fakeStore) Load(context.Context, search.Dataset, search.CityReader, search.LoadOptions) (search.LoadStats, error) {
	return search.LoadStats{}, errors.New("the fake store loads nothing")
}

func (fakeStore) Close() error { return nil }

// searching returns a service whose store answers with f.
func searching(f func(ctx context.Context, q search.Query) ([]search.City, error)) *search.Service {
	return search.NewService(fakeStore(f))
}

// unreachable is a service for requests that must be answered before the store.
func unreachable(tb testing.TB) *search.Service {
	return searching(func(_ context.Context, q search.Query) ([]search.City, error) {
		tb.Errorf("store asked for %+v", q)
		return []search.City{}, nil
	})
}

// do sends one request to h and returns the recorded response.
func do(tb testing.TB, h http.Handler, method, target string) *httptest.ResponseRecorder {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

// assertJSON checks a response's status, JSON content type and exact body.
func assertJSON(tb testing.TB, rec *httptest.ResponseRecorder, wantStatus int, wantBody string) {
	tb.Helper()
	if rec.Code != wantStatus {
		tb.Errorf("status = %d, want %d (body %s)", rec.Code, wantStatus, rec.Body)
	}
	if got := rec.Header().Get("Content-Type"); got != jsonContentType {
		tb.Errorf("Content-Type = %q, want %q", got, jsonContentType)
	}
	if got := rec.Body.String(); got != wantBody {
		tb.Errorf("body =\n%s\nwant\n%s", got, wantBody)
	}
}

func TestSearchAnswersMatchingCities(t *testing.T) {
	h := server.New(mustService(t, testCities()))
	ist := "[" + matched(istraJSON, 0, 3) + "," + matched(istresJSON, 0, 3) + "," + matched(istanbulJSON, 0, 3) + "]"
	saoP := "[" + matched(saoPauloJSON, 0, 5) + "]"
	tests := []struct {
		name, target, want string
	}{
		{"prefix lists matches shortest first", "/search?q=ist", ist},
		{"upper case folds", "/search?q=IST", ist},
		{"dotted capital I folds", "/search?q=%C4%B0st", ist},
		{"dotless i folds", "/search?q=%C4%B1st", ist},
		{"explicit small dataset and limit", "/search?q=ist&dataset=small&limit=3", ist},
		{"space is kept as a word gap", "/search?q=sao%20p", saoP},
		{"plus is a space", "/search?q=sao+p", saoP},
		{"diacritics fold", "/search?q=s%C3%A3o%20p", saoP},
		{"punctuation folds to a word gap", "/search?q=SAO_P", saoP},
		{"shorter slug first when there is no population", "/search?q=sao", "[" + matched(saoTomeJSON, 0, 3) + "," + matched(saoPauloJSON, 0, 3) + "]"},
		{"surrounding unicode spaces are trimmed", "/search?q=%C2%A0%20sao-t%20", "[" + matched(saoTomeJSON, 0, 5) + "]"},
		{"location is encoded", "/search?q=paris", "[" + matched(parisJSON, 0, 5) + "]"},
		{"limit caps the answer", "/search?q=ist&limit=1", "[" + matched(istraJSON, 0, 3) + "]"},
		{"limit 100 is allowed", "/search?q=ist&limit=100", ist},
		{"no match is an empty array", "/search?q=zzz", "[]"},
		{"100 letters are allowed", "/search?q=" + strings.Repeat("a", 100), "[]"},
		{"surrounding spaces do not count toward the length", "/search?q=%20" + strings.Repeat("a", 100) + "%20%20", "[]"},
		{"two CJK characters fold to more than 3 letters", "/search?q=" + url.QueryEscape("東京"), "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertJSON(t, do(t, h, http.MethodGet, tt.target), http.StatusOK, tt.want)
		})
	}
}

func TestSearchRejectsBadInput(t *testing.T) {
	h := server.New(unreachable(t))
	const tooShort = `{"message":"Enter at least 3 letters"}`
	tests := []struct {
		name, target, want string
	}{
		{"two letters", "/search?q=is", tooShort},
		{"two letters padded with spaces", "/search?q=%20%20is%20", tooShort},
		{"missing q", "/search", tooShort},
		{"empty q", "/search?q=", tooShort},
		{"two letters, one of them two bytes", "/search?q=%C4%B0s", tooShort},
		{"trailing space is not a letter", "/search?q=ab+", tooShort},
		{"punctuation is not a letter", "/search?q=a-b", tooShort},
		{"symbols only", "/search?q=!!!", tooShort},
		{"letters that fold to nothing", "/search?q=" + url.QueryEscape("𠀀𠀁𠀂"), tooShort},
		{"unknown dataset", "/search?q=ist&dataset=huge", `{"message":"Unknown dataset \"huge\": use small or large"}`},
		{"dataset names are case sensitive", "/search?q=ist&dataset=Small", `{"message":"Unknown dataset \"Small\": use small or large"}`},
		{"limit 0", "/search?q=ist&limit=0", `{"message":"Invalid limit 0: use a whole number from 1 to 100"}`},
		{"limit 101", "/search?q=ist&limit=101", `{"message":"Invalid limit 101: use a whole number from 1 to 100"}`},
		{"negative limit", "/search?q=ist&limit=-1", `{"message":"Invalid limit -1: use a whole number from 1 to 100"}`},
		{"limit not a number", "/search?q=ist&limit=abc", `{"message":"Invalid limit \"abc\": use a whole number from 1 to 100"}`},
		{"fractional limit", "/search?q=ist&limit=1.5", `{"message":"Invalid limit \"1.5\": use a whole number from 1 to 100"}`},
		{"101 letters", "/search?q=" + strings.Repeat("a", 101), `{"message":"Query is too long: use at most 100 characters"}`},
		{"101 two-byte letters", "/search?q=" + strings.Repeat("%C3%A9", 101), `{"message":"Query is too long: use at most 100 characters"}`},
		{"invalid UTF-8", "/search?q=%ff%fe%fd", `{"message":"Query is not valid UTF-8"}`},
		{"unknown country", "/search?q=san&country=cl,Atlantis", `{"message":"Unknown country \"Atlantis\": use ISO codes such as cl, or English names"}`},
		{"invalid fuzzy", "/search?q=san&fuzzy=maybe", `{"message":"Invalid fuzzy \"maybe\": use true or false"}`},
		{"HTML in a message is not escaped", "/search?q=ist&dataset=%3Cb%3E", `{"message":"Unknown dataset \"<b>\": use small or large"}`},
		{"latitude out of range", "/search?q=ist&lat=91&lon=0", `{"message":"Invalid lat \"91\": use a number from -90 to 90"}`},
		{"longitude not a number", "/search?q=ist&lat=0&lon=abc", `{"message":"Invalid lon \"abc\": use a number from -180 to 180"}`},
		{"latitude NaN", "/search?q=ist&lat=NaN&lon=0", `{"message":"Invalid lat \"NaN\": use a number from -90 to 90"}`},
		{"longitude infinite", "/search?q=ist&lat=0&lon=Inf", `{"message":"Invalid lon \"Inf\": use a number from -180 to 180"}`},
		{"lat without lon", "/search?q=ist&lat=10", `{"message":"Give both lat and lon, or neither"}`},
		{"bias scale over 1", "/search?q=ist&lat=0&lon=0&bias_scale=2", `{"message":"Invalid bias_scale \"2\": use a number from 0 to 1"}`},
		{"bbox with min over max", "/search?q=ist&bbox=10,0,5,1", `{"message":"Invalid bbox \"10,0,5,1\": use minLon,minLat,maxLon,maxLat (longitudes -180 to 180, latitudes -90 to 90, min ≤ max)"}`},
		{"bbox of 3 numbers", "/search?q=ist&bbox=1,2,3", `{"message":"Invalid bbox \"1,2,3\": use minLon,minLat,maxLon,maxLat (longitudes -180 to 180, latitudes -90 to 90, min ≤ max)"}`},
		{"bbox with NaN", "/search?q=ist&bbox=NaN,0,1,1", `{"message":"Invalid bbox \"NaN,0,1,1\": use minLon,minLat,maxLon,maxLat (longitudes -180 to 180, latitudes -90 to 90, min ≤ max)"}`},
		// Plain decimals only: strconv.ParseFloat would read these as 16,
		// 10 and 1000, and the country table would read g\x00b as gb.
		{"hexadecimal latitude", "/search?q=ist&lat=0x1p4&lon=0", `{"message":"Invalid lat \"0x1p4\": use a number from -90 to 90"}`},
		{"latitude with an underscore", "/search?q=ist&lat=1_0&lon=0", `{"message":"Invalid lat \"1_0\": use a number from -90 to 90"}`},
		{"longitude with an exponent", "/search?q=ist&lat=0&lon=1e2", `{"message":"Invalid lon \"1e2\": use a number from -180 to 180"}`},
		{"bbox in hexadecimal", "/search?q=ist&bbox=0x1,0,1,1", `{"message":"Invalid bbox \"0x1,0,1,1\": use minLon,minLat,maxLon,maxLat (longitudes -180 to 180, latitudes -90 to 90, min ≤ max)"}`},
		{"country code with a NUL", "/search?q=san&country=g%00b", `{"message":"Unknown country \"g\\x00b\": use ISO codes such as cl, or English names"}`},
		{"dotted country code", "/search?q=san&country=g.b", `{"message":"Unknown country \"g.b\": use ISO codes such as cl, or English names"}`},
		{"unknown format", "/search?q=ist&format=xml", `{"message":"Invalid format \"xml\": use json or geojson"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assertJSON(t, do(t, h, http.MethodGet, tt.target), http.StatusBadRequest, tt.want)
		})
	}
}

func TestSearchGeoJSON(t *testing.T) {
	h := server.New(mustService(t, testCities()))
	rec := do(t, h, http.MethodGet, "/search?q=paris&format=geojson")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/geo+json; charset=utf-8" {
		t.Fatalf("status %d, Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	want := `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[2.3488,48.85341]},"properties":` +
		matched(parisJSON, 0, 5) + `}]}`
	if got := rec.Body.String(); got != want {
		t.Errorf("body =\n%s\nwant\n%s", got, want)
	}
	// Near a point, every hit says how far it is.
	rec = do(t, h, http.MethodGet, "/search?q=paris&lat=48.8&lon=2.3")
	if !strings.Contains(rec.Body.String(), `"distance_km":6.9`) {
		t.Errorf("body %s has no distance_km of 6.9", rec.Body)
	}
}

func TestSearchPassesFoldedQueryToStore(t *testing.T) {
	// Lines: the ten lines of the answer, but after a space (see
	// search.Query.Lines).
	small := func(prefix string) search.Query {
		return search.Query{Dataset: search.Small, Prefix: prefix, Limit: 17, Words: true, Lines: 10}
	}
	spaced := func(prefix string) search.Query {
		return search.Query{Dataset: search.Small, Prefix: prefix, Limit: 17, Words: true}
	}
	tests := []struct {
		name, target string
		want         []search.Query
	}{
		{"defaults", "/search?q=ist", []search.Query{small("ist")}},
		// A first word of two letters: no city that the Service would
		// search alone once "sa-p" lists nothing (see search.Result).
		{"trimmed and folded", "/search?q=%20S%C3%A3_P", []search.Query{small("sa-p")}},
		{"a trailing space, even a unicode one, also asks for the names in which the word ends",
			"/search?q=%20S%C3%A3_P%C2%A0", []search.Query{spaced("sa-p"), spaced("sa-p-")}},
		{"dataset and limit", "/search?q=Xi%27an&dataset=large&limit=100", []search.Query{{Dataset: search.Large, Prefix: "xian", Limit: 100, Words: true, Lines: 100}}},
		{"empty parameters take defaults", "/search?q=ist&dataset=&limit=&country=&fuzzy=", []search.Query{small("ist")}},
		{"countries by code and name", "/search?q=san&country=CL,Korea,%20Republic%20of", []search.Query{{Dataset: search.Small, Prefix: "san", Limit: 17, Countries: []string{"cl", "kr"}, Words: true, Lines: 10}}},
		{"typos off: one search", "/search?q=zuirch&fuzzy=false", []search.Query{small("zuirch")}},
	}
	// The Service asks for half as many again and two, up to the most, as
	// some matches may read the same as better ones.
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []search.Query
			h := server.New(searching(func(_ context.Context, q search.Query) ([]search.City, error) {
				got = append(got, q)
				return []search.City{}, nil
			}))
			assertJSON(t, do(t, h, http.MethodGet, tt.target), http.StatusOK, "[]")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("store got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSearchErrors(t *testing.T) {
	closed := memory.New()
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	fail := func(err error) *search.Service {
		return searching(func(context.Context, search.Query) ([]search.City, error) { return nil, err })
	}

	tests := []struct {
		name       string
		searcher   *search.Service
		ctx        context.Context
		target     string
		wantStatus int
		wantBody   string
		wantLevel  string // of the "request failed" line; "" for no line
		wantLog    string // in that line
	}{
		{
			name: "never imported dataset", searcher: search.NewService(memory.New()),
			target: "/search?q=ist", wantStatus: http.StatusServiceUnavailable,
			wantBody:  `{"message":"This dataset is not available yet"}`,
			wantLevel: "WARN", wantLog: "dataset small: dataset is empty",
		},
		{
			name: "the log names the dataset asked for", searcher: mustService(t, testCities()),
			target: "/search?q=ist&dataset=large", wantStatus: http.StatusServiceUnavailable,
			wantBody:  `{"message":"This dataset is not available yet"}`,
			wantLevel: "WARN", wantLog: "dataset large: dataset is empty",
		},
		{
			name: "unavailable store", searcher: search.NewService(closed),
			target: "/search?q=ist", wantStatus: http.StatusServiceUnavailable,
			wantBody:  `{"message":"Search is unavailable, try again later"}`,
			wantLevel: "WARN", wantLog: "store unavailable",
		},
		{
			name:     "unexpected error is internal and logged, not shown",
			searcher: fail(fmt.Errorf("read /var/lib/cityfinder/small.db: %w", errors.New("disk on fire"))),
			target:   "/search?q=ist", wantStatus: http.StatusInternalServerError,
			wantBody:  `{"message":"internal error"}`,
			wantLevel: "ERROR", wantLog: `read /var/lib/cityfinder/small.db: disk on fire`,
		},
		{
			name: "store stricter than the contract", searcher: fail(fmt.Errorf("%w: no", search.ErrInvalidQuery)),
			target: "/search?q=ist", wantStatus: http.StatusBadRequest,
			wantBody: `{"message":"Invalid query"}`,
		},
		{
			name: "store timeout", searcher: fail(fmt.Errorf("query: %w", context.DeadlineExceeded)),
			target: "/search?q=ist", wantStatus: http.StatusServiceUnavailable,
			wantBody:  `{"message":"Search took too long, try again later"}`,
			wantLevel: "WARN", wantLog: "context deadline exceeded",
		},
		{
			name: "client gone is not an error", searcher: mustService(t, testCities()), ctx: canceled,
			target: "/search?q=ist", wantStatus: 499,
			wantBody:  `{"message":"Request canceled"}`,
			wantLevel: "DEBUG", wantLog: "context canceled",
		},
		{
			name:     "nil result is an empty array",
			searcher: searching(func(context.Context, search.Query) ([]search.City, error) { return nil, nil }),
			target:   "/search?q=ist", wantStatus: http.StatusOK, wantBody: "[]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			h := server.New(tt.searcher, server.WithLogger(logger))
			req := httptest.NewRequest(http.MethodGet, tt.target, nil)
			if tt.ctx != nil {
				req = req.WithContext(tt.ctx)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			assertJSON(t, rec, tt.wantStatus, tt.wantBody)
			failed := grepLines(logs.String(), `msg="request failed"`)
			switch {
			case tt.wantLevel == "" && failed != "":
				t.Errorf("logged a failure:\n%s", failed)
			case tt.wantLevel != "" && (!strings.Contains(failed, "level="+tt.wantLevel+" ") || !strings.Contains(failed, tt.wantLog)):
				t.Errorf("failure log is not at %s with %q:\n%s", tt.wantLevel, tt.wantLog, logs.String())
			}
			if !strings.Contains(logs.String(), "component=server") {
				t.Errorf("log lacks component=server:\n%s", logs.String())
			}
		})
	}
}

// grepLines returns the lines of s that contain substr.
func grepLines(s, substr string) string {
	var out []string
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "")
}

func TestSearchMiddlewareWrapsOnlySearch(t *testing.T) {
	mark := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Limited", "yes")
			next.ServeHTTP(w, r)
		})
	}
	h := server.New(mustService(t, testCities()), server.WithSearchMiddleware(mark))
	tests := []struct {
		name, method, target string
		wantStatus           int
		wantMark             string
	}{
		{"search", http.MethodGet, "/search?q=ist", http.StatusOK, "yes"},
		{"rejected search", http.MethodGet, "/search?q=is", http.StatusBadRequest, "yes"},
		{"other method on search", http.MethodPost, "/search?q=ist", http.StatusMethodNotAllowed, ""},
		{"unknown route", http.MethodGet, "/health", http.StatusNotFound, ""},
		{"path under search", http.MethodGet, "/search/x?q=ist", http.StatusNotFound, ""},
		{"reverse, limited like search", http.MethodGet, "/reverse?lat=48.85&lon=2.35", http.StatusOK, "yes"},
		{"city by id", http.MethodGet, "/cities/555980", http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, tt.method, tt.target)
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Header().Get("X-Limited"); got != tt.wantMark {
				t.Errorf("X-Limited = %q, want %q", got, tt.wantMark)
			}
		})
	}
}

func TestSearchMiddlewareCanReject(t *testing.T) {
	reject := func(http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			answerTooMany(w)
		})
	}
	h := server.New(unreachable(t), server.WithSearchMiddleware(reject))
	if rec := do(t, h, http.MethodGet, "/search?q=ist"); rec.Code != http.StatusTooManyRequests {
		t.Errorf("status = %d, want 429", rec.Code)
	}
}

func TestNilSearchMiddlewareIsNone(t *testing.T) {
	h := server.New(mustService(t, testCities()), server.WithSearchMiddleware(nil))
	assertJSON(t, do(t, h, http.MethodGet, "/search?q=ist&limit=1"), http.StatusOK, "["+matched(istraJSON, 0, 3)+"]")
}

func TestRoutes(t *testing.T) {
	h := server.New(unreachable(t))
	tests := []struct {
		name, method, target string
		wantStatus           int
		wantBody, wantAllow  string
	}{
		{"POST search is not allowed", http.MethodPost, "/search?q=ist", http.StatusMethodNotAllowed, `{"message":"Method not allowed"}`, "GET, HEAD, OPTIONS"},
		{"DELETE search is not allowed", http.MethodDelete, "/search", http.StatusMethodNotAllowed, `{"message":"Method not allowed"}`, "GET, HEAD, OPTIONS"},
		{"unknown route", http.MethodGet, "/nope", http.StatusNotFound, `{"message":"Not found"}`, ""},
		{"root", http.MethodGet, "/", http.StatusNotFound, `{"message":"Not found"}`, ""},
		{"POST unknown route", http.MethodPost, "/nope", http.StatusNotFound, `{"message":"Not found"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, tt.method, tt.target)
			assertJSON(t, rec, tt.wantStatus, tt.wantBody)
			if got := rec.Header().Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
		})
	}
}

func TestAccessLog(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Level
		want  []string // substrings of the one access line; nil for no line
	}{
		{"one line per request at debug", slog.LevelDebug,
			[]string{"msg=request", "component=server", "method=GET", "path=/search", "query=\"q=is\"", "status=400", "bytes=38"}},
		{"nothing above debug", slog.LevelInfo, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: tt.level}))
			h := server.New(unreachable(t), server.WithLogger(logger))
			do(t, h, http.MethodGet, "/search?q=is")

			lines := grepLines(logs.String(), "msg=request")
			if tt.want == nil {
				if lines != "" {
					t.Errorf("logged %q, want nothing", lines)
				}
				return
			}
			if strings.Count(lines, "\n") != 1 {
				t.Fatalf("access lines = %q, want one", lines)
			}
			for _, w := range tt.want {
				if !strings.Contains(lines, w) {
					t.Errorf("access line %q lacks %q", lines, w)
				}
			}
		})
	}
}

func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{"ist", "İst", "ıst", "sao p", "SAO_P", "is", "a-b", "!!!", "\xff\xfe\xfd", "𠀀𠀁𠀂", " \u00a0ist\t", strings.Repeat("é", 101)} {
		f.Add(q)
	}
	h := server.New(mustService(f, testCities()))
	f.Fuzz(func(t *testing.T, q string) {
		// Typos off: every city found then starts with the folded query,
		// or with its first words, when the last ones name no place and
		// the words before them were answered instead ("sao 0" lists São
		// Paulo).
		rec := do(t, h, http.MethodGet, "/search?fuzzy=false&"+url.Values{"q": {q}}.Encode())
		switch rec.Code {
		case http.StatusOK:
			var cities []search.Hit
			if err := json.Unmarshal(rec.Body.Bytes(), &cities); err != nil || cities == nil {
				t.Fatalf("q=%q: 200 body %s is not a JSON array: %v", q, rec.Body, err)
			}
			prefix := search.Slug(strings.TrimSpace(q))
			for _, c := range cities {
				if !startsWithWords(c.Slug, prefix) {
					t.Errorf("q=%q: %s does not start with %q nor with its first words", q, c.Slug, prefix)
				}
			}
		case http.StatusBadRequest:
			var body struct{ Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Message == "" {
				t.Fatalf("q=%q: 400 body %s has no message: %v", q, rec.Body, err)
			}
		default:
			t.Fatalf("q=%q: status %d, want 200 or 400 (body %s)", q, rec.Code, rec.Body)
		}
	})
}

// startsWithWords reports whether slug starts with prefix, or with the
// words of prefix up to one of its word breaks.
func startsWithWords(slug, prefix string) bool {
	for {
		if strings.HasPrefix(slug, prefix) {
			return true
		}
		i := strings.LastIndexByte(prefix, '-')
		if i <= 0 {
			return false
		}
		prefix = prefix[:i]
	}
}
