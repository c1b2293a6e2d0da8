package server

import (
	"net/url"
	"strings"
	"testing"
)

// paramNames are the names the handlers read, and one they do not.
var paramNames = []string{"q", "dataset", "limit", "country", "fuzzy", "lat", "lon", "bias_scale", "bbox", "format", "lang", "radius_km", "v", ""}

// checkValues fails unless values reads raw as url.ParseQuery does.
func checkValues(t *testing.T, raw string) {
	t.Helper()
	want, _ := url.ParseQuery(raw)
	got := parseValues(raw)
	for _, name := range paramNames {
		wantValue, wantOK := "", len(want[name]) > 0
		if wantOK {
			wantValue = want[name][0]
		}
		if v, ok := got.Lookup(name); v != wantValue || ok != wantOK {
			t.Errorf("%q: Lookup(%q) = %q, %v; url.ParseQuery has %q, %v", raw, name, v, ok, wantValue, wantOK)
		}
		if v := got.Get(name); v != want.Get(name) {
			t.Errorf("%q: Get(%q) = %q, url.Values.Get %q", raw, name, v, want.Get(name))
		}
	}
}

func TestValuesReadAsParseQuery(t *testing.T) {
	for _, raw := range []string{
		"",
		"q=ber",
		"q=ber&dataset=large",
		"q=rio+de&dataset=large",
		"q=s%C3%A3o%20p",
		"q=first&q=second",
		"q=%zz&q=second",         // a malformed escape drops the pair
		"q;x=1&q=ok",             // so does a semicolon
		"q=a;b&q=ok",             // in the value too
		"%71=escaped-key&q=late", // an escaped name is the name
		"q",                      // no '=': an empty value
		"q=&q=second",
		"&&q=ber&&",
		"=x&q=ber",
		"lang=de,en&lat=48.1&lon=11.5&bbox=1,2,3,4&format=geojson",
		"limit=10&fuzzy=false&country=fr,de&bias_scale=0.5&radius_km=20",
		strings.Repeat("x=1&", maxPairs) + "q=many",            // more pairs than the array
		strings.Repeat("&", maxScannedAmpersands+1) + "q=many", // parsed by url.ParseQuery
		strings.Repeat("x=1&", 10_001) + "q=too-many",          // more than url.ParseQuery reads
	} {
		checkValues(t, raw)
	}
}

func FuzzValues(f *testing.F) {
	for _, raw := range []string{"q=ber&dataset=large", "q=%zz&q=b", "%71=a;&lang=de"} {
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, raw string) { checkValues(t, raw) })
}

// parseValues returns, for the tests, the parameters of the raw query string raw.
func parseValues(raw string) *values {
	v := new(values)
	v.parse(raw)
	return v
}
