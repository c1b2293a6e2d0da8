package server

import (
	"net/http"

	"golang.org/x/text/language"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// decodeLanguages reads the languages to show names in: the lang parameter
// (a list with fallbacks, "de,en"), or when it is absent the request's
// Accept-Language, which byHeader then says. A malformed lang is a bad
// request; a malformed Accept-Language, which the reader did not type,
// asks for nothing.
func decodeLanguages(r *http.Request) (langs []language.Tag, byHeader bool, err error) {
	if lang, ok := paramsOf(r).Lookup("lang"); ok {
		langs, err = search.ParseLanguages(lang)
		return langs, false, err
	}
	header := r.Header.Get("Accept-Language")
	if header == "" { // what no header asks for, without the parser's allocation
		return nil, true, nil
	}
	return search.AcceptLanguages(header), true, nil
}

// varyLanguage is the Vary of an answer whose names Accept-Language chose;
// net/http only reads it, and an Add after it makes a slice of its own.
var varyLanguage = []string{"Accept-Language"}

// languageSucceeded adds Vary: Accept-Language to a successful answer
// that caches may keep (see WithCacheMaxAge) when that header chose its
// names, so that no cache serves it to a reader of another language. An
// answer that no cache keeps needs no Vary, and has none.
func (p *ops) languageSucceeded(hdr http.Header, byHeader bool) {
	if byHeader && len(p.searchCache) > 0 && p.searchCache[0] != noStore[0] {
		if vary := hdr["Vary"]; len(vary) > 0 {
			hdr["Vary"] = append(vary, varyLanguage...)
		} else {
			hdr["Vary"] = varyLanguage
		}
	}
}
