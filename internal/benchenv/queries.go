package benchenv

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Queries are the query sets that `make bench` and the Go benchmarks time,
// sampled with a fixed seed from the cities of a dataset.
type Queries struct {
	Uniform []string // 2,000 prefixes of 3–6 letters of real slugs, each once
	TypoOne []string // 500 real slugs of 5–6 letters with one random edit each
	TypoTwo []string // 500 real slugs of 7 letters or more with two random edits each
	// TypoOneOf and TypoTwoOf are the slugs that TypoOne and TypoTwo
	// misspell, query by query: what a typo lookup should find.
	TypoOneOf, TypoTwoOf []string
	// TypoOneByPop and TypoTwoByPop are misspelled as TypoOne and
	// TypoTwo are, 500 each, but of cities drawn with a probability
	// proportional to their population, as the typed log draws them:
	// the names people look for, where the uniform sets are mostly
	// hamlets of no known population. TypoOneByPopOf and TypoTwoByPopOf
	// are the slugs they misspell. All four are nil when no city has a
	// population.
	TypoOneByPop, TypoTwoByPop     []string
	TypoOneByPopOf, TypoTwoByPopOf []string
	// Typed is a log as people type: see TypedLog.
	Typed []TypedQuery
	Slugs []string // every slug, sorted
}

// TypedQuery is one query of a typed log: the text sent at one keystroke.
type TypedQuery struct {
	Text string
	// Misspelled says that the name being typed has a typo, before or
	// at this keystroke.
	Misspelled bool
}

// typedCities is how many cities a typed log types: about 4,000 queries.
const typedCities = 400

// SampleQueries samples the query sets from cities.
func SampleQueries(cities []search.City) Queries {
	slugs := make([]string, len(cities))
	for i := range cities {
		slugs[i] = cities[i].Slug
	}
	sort.Strings(slugs)
	rng := rand.New(rand.NewPCG(2026, 11))
	seen := map[string]bool{}
	var q Queries
	for len(q.Uniform) < 2000 {
		s := slugs[rng.IntN(len(slugs))]
		n := 3 + rng.IntN(4)
		if len(s) < n {
			continue
		}
		p := strings.TrimRight(s[:n], "-")
		if len(p)-strings.Count(p, "-") < 3 || seen[p] { // the API wants 3 letters
			continue
		}
		seen[p] = true
		q.Uniform = append(q.Uniform, p)
	}
	uniform := func() string { return slugs[rng.IntN(len(slugs))] }
	q.TypoOne, q.TypoOneOf = misspell(rng, uniform, 500, 1)
	q.TypoTwo, q.TypoTwoOf = misspell(rng, uniform, 500, 2)
	q.Slugs = slugs
	q.Typed = TypedLog(cities, typedCities, rand.New(rand.NewPCG(2026, 26)))
	if draw := byPopulation(cities); draw != nil {
		prng := rand.New(rand.NewPCG(2026, 28))
		populous := func() string { return cities[draw(prng)].Slug }
		q.TypoOneByPop, q.TypoOneByPopOf = misspell(prng, populous, 500, 1)
		q.TypoTwoByPop, q.TypoTwoByPopOf = misspell(prng, populous, 500, 2)
	}
	return q
}

// byPopulation returns a draw of the index of one of cities with a
// probability proportional to its population, or nil when none has one.
func byPopulation(cities []search.City) func(rng *rand.Rand) int {
	var total int64
	cumulative := make([]int64, len(cities))
	for i := range cities {
		total += cities[i].Population
		cumulative[i] = total
	}
	if total == 0 {
		return nil
	}
	return func(rng *rand.Rand) int {
		i, _ := slices.BinarySearch(cumulative, rng.Int64N(total)+1)
		return i
	}
}

// TypedLog is what people type, as issue 26 describes it: n cities drawn
// with a probability proportional to their population, each typed letter
// by letter from its third letter to its whole name (its slug, words
// separated by spaces, a space typed before each next word), one in five
// with one random typo (an insertion, deletion, substitution or
// transposition of letters after the first) typed as it is.
func TypedLog(cities []search.City, n int, rng *rand.Rand) []TypedQuery {
	draw := byPopulation(cities)
	if draw == nil {
		return nil
	}
	var log []TypedQuery
	for range n {
		i := draw(rng)
		name := []byte(strings.ReplaceAll(cities[i].Slug, "-", " "))
		at := len(name) // where the typo is, if any
		if rng.IntN(5) == 0 && len(name) > 2 {
			name, at = typo(rng, name)
		}
		for k := 1; k <= len(name); k++ {
			text := string(name[:k])
			if letters := len(text) - strings.Count(text, " "); letters < search.MinQueryLetters {
				continue
			}
			log = append(log, TypedQuery{Text: text, Misspelled: k > at})
		}
	}
	return log
}

const alphabet = "abcdefghijklmnopqrstuvwxyz"

// typo makes one random edit of s after its first letter, and returns
// where it starts.
func typo(rng *rand.Rand, s []byte) ([]byte, int) {
	i := 1 + rng.IntN(len(s)-2)
	return edit(rng, s, i), i
}

// edit makes one random edit of s at i: an insertion, a deletion, a
// substitution or a transposition with the next letter.
func edit(rng *rand.Rand, s []byte, i int) []byte {
	switch rng.IntN(4) {
	case 0:
		s = slices.Insert(s, i, alphabet[rng.IntN(26)])
	case 1:
		s = slices.Delete(s, i, i+1)
	case 2:
		s[i] = alphabet[rng.IntN(26)]
	default:
		s[i], s[i+1] = s[i+1], s[i]
	}
	return s
}

// misspell returns n real slugs, drawn by draw, that allow edits typos
// (see search.MaxEdits: five letters or more for one, seven for two), each
// with that many random edits: insertions, deletions, substitutions or
// transpositions. The misspelled query must allow them too. It returns the
// slugs misspelled too; fewer than n when a thousand draws a query find
// none that allows them (a dataset of few, short names).
func misspell(rng *rand.Rand, draw func() string, n, edits int) (out, of []string) {
	for tries := 0; len(out) < n && tries < 1000*n; tries++ {
		slug := draw()
		s := []byte(slug)
		if search.MaxEdits(string(s)) != edits {
			continue
		}
		for range edits {
			s = edit(rng, s, rng.IntN(len(s)-1))
		}
		if q := search.Slug(string(s)); search.MaxEdits(q) == edits {
			out, of = append(out, q), append(of, slug)
		}
	}
	return out, of
}

// HeavyPrefixes have tens of thousands of matches each in the large
// dataset: the slowest prefixes of most measures.
var HeavyPrefixes = []string{"san", "new", "ber", "sta", "kar", "mar"}

// NearPoints are where the biased queries of `make bench` are asked from:
// Santiago de Chile, Springfield IL, Paris and Tokyo.
var NearPoints = []search.Point{
	{Lat: -33.45, Lon: -70.66}, {Lat: 39.80, Lon: -89.64}, {Lat: 48.85, Lon: 2.35}, {Lat: 35.68, Lon: 139.69},
}
