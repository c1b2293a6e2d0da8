package server

import (
	"net/http"
	"net/url"
	"strings"
)

// values are the parameters of a request's URL, read as url.ParseQuery
// reads them and url.Values.Get answers (the first well-formed pair of a
// name; a pair with a ';' or a malformed escape is left out), but without
// its map: a handler asks for a dozen names in a query of two or three
// pairs, and scanning it for each costs less than the map and its slices,
// which were a fifth of the allocations of a /search. A value is a part
// of the query itself unless it has escapes.
type values struct {
	raw string
	// many holds the query parsed by url.ParseQuery when it has more
	// pairs than is worth scanning for each name (it also applies
	// ParseQuery's limit on their number).
	many url.Values
}

// maxScannedPairs is the most pairs a query may have for values to scan it
// rather than parse it into a map.
const maxScannedPairs = 32

// paramsOf returns the parameters of r.
func paramsOf(r *http.Request) values { return parseValues(r.URL.RawQuery) }

// parseValues returns the parameters of the raw query string raw.
func parseValues(raw string) values {
	if strings.Count(raw, "&") >= maxScannedPairs {
		return values{many: parseQuery(raw)}
	}
	return values{raw: raw}
}

// parseQuery is url.ParseQuery without its error, as url.URL.Query.
func parseQuery(raw string) url.Values {
	v, _ := url.ParseQuery(raw)
	return v
}

// Get returns the first value of name, "" when it has none.
func (p values) Get(name string) string {
	v, _ := p.Lookup(name)
	return v
}

// Lookup returns the first value of name, and whether it has one.
func (p values) Lookup(name string) (string, bool) {
	if p.many != nil {
		if vs := p.many[name]; len(vs) > 0 {
			return vs[0], true
		}
		return "", false
	}
	for rest := p.raw; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		if pair == "" || strings.Contains(pair, ";") {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		if !keyIs(key, name) {
			continue
		}
		if v, ok := unescape(value); ok {
			return v, true
		}
	}
	return "", false
}

// keyIs reports whether the escaped key of a pair is name, which has
// nothing to escape.
func keyIs(key, name string) bool {
	if key == name {
		return true
	}
	if !strings.ContainsAny(key, "%+") { // read as it is, and it is not name
		return false
	}
	k, ok := unescape(key)
	return ok && k == name
}

// unescape is url.QueryUnescape (which returns a string without escapes
// as it is); ok is false for a malformed one.
func unescape(s string) (string, bool) {
	u, err := url.QueryUnescape(s)
	return u, err == nil
}
