package search_test

import (
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// The typo budget goes by the letters a person typed: one edit from 5,
// two from 7, and a character of a syllabic script counts one letter,
// however long its transliteration.
func TestMaxEdits(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int
	}{
		{"four letters get none", "pari", 0},
		{"five letters get one", "paris", 1},
		{"six letters get one", "zuirch", 1},
		{"seven letters get two", "chigaco", 2},
		{"seven letters, as typed", "Palmero", 2},
		{"a folded slug counts its letters, not its hyphens", "san-fr", 1},
		{"spaces and punctuation are no letters", "san fr.", 1},
		{"digits count", "12345", 1},
		{"diacritics fold to their letters", "Zürich", 1},
		{"a letter that folds to two counts two", "straße", 2},
		{"Cyrillic letters count one each", "Москвп", 1},
		{"Cyrillic, seven letters", "Новосиб", 2},
		{"Greek letters count one each", "Αθήνα", 1},
		{"an Arabic letter that folds to nothing counts none", "القاهرة", 0},
		{"two Han characters get none, though they fold to eight letters", "東京", 0},
		{"four Han characters get none", "名古屋市", 0},
		{"a query already folded from Han counts its letters", "dong-jing", 2},
		{"two hangul syllables get none", "서울", 0},
		{"five kana get one", "とうきょう", 1},
		{"eight katakana get two", "サンフランシスコ", 2},
		{"Ethiopic syllables count one each", "አዲስ አበባ", 1},
		{"Han and Latin letters together", "東京 tow", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := search.MaxEdits(tc.text); got != tc.want {
				t.Errorf("MaxEdits(%q) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}
