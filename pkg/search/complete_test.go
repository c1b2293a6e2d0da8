package search_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/relevance"
)

// Result.Complete says when the answer holds every prefix match of the
// query, so that a client may filter it for longer texts of the last word.
func TestFindSaysWhenComplete(t *testing.T) {
	svc, _ := mustService(t, serviceCities()...)
	for _, tc := range []struct {
		name     string
		req      search.Request
		complete bool
	}{
		{"fewer matches than the limit", search.Request{Text: "par"}, true},
		{"more matches than the limit", search.Request{Text: "par", Limit: 2}, false},
		{"within a country", search.Request{Text: "par", Countries: "gr"}, true},
		{"no match at all, and no typo near", search.Request{Text: "xqzxqz", Fuzzy: true}, true},
		{"typo matches fill the answer but are not part of it", search.Request{Text: "zurhc", Fuzzy: true}, true},
		{"the last words read as a country", search.Request{Text: "paris france"}, false},
		{"the answer to the first words only", search.Request{Text: "paris atlantis"}, false},
		{"another script, transliterated", search.Request{Text: "парос"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Dataset = search.Large
			if tc.req.Limit == 0 {
				tc.req.Limit = 10
			}
			res, err := svc.Find(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Complete != tc.complete {
				t.Errorf("Find(%q): Complete = %v, want %v (prefix %q, qualifier %q, %d hits)",
					tc.req.Text, res.Complete, tc.complete, res.Prefix, res.Qualifier, len(res.Hits))
			}
		})
	}
}

// On the real small dataset, every answer that says it is complete holds
// the prefix matches of each longer text of its last word, as a person
// types on: what a client that filters the answer itself shows is what
// the service would have answered, but for typo matches.
func TestCompleteAnswersHoldLongerTexts(t *testing.T) {
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	src := relevance.Sources{SmallCSV: shareddata.Path(t, "world-cities.csv")}
	if _, err := relevance.Import(t.Context(), store, search.Small, src); err != nil {
		t.Fatal(err)
	}
	svc := search.NewService(store)
	find := func(text string) search.Result {
		t.Helper()
		res, err := svc.Find(t.Context(), search.Request{Dataset: search.Small, Text: text, Limit: search.DefaultLimit, Fuzzy: true})
		if err != nil && !errors.Is(err, search.ErrInvalidQuery) { // "st l" is too short to ask
			t.Fatal(err)
		}
		return res
	}
	names := []string{"rio de janeiro", "paris", "london", "new york", "tokyo", "sao paulo", "mexico city", "cairo",
		"istanbul", "buenos aires", "los angeles", "saint petersburg", "ho chi minh city", "kuala lumpur", "johannesburg",
		"san francisco", "addis ababa", "reykjavik", "wellington", "zurich", "st louis", "mount vernon", "springfield"}
	complete, checked := 0, 0
	for _, name := range names {
		for n := 3; n <= len(name); n++ {
			res := find(name[:n])
			if !res.Complete {
				continue
			}
			complete++
			// Cities that read the same are listed once, either of them.
			line := func(h search.Hit) string { return h.Name + "|" + h.Subcountry + "|" + h.Country }
			have := map[string]bool{}
			for _, h := range res.Hits {
				have[line(h)] = true
			}
			// The longer texts of the same word: up to the next space.
			for m := n + 1; m <= len(name) && !strings.Contains(name[n:m], " "); m++ {
				checked++
				for _, h := range find(name[:m]).Hits {
					if h.Edits == 0 && !have[line(h)] {
						t.Errorf("%q is complete, but %q lists %s, which it does not", name[:n], name[:m], h.Name)
					}
				}
			}
		}
	}
	t.Logf("%d complete answers among the prefixes of %d names; %d longer texts checked", complete, len(names), checked)
	if complete == 0 {
		t.Fatal("no answer was complete: the test checks nothing")
	}
}
