package openapitest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/server/openapitest"
)

// answer is what a handler sends back, for Check.
type answer struct {
	status int
	header map[string]string
	body   string
}

func jsonHeader(extra ...string) map[string]string {
	h := map[string]string{"Content-Type": "application/json; charset=utf-8", "X-Request-Id": "a1-1"}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return h
}

const hit = `{"name":"Istanbul","label":"Istanbul","slug":"istanbul","country":"Türkiye","country_code":"tr","population":11174257,"lat":41.01384,"lon":28.94966,"id":745044,"match":{"start":0,"end":3}}`

// Check tells the answers the document describes from those it does not,
// so that the tests that hold the handler's answers to it can fail.
func TestCheck(t *testing.T) {
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, method, target string
		answer               answer
		wantErr              string // "" when the answer holds to the document
	}{
		{"a search", "GET", "/search?q=ist", answer{200, jsonHeader("Search-Complete", "?0"), "[" + hit + "]"}, ""},
		{"a search as GeoJSON", "GET", "/search?q=ist&format=geojson", answer{200,
			map[string]string{"Content-Type": "application/geo+json; charset=utf-8", "X-Request-Id": "x", "Search-Complete": "?1"},
			`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[28.94966,41.01384]},"properties":` + hit + `}]}`}, ""},
		{"a hit with a field the document does not know", "GET", "/search?q=ist",
			answer{200, jsonHeader("Search-Complete", "?0"), `[{"name":"Istanbul","label":"Istanbul","slug":"istanbul","country":"Türkiye","rank":1}]`}, "rank"},
		{"a hit without its label", "GET", "/search?q=ist",
			answer{200, jsonHeader("Search-Complete", "?0"), `[{"name":"Istanbul","slug":"istanbul","country":"Türkiye"}]`}, "label"},
		{"a search without Search-Complete", "GET", "/search?q=ist", answer{200, jsonHeader(), "[]"}, "Search-Complete"},
		{"an answer without X-Request-Id", "GET", "/healthz",
			answer{200, map[string]string{"Content-Type": "application/json"}, `{"status":"ok"}`}, "X-Request-Id"},
		{"a status the document does not list", "GET", "/search?q=ist", answer{418, jsonHeader(), `{"message":"teapot"}`}, "status is not supported"},
		{"an error as text", "GET", "/search?q=ab",
			answer{400, map[string]string{"Content-Type": "text/plain; charset=utf-8", "X-Request-Id": "x"}, "Enter at least 3 letters\n"}, "Content-Type"},
		{"a 429 without Retry-After", "GET", "/search?q=ist", answer{429, jsonHeader(), `{"message":"slow down"}`}, "Retry-After"},
		{"a rate limit field out of shape", "GET", "/search?q=ist",
			answer{200, jsonHeader("Search-Complete", "?1", "RateLimit", "r=2"), "[]"}, "RateLimit"},
		{"an unknown path", "GET", "/nowhere", answer{404, jsonHeader(), `{"message":"Not found"}`}, ""},
		{"an unknown path answered 200", "GET", "/nowhere", answer{200, jsonHeader(), `{"message":"Not found"}`}, "status is not supported"},
		{"another method", "POST", "/search", answer{405, jsonHeader("Allow", "GET, HEAD, OPTIONS"), `{"message":"Method not allowed"}`}, ""},
		{"another method without Allow", "POST", "/search", answer{405, jsonHeader(), `{"message":"Method not allowed"}`}, "Allow"},
		{"not ready", "GET", "/readyz", answer{503, jsonHeader(), `{"status":"unavailable","checks":{"dataset:small":"empty"},"failed":["dataset:small"]}`}, ""},
		{"a readiness word the document does not know", "GET", "/readyz", answer{200, jsonHeader(), `{"status":"fine","checks":{}}`}, "status"},
		{"a city without a location, as GeoJSON", "GET", "/reverse?lat=1&lon=2&format=geojson", answer{200,
			map[string]string{"Content-Type": "application/geo+json", "X-Request-Id": "x"},
			`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{"name":"A","label":"A","slug":"a","country":"B"}}]}`}, ""},
		{"a geometry that is not one", "GET", "/reverse?lat=1&lon=2&format=geojson", answer{200,
			map[string]string{"Content-Type": "application/geo+json", "X-Request-Id": "x"},
			`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":"here","properties":{"name":"A","label":"A","slug":"a","country":"B"}}]}`}, "geometry"},
		{"a city by its id", "GET", "/cities/2643743", answer{200, jsonHeader(), `{"name":"London","label":"London","slug":"london","country":"United Kingdom","id":2643743}`}, ""},
		{"no city of that id", "GET", "/cities/42", answer{404, jsonHeader(), `{"message":"No city has this id in this dataset"}`}, ""},
		{"a city as a list", "GET", "/cities/2643743", answer{200, jsonHeader(), `[{"name":"London","label":"London","slug":"london","country":"United Kingdom"}]`}, "object"},
		{"an unlimited search's page config", "GET", "/config", answer{200, jsonHeader(),
			`{"limit":null,"min_letters":3,"max_length":100,"datasets":[{"name":"small","available":true,"cities":2}]}`}, ""},
		{"a page config that lost its limit", "GET", "/config", answer{200, jsonHeader(),
			`{"min_letters":3,"max_length":100,"datasets":[]}`}, "limit"},
		{"a HEAD, which has no body", "HEAD", "/search?q=ist", answer{200, nil, ""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := make(http.Header)
			for k, v := range tt.answer.header {
				header.Set(k, v)
			}
			err := doc.Check(httptest.NewRequest(tt.method, tt.target, nil), tt.answer.status, header, []byte(tt.answer.body))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Check: %v, want the answer to hold", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("Check passed, want an error about %s", tt.wantErr)
			case err != nil && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("Check: %v, want an error about %s", err, tt.wantErr)
			}
		})
	}
}

// Handler reports the answers that break the document, and passes every
// answer through as it is.
func TestHandlerReportsBrokenAnswers(t *testing.T) {
	doc, err := openapitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	var reported []error
	h := doc.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Request-Id", "x")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"` + r.URL.Query().Get("status") + `"}`))
	}), func(err error) { reported = append(reported, err) })

	for _, status := range []string{"ok", "sleepy"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz?status="+status, nil))
		if want := `{"status":"` + status + `"}`; rec.Body.String() != want || rec.Code != 200 {
			t.Errorf("the client got %d %s, want 200 %s", rec.Code, rec.Body, want)
		}
	}
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "sleepy") {
		t.Errorf("reported %v, want the one answer with status sleepy", reported)
	}
}

// A document that is not a valid OpenAPI document does not load.
func TestParseRefusesBrokenDocuments(t *testing.T) {
	for _, data := range []string{`{`, `{"openapi":"3.1.0","info":{"title":"x"},"paths":{}}`} {
		if _, err := openapitest.Parse([]byte(data)); err == nil {
			t.Errorf("Parse(%s) loaded it", data)
		}
	}
}
