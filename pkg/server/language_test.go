package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/server"
)

// localCities have names in other languages, and homonyms to label.
func localCities() []search.City {
	munich := newCity(2867714, "Munich", "Germany", "de", "Bavaria")
	munich.AltNames = []string{"München"}
	munich.LocalNames = []search.LocalName{{Lang: "de", Name: "München"}}
	mumbai := newCity(1275339, "Mumbai", "India", "in", "Maharashtra")
	mumbai.AltNames = []string{"Bombay"}
	mumbai.LocalNames = []search.LocalName{{Lang: "en", Name: "Bombay", Former: true}}
	return []search.City{munich, mumbai,
		newCity(4250542, "Springfield", "United States", "us", "Illinois"),
		newCity(4409896, "Springfield", "United States", "us", "Missouri"),
	}
}

func TestSearchInLanguages(t *testing.T) {
	h := server.New(mustService(t, localCities()))
	for _, tc := range []struct {
		name, target, acceptLanguage, want string
	}{
		{"no lang: the dataset's names", "/search?q=munich", "",
			`[{"name":"Munich","label":"Munich","slug":"munich","country":"Germany","country_code":"de","subcountry":"Bavaria","id":2867714,"match":{"start":0,"end":6}}]`},
		{"lang=de", "/search?q=munich&lang=de", "",
			`[{"name":"München","label":"München","slug":"munich","country":"Deutschland","country_code":"de","subcountry":"Bavaria","id":2867714,"matched":{"name":"Munich","start":0,"end":6}}]`},
		{"lang=ja, the German name's span", "/search?q=munch&lang=ja,de", "",
			`[{"name":"München","label":"München","slug":"munich","country":"ドイツ","country_code":"de","subcountry":"Bavaria","id":2867714,"match":{"start":0,"end":5}}]`},
		{"Accept-Language without lang", "/search?q=munich", "de-DE,de;q=0.9",
			`[{"name":"München","label":"München","slug":"munich","country":"Deutschland","country_code":"de","subcountry":"Bavaria","id":2867714,"matched":{"name":"Munich","start":0,"end":6}}]`},
		{"lang wins over Accept-Language", "/search?q=munich&lang=en", "de",
			`[{"name":"Munich","label":"Munich","slug":"munich","country":"Germany","country_code":"de","subcountry":"Bavaria","id":2867714,"match":{"start":0,"end":6}}]`},
		{"an unreadable Accept-Language asks for nothing", "/search?q=munich", "de;q=zz",
			`[{"name":"Munich","label":"Munich","slug":"munich","country":"Germany","country_code":"de","subcountry":"Bavaria","id":2867714,"match":{"start":0,"end":6}}]`},
		{"a former name says so", "/search?q=bombay", "",
			`[{"name":"Mumbai","label":"Mumbai","slug":"mumbai","country":"India","country_code":"in","subcountry":"Maharashtra","id":1275339,"matched":{"name":"Bombay","start":0,"end":6,"formerly":true}}]`},
		{"homonyms get their regions", "/search?q=springf", "",
			`[{"name":"Springfield","label":"Springfield, Illinois","slug":"springfield","country":"United States","country_code":"us","subcountry":"Illinois","id":4250542,"match":{"start":0,"end":7}},` +
				`{"name":"Springfield","label":"Springfield, Missouri","slug":"springfield","country":"United States","country_code":"us","subcountry":"Missouri","id":4409896,"match":{"start":0,"end":7}}]`},
		{"labels in GeoJSON too", "/search?q=springf&limit=1&format=geojson&lang=de", "",
			`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{"name":"Springfield","label":"Springfield","slug":"springfield","country":"Vereinigte Staaten","country_code":"us","subcountry":"Illinois","id":4250542,"match":{"start":0,"end":7}}}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.target, nil)
			if tc.acceptLanguage != "" {
				req.Header.Set("Accept-Language", tc.acceptLanguage)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || rec.Body.String() != tc.want {
				t.Errorf("%s = %d\n%s\nwant\n%s", tc.target, rec.Code, rec.Body, tc.want)
			}
		})
	}
}

func TestSearchRefusesBadLang(t *testing.T) {
	h := server.New(mustService(t, localCities()))
	assertJSON(t, do(t, h, http.MethodGet, "/search?q=munich&lang=de,12345678x"), http.StatusBadRequest,
		`{"message":"Invalid lang \"12345678x\": use language tags such as de or pt-BR, comma-separated"}`)
	assertJSON(t, do(t, h, http.MethodGet, "/search?q=munich&lang="), http.StatusOK,
		`[{"name":"Munich","label":"Munich","slug":"munich","country":"Germany","country_code":"de","subcountry":"Bavaria","id":2867714,"match":{"start":0,"end":6}}]`)
}

func TestSearchVariesByAcceptLanguageWhenCached(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxAge   time.Duration
		target   string
		wantVary string
	}{
		{"cached, names by Accept-Language", time.Minute, "/search?q=munich", "Accept-Language"},
		{"cached, names by lang", time.Minute, "/search?q=munich&lang=de", ""},
		{"never cached", 0, "/search?q=munich", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := server.New(mustService(t, localCities()), server.WithCacheMaxAge(tc.maxAge))
			rec := do(t, h, http.MethodGet, tc.target)
			if got := strings.Join(rec.Header().Values("Vary"), ", "); got != tc.wantVary {
				t.Errorf("Vary = %q, want %q", got, tc.wantVary)
			}
		})
	}
}
