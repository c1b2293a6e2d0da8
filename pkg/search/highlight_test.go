package search_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
)

func TestMatchSpan(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		want        search.Span
	}{
		{"Zürich", "zur", search.Span{0, 3}},
		{"São Paulo", "sao p", search.Span{0, 5}},
		{"İstanbul", "ist", search.Span{0, 3}},
		{"İstanbul", "istanbul", search.Span{0, 8}},
		{"Straße", "stras", search.Span{0, 5}}, // ß folds to ss: the span ends on it
		{"Straße", "strass", search.Span{0, 5}},
		{"Þórshöfn", "th", search.Span{0, 1}}, // Þ folds to th
		{"Þórshöfn", "thor", search.Span{0, 3}},
		{"Xi'an", "xia", search.Span{0, 4}}, // the apostrophe folds to nothing
		{" bab el ahmar", "bab", search.Span{1, 4}},
		{" bab el ahmar", "bab-el", search.Span{1, 7}},
		{"Łódź", "lodz", search.Span{0, 4}},
		{"東京", "dong", search.Span{0, 1}},
		{"القاهرة", "lq", search.Span{0, 3}}, // the leading alif folds to nothing, a letter all the same
		{" القاهرة", "lq", search.Span{1, 4}},
		{"ʻEwa Beach", "ewa", search.Span{1, 4}}, // a modifier letter is of no script
		{"Paris", "", search.Span{}},
	} {
		t.Run(tc.name+"/"+tc.query, func(t *testing.T) {
			if got := search.MatchSpan(tc.name, len(search.Slug(tc.query))); got != tc.want {
				t.Errorf("MatchSpan(%q, %q) = %+v, want %+v", tc.name, tc.query, got, tc.want)
			}
		})
	}
}

// The span always lies inside the name, and folding it yields the query.
func FuzzMatchSpan(f *testing.F) {
	for _, s := range []string{"Zürich", "São Paulo", "Straße", "Þórshöfn", "Xi'an", " bab el ahmar", "東京", "a\xffb"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, name string, n int) {
		slug := search.Slug(name)
		if n < 1 || n > len(slug) {
			return
		}
		sp := search.MatchSpan(name, n)
		runes := []rune(name)
		if !utf8.ValidString(name) {
			runes = []rune(strings.ToValidUTF8(name, "\uFFFD"))
		}
		if sp.Start < 0 || sp.Start > sp.End || sp.End > utf8.RuneCountInString(name) {
			t.Fatalf("MatchSpan(%q, %d) = %+v: outside the name of %d runes", name, n, sp, len(runes))
		}
		covered := search.Slug(string([]rune(name)[:sp.End]))
		if !strings.HasPrefix(covered, slug[:n]) && !strings.HasPrefix(slug[:n], covered) {
			t.Fatalf("MatchSpan(%q, %d) = %+v covers %q, want it to cover %q", name, n, sp, covered, slug[:n])
		}
		if len(covered) < n && utf8.ValidString(name) {
			t.Fatalf("MatchSpan(%q, %d) = %+v covers only %q of %q", name, n, sp, covered, slug[:n])
		}
	})
}
