package search_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// Bounds on what one Find asks of its store, for every valid query up to
// search.MaxQueryRunes (issue 22): the typo walks, which cost the most,
// and the prefix searches, which grow with the words only.
const (
	// maxWalksPerFind is two typo lookups, each a walk of one edit and
	// one of two.
	maxWalksPerFind = 4
	// maxSearchesPerWord bounds the store searches per word of the query,
	// on these cities: each word dropped from its end costs a prefix
	// search or two (a finished word, the prefixes of the qualifiers).
	maxSearchesPerWord = 3
	// maxSearchesOfReadings bounds the searches of the readings of
	// qualifiers, beyond those: two readings, each a search of the words
	// before the place and one per place they may name.
	maxSearchesOfReadings = 16
)

// longQueryShapes are texts in the shapes that cost the most, cut to every
// length: one long word, short words that name nothing, a place followed by
// words that do not qualify it, misspelled words, a place and its country
// again and again.
var longQueryShapes = []string{
	strings.Repeat("sanfrancisco", 9),
	strings.Repeat("ab ", 34),
	"paris " + strings.Repeat("atlantis ", 11),
	strings.Repeat("chigaco ", 13),
	strings.Repeat("paris texas ", 9),
	strings.Repeat("qxz", 34),
	strings.Repeat("москва ", 15),
}

func TestFindBoundsTheWorkOfAnyQuery(t *testing.T) {
	_, store := mustService(t, append(geoCities(), serviceCities()...)...)
	var searches, walks int
	svc := search.NewService(storetest.Wrap(store, func(_ context.Context, c storetest.Call) error {
		switch c.Method {
		case "Search":
			searches++
		case "FindTypos":
			walks++
			if len(c.Query.Prefix) > search.MaxTypoBytes {
				t.Errorf("a typo walk of %q, longer than %d bytes", c.Query.Prefix, search.MaxTypoBytes)
			}
		}
		return nil
	}))
	for _, shape := range longQueryShapes {
		runes := []rune(shape)
		for n := search.MinQueryLetters; n <= min(len(runes), search.MaxQueryRunes); n++ {
			text := string(runes[:n])
			searches, walks = 0, 0
			_, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: text, Limit: search.DefaultLimit, Fuzzy: true})
			if errors.Is(err, search.ErrInvalidQuery) {
				continue // too few letters yet
			}
			if err != nil {
				t.Fatalf("Find(%q): %v", text, err)
			}
			words := len(strings.Fields(text))
			if walks > maxWalksPerFind || searches > maxSearchesPerWord*words+maxSearchesOfReadings {
				t.Errorf("Find(%q) (%d runes, %d words): %d searches and %d typo walks, want at most %d and %d",
					text, utf8.RuneCountInString(text), words, searches, walks, maxSearchesPerWord*words+maxSearchesOfReadings, maxWalksPerFind)
			}
		}
	}
}
