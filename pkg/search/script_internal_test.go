package search

import "testing"

// The minimum length counts letters as typed in a script other than
// Latin, or once folded, whichever are more.
func TestQueryLetters(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"pa", 2},
		{"a-b", 2},
		{"İs", 2},
		{"straße", 7},
		{"ʻʻa", 1},  // modifier letters are of no script: they count once folded
		{"القا", 4}, // folds to "lq": the alif folds to nothing
		{"تل", 2},   // folds to "tl"
		{"東京", 8},   // folds to "dong-jing"
		{"Αθ", 3},   // folds to "ath"
		{"𠀀𠀁𠀂", 0},  // fold to nothing: no query at all
		{"اا", 0},   // fold to nothing
	} {
		if got := queryLetters(tc.text, Slug(tc.text)); got != tc.want {
			t.Errorf("queryLetters(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}
