package server

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/limiter"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// LimitedSearch is the limiter.SearchFunc of /search: it tells the rate
// limiter what a request searches for, so that the requests of one typing
// session count as one search (see limiter.Sessions). The scope is the
// dataset ("" is small), the text q folded as the search folds it
// (search.Slug), with a '-' after it when q ends in a space, so that "rio",
// "rio " and "rio d" each extend the one before; a q too long to be a query
// is kept as it is, to be counted, since no session takes it.
func LimitedSearch(r *http.Request) limiter.Search {
	p := paramsOf(r)
	s := limiter.Search{Scope: p.Get("dataset"), Text: p.Get("q")}
	if s.Scope == "" {
		s.Scope = string(search.Small)
	}
	if utf8.RuneCountInString(s.Text) > search.MaxQueryRunes {
		return s
	}
	var buf [search.MaxQueryRunes + 1]byte // one allocation, the string, for ASCII text
	folded := search.AppendSlug(buf[:0], s.Text)
	if len(folded) > 0 && strings.TrimRightFunc(s.Text, unicode.IsSpace) != s.Text {
		folded = append(folded, '-')
	}
	s.Text = string(folded)
	return s
}

// The Search-Complete field of a successful /search answer, an RFC 8941
// boolean: ?1 when the answer holds every city whose names match the
// query as a prefix or at a word start, for its dataset and filters
// (search.Result.Complete), so that a client may filter it itself while
// the last word grows instead of asking again; ?0 otherwise.
var (
	searchComplete   = []string{"?1"}
	searchIncomplete = []string{"?0"}
)

// setSearchComplete sets the Search-Complete field (see searchComplete).
func setSearchComplete(h http.Header, complete bool) {
	if complete {
		h["Search-Complete"] = searchComplete
		return
	}
	h["Search-Complete"] = searchIncomplete
}
