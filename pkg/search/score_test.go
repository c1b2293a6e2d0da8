package search_test

import (
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// scoreOf is one side of a Score comparison: how a city of pop and names
// alternate names was reached.
type scoreOf struct {
	text  string
	key   search.NameKey
	pop   int64
	names int
	edits int
}

func (s scoreOf) score() float64 {
	return search.Score(s.text, s.key, s.pop, s.names, s.edits)
}

func mainKey(slug string) search.NameKey { return search.NameKey{Slug: slug} }
func altKey(slug string) search.NameKey  { return search.NameKey{Slug: slug, Alt: 1} }

func TestScoreOrdersWhatPeopleMean(t *testing.T) {
	for _, tc := range []struct {
		name          string
		better, worse scoreOf
	}{
		{"an exonym of a well-known place typed whole beats a namesake's name",
			scoreOf{"florence", altKey("florence"), 371517, 75, 0}, scoreOf{"florence", mainKey("florence"), 39319, 16, 0}},
		{"a mere prefix of an alternate name counts little",
			scoreOf{"san", mainKey("san-diego"), 1394928, 40, 0}, scoreOf{"san", altKey("sangaj"), 14608512, 100, 0}},
		{"a short alternate name typed whole counts little",
			scoreOf{"sol", mainKey("solapur"), 951558, 20, 0}, scoreOf{"sol", altKey("sol"), 10349312, 88, 0}},
		{"an alternate name of a little-known place typed whole stays an alternate name",
			scoreOf{"lucerne", mainKey("lucerne"), 3443, 0, 0}, scoreOf{"lucerne", altKey("lucerne"), 57066, 3, 0}},
		{"one edit on a large city beats a prefix of an obscure alternate name",
			scoreOf{"chicago", mainKey("chicago"), 2695598, 59, 1}, scoreOf{"chicaco", altKey("chicacole"), 118299, 3, 0}},
		{"a town that bears the typed name beats one edit on a city not thirty times larger",
			scoreOf{"bogata", mainKey("bogata"), 100000, 3, 0}, scoreOf{"bogota", mainKey("bogota"), 2000000, 3, 1}},
		{"an edit costs more in five letters: a prefix of a city a fifth the size beats it",
			scoreOf{"surak", mainKey("surakarta"), 555308, 20, 0}, scoreOf{"surat", mainKey("surat"), 2894504, 30, 1}},
		{"one edit beats two",
			scoreOf{"zurich", mainKey("zurich"), 341730, 30, 1}, scoreOf{"zurich", mainKey("zurich"), 341730, 30, 2}},
		{"three letters do not promote a small whole name",
			scoreOf{"van", mainKey("vancouver"), 1837969, 54, 0}, scoreOf{"van", mainKey("van"), 371713, 27, 0}},
		{"three letters still break a near tie",
			scoreOf{"par", mainKey("par"), 1000000, 5, 0}, scoreOf{"par", mainKey("parma"), 1200000, 5, 0}},
		{"four letters promote a whole name over a city three times larger",
			scoreOf{"bath", mainKey("bath"), 88859, 20, 0}, scoreOf{"bath", mainKey("bathinda"), 285813, 10, 0}},
		{"four letters do not promote a whole name over a city four times larger",
			scoreOf{"hami", mainKey("hamilton"), 519949, 22, 0}, scoreOf{"hami", mainKey("hami"), 137072, 22, 0}},
		{"an alternate name of five letters typed whole counts as a name, without the whole-name bonus",
			scoreOf{"cheng", mainKey("chengdu"), 3950437, 35, 0}, scoreOf{"cheng", altKey("cheng"), 2014125, 35, 0}},
		{"an exonym of six letters typed whole gets the bonus",
			scoreOf{"geneva", altKey("geneva"), 183981, 48, 0}, scoreOf{"geneva", mainKey("geneva"), 21495, 12, 0}},
		{"a place known in many languages beats a namesake of its size",
			scoreOf{"abu-", mainKey("abu-dhabi"), 603492, 75, 0}, scoreOf{"abu-", mainKey("abu-ghurayb"), 900000, 18, 0}},
		{"fame does not undo the population order of cities a fifth apart",
			scoreOf{"sur", mainKey("surat"), 2894504, 7, 0}, scoreOf{"sur", mainKey("surabaya"), 2374658, 19, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if b, w := tc.better.score(), tc.worse.score(); b <= w {
				t.Errorf("Score %+v = %g, want more than %+v = %g", tc.better, b, tc.worse, w)
			}
		})
	}
}

func TestScoreWithoutPopulationIsZero(t *testing.T) {
	// Datasets without population rank by CompareFound's ties alone, as
	// before Score: the same order in every store.
	if s := search.Score("par", mainKey("paris"), 0, 40, 0); s != 0 {
		t.Errorf("Score of an unknown population = %g, want 0", s)
	}
}
