package server

import (
	"net/http"
	"net/url"
	"strings"
)

// values are the parameters of a request's URL, read as url.ParseQuery
// reads them and url.Values.Get answers (the first well-formed pair of a
// name; a pair with a ';' or a malformed escape is left out), but without
// its map: the pairs of a query are few, and kept in an array of the
// request's state (see paramsOf), the map and its slices were a fifth of
// the allocations of a /search. A value is a part of the query itself
// unless it has escapes.
type values struct {
	pairs [maxPairs]pair
	n     int
	// many holds the query parsed by url.ParseQuery when it has more
	// pairs than the array (it also applies ParseQuery's limit on their
	// number).
	many url.Values
}

// pair is one parameter, unescaped.
type pair struct{ name, value string }

// maxPairs is the most pairs that values keeps in its array, more than
// an autocomplete sends (q, dataset and perhaps lang, limit, lat, lon);
// a larger array would make the request's state a larger allocation.
const maxPairs = 8

// paramsOf returns the parameters of r, parsed once into its state.
func paramsOf(r *http.Request) *values {
	st := stateOf(r)
	if !st.parsed {
		st.params.parse(r.URL.RawQuery)
		st.parsed = true
	}
	return &st.params
}

// maxScannedAmpersands is the most '&' a query may have for values to
// read it rather than url.ParseQuery.
const maxScannedAmpersands = 64

// parse reads the raw query string raw into v.
func (v *values) parse(raw string) {
	if strings.Count(raw, "&") > maxScannedAmpersands {
		v.many, _ = url.ParseQuery(raw)
		return
	}
	for rest := raw; rest != ""; {
		var p string
		p, rest, _ = strings.Cut(rest, "&")
		if p == "" || strings.IndexByte(p, ';') >= 0 {
			continue
		}
		name, value, _ := strings.Cut(p, "=")
		name, err := url.QueryUnescape(name) // as it is when it has no escapes
		if err != nil {
			continue
		}
		if value, err = url.QueryUnescape(value); err != nil {
			continue
		}
		if v.n == len(v.pairs) {
			v.many, _ = url.ParseQuery(raw)
			return
		}
		v.pairs[v.n] = pair{name, value}
		v.n++
	}
}

// Get returns the first value of name, "" when it has none.
func (v *values) Get(name string) string {
	value, _ := v.Lookup(name)
	return value
}

// Lookup returns the first value of name, and whether it has one.
func (v *values) Lookup(name string) (string, bool) {
	if v.many != nil {
		if vs := v.many[name]; len(vs) > 0 {
			return vs[0], true
		}
		return "", false
	}
	for _, p := range v.pairs[:v.n] {
		if p.name == name {
			return p.value, true
		}
	}
	return "", false
}
