package search

import (
	"context"
	"slices"
	"strings"
)

// MaxEdits is how many typos a query may hold and still match, by how many
// letters it has as typed (see typoLetters): none below 5, one from 5, two
// from 7. Text is the query as typed; a folded slug counts as the Latin
// text it is (the script of a query folded from another is lost). Two edits from 7 letters, where Meilisearch waits for 9
// and Algolia for 8, because people misplace two letters of names that
// long ("chigaco" for Chicago, "palmero" for Palermo), and the typo
// automaton of the embedded store walks them within the lookup budget.
//
// A character of a script other than Latin counts one letter, never more
// than it folds to. In the scripts whose characters are syllables or
// words (Han, kana, hangul, Yi, Ethiopic…) a query of one to four
// characters gets no typo matches: an edit of its transliteration is no
// typo a person makes there, as a wrong character changes a whole
// syllable, and a homophone picked by mistake folds to the same letters,
// a prefix match already. "東京" ("dong-jing") lists Tokyo, not Dongying
// and Longjing one edit away.
func MaxEdits(text string) int {
	return editsFor(typoLetters(text))
}

// editsFor is MaxEdits for a query of n letters.
func editsFor(n int) int {
	switch {
	case n >= 7:
		return 2
	case n >= 5:
		return 1
	}
	return 0
}

// typoBudget returns how many typos text, a query as typed, may hold
// given its prefix matches found: MaxEdits, but one at most once text
// matches some name as it is. Such a text was typed right, or its typo
// made another real name, which is far likelier one letter off than two;
// and a match of two edits counts EditCost² less than a prefix match of
// the same place: it could only pad the list. "istanbul" lists İstanbul, not
// Ijevan as "Istibulagh"; "marseille" Marseille, not Marsella.
func typoBudget(text string, found []variantFound) int {
	edits := MaxEdits(text)
	if len(found) > 0 {
		return min(edits, 1)
	}
	return edits
}

// TypedRightScore is the Score of a prefix match from which a query with
// few prefix matches is taken as typed right, and gets no typo matches: a
// place of a million people as a prefix ("samarinda", Samarinda), of
// 100,000 typed in full. A typo match would outrank it only as the whole
// name, misspelled, of a city of some three million people (fewer with
// many names; see EditCost, WholeBoost) that the text also names as a
// place of that size; padding the list below it shows the person nothing
// they meant. The judged typos that need the walk despite prefix matches
// have none that scores over 112,000 ("glasow": Glazov, known as Glasow,
// and Glasgow meant), and on the query sets of make bench no answer that
// this leaves without typo matches had its first hit or the intended
// city's rank changed by them (see docs/typos.md).
const TypedRightScore = 1e6

// WeakFillScore is the Score under which prefix matches that fill half
// an answer (see typoFreeMatches) do not keep typo matches out: a village
// of 10,000 people as a prefix, 1,000 typed whole. Below it the prefix
// matches are hamlets, most of them MaxMind's rows of no known
// population, that say little of what the person meant: "prais" names
// five hamlets of that name and "layos" Layos (365 people), and Paris and
// Lagos are one edit away. Then the typo matches that score above the
// prefix matches that keep their place are looked for (see typoWant),
// unless half the answer is places of known population.
const WeakFillScore = 1e4

// TypoReach is how far below the best of weak prefix matches a typo match
// may score and still be listed beside them (see typoWant): a tenth. With
// EditCost, a place one edit away from a short text is listed when it is
// ten times the size of the best prefix match ("kapur": Kanpur, 2.8M,
// beside Kapurthala, 92,667), from a long one three times; "bosto" lists
// Boston and its namesakes, not Rostov (1.1M). Without it, 35% rather
// than 25% of the answers on the typed log of make bench carried typo
// matches, for none more of the misspelled cities drawn by population
// found (docs/performance.md).
const TypoReach = 10

// typoWant returns how many typo matches to look for beside the prefix
// matches found for an answer of limit, and whether only those that
// score above the prefix matches that keep their place are to be kept
// (see withTypos). None when a prefix match from the start of a name
// scores TypedRightScore or more, nor when prefix matches of known
// population fill half the answer and one of them, at any word, scores
// WeakFillScore or more. When prefix matches fill half of it but fewer
// than half are places of known population, or all are weak, half the
// answer at most is looked for, and kept only above the prefix match in
// the last place of that half and within TypoReach of the best: the
// place the person meant rather than hamlets of the name they typed
// ("kapur" lists Kanpur, 2.8M, one edit away, and Kapurthala, 92,667,
// before hamlets named Kapur of no known population), never padding
// below them.
func typoWant(found []variantFound, limit int) (want int, above bool) {
	best, bestStart := 0.0, 0.0
	populated := 0
	for i := range found {
		best = max(best, found[i].score)
		if !found[i].Key.Word() {
			bestStart = max(bestStart, found[i].score)
		}
		if found[i].Population > 0 {
			populated++
		}
	}
	half := typoFreeMatches(limit)
	switch {
	case bestStart >= TypedRightScore:
		return 0, false
	case len(found) < half:
		return limit - len(found), false
	case populated >= half && best >= WeakFillScore:
		return 0, false
	}
	return limit - half, true
}

// Typo is a city found by correcting typos in a query.
type Typo struct {
	Found
	// Edits is how many edits turn the query into Corrected.
	Edits int
	// Corrected is the prefix of Key.Slug that the query was corrected
	// to: the whole-name boost and the match span are taken against it.
	Corrected string
}

// TypoFinder is the optional capability of a Store that the Service uses:
// typo search (the other, Versioned, serves caches of answers). The
// Service finds typo matches in a store that is a TypoFinder, and only
// prefix matches in one that is not, whatever Request.Fuzzy says. A store
// with an index of its own answers from it (the embedded store runs an
// automaton over its trie); one with only a trie of its keys hands a walk
// of it to WalkTypos (the memory store); one that can do neither leaves it
// out (MongoDB, where a walk costs a query per trie node). A decorator is
// a TypoFinder exactly when the store it wraps is (see storetest.Wrap).
type TypoFinder interface {
	// FindTypos returns the best q.Limit cities of q.Dataset that
	// q.Accepts with a key of a whole name (see Keys: not of a later
	// word) that does not start with q.Prefix but starts with a string
	// within maxEdits edits of it, each once, in CompareTypos order:
	// exactly what WalkTypos returns over the trie of the store's keys.
	// The conformance suite compares every store's answers with the
	// memory store's over many random queries. Its errors are those of
	// Store.Search.
	FindTypos(ctx context.Context, q Query, maxEdits int) ([]Typo, error)
}

// TrieWalk walks the trie of the keys of whole names of dataset d (see
// Keys: not those of later words, which typos do not reach): it calls
// visit with the path of every node below the root, depth first, children
// in byte order, and goes below a node only when visit returns true. visit
// must not keep path. Its errors are those of Store.Search.
type TrieWalk func(ctx context.Context, d Dataset, visit func(path []byte) bool) error

// FindsTypos reports whether the Service finds typo matches in its store:
// whether the store is a TypoFinder.
func (s *Service) FindsTypos() bool {
	_, ok := s.store.(TypoFinder)
	return ok
}

// typos returns the best typo matches of q within maxEdits edits, at most
// want of them from the typo walk, in the store's order (CompareTypos:
// fewer edits first), for Score to rank. The walk of one edit comes
// first: when it fills the answer, or finds a place of known population
// through its name (see knownByName), the walk of two, which visits many
// times its nodes (a tenth of the queries of 7 letters with two typos,
// and the slowest), is left out. What two edits could add that outranks
// a list of one-edit matches is looked for directly, after a walk of two
// too, whose answer one-edit matches can fill: the names of well-known
// places two edits from the whole query (see knownTypos). "palmero"
// fills the list with a dozen Palmers one edit away, the largest of
// 76,000 people; Palermo, 672,000, is "palermo" typed whole with two
// letters moved. The fewest typos win, as with Algolia's
// typoTolerance=min, but for places of unknown population (Score 0), of
// which nothing says which the person meant: leaving their two-edit walk
// out too lost 9 of the 500 two-edit misspellings of make bench
// (docs/typos.md).
func (s *Service) typos(ctx context.Context, q Query, maxEdits, want int) ([]Typo, error) {
	finder, ok := s.store.(TypoFinder)
	if !ok || maxEdits < 1 {
		return nil, nil
	}
	q.Limit = want
	found, err := finder.FindTypos(ctx, q, 1)
	if err != nil || maxEdits < 2 {
		return found, err
	}
	if len(found) < want && !slices.ContainsFunc(found, knownByName) {
		if found, err = finder.FindTypos(ctx, q, maxEdits); err != nil {
			return nil, err
		}
	}
	known, err := s.knownTypos(ctx, q, maxEdits, found)
	return append(found, known...), err
}

// knownByName reports whether t is a place of known population (of a
// Score above 0) reached through its name. One reached through an
// alternate name counts 1/AltDivisor in Score and says little of what
// the person meant: "nishasa" is one edit from "Nishisakovtan", a name of
// Boshnyakovo (1,491 people), and two from Kinshasa.
func knownByName(t Typo) bool { return t.Population > 0 && t.Key.Alt == 0 }

// knownStem is how many letters of a query the places of knownTypos
// share with it: a typo in the first three letters of a name is rarer
// than later, and a stem of three keeps the places few and large.
const knownStem = 3

// knownTypos returns the places whose whole name is within maxEdits of
// q.Prefix (see wholeTypo), among the best 2×q.Limit by the store's order
// of those whose name starts with the first knownStem letters of the
// query, less the cities of found and the prefix matches: one prefix
// search, where a walk of two edits costs a hundred.
func (s *Service) knownTypos(ctx context.Context, q Query, maxEdits int, found []Typo) ([]Typo, error) {
	stem := knownStem
	if q.Prefix[0] == ScriptMark {
		stem++
	}
	if len(q.Prefix) <= stem {
		return nil, nil
	}
	sq := q
	sq.Prefix, sq.Words, sq.Limit = q.Prefix[:stem], false, min(MaxLimit, 2*q.Limit)
	cities, err := s.store.Search(ctx, nil, sq)
	if err != nil {
		return nil, err
	}
	var out []Typo
	for _, c := range cities {
		if strings.HasPrefix(c.Key.Slug, q.Prefix) || slices.ContainsFunc(found, func(t Typo) bool { return t.City.Key() == c.City.Key() }) {
			continue
		}
		if edits, ok := wholeTypo(q.Prefix, c.Key.Slug, maxEdits); ok {
			out = append(out, Typo{Found: c, Edits: edits, Corrected: c.Key.Slug})
		}
	}
	return out, nil
}

// wholeTypo returns how many edits turn query into the whole of key, a
// key of a typo match, when they are no more than maxEdits: the person
// typed the whole name, misspelled ("palmero" for Palermo, which the
// store reached through "paler"), and the match counts as a whole-name
// match of it (see Score). ok is false when key is further.
func wholeTypo(query, key string, maxEdits int) (edits int, ok bool) {
	if d := len(key) - len(query); d > maxEdits || -d > maxEdits {
		return 0, false
	}
	d := osaDistance(query, key, maxEdits)
	return d, d <= maxEdits
}

// osaStackKey is the longest key whose osaDistance rows need no
// allocation.
const osaStackKey = 63

// osaDistance is the optimal-string-alignment distance between a and b
// (edits, insertions, deletions and transpositions of adjacent bytes, as
// corrections counts them), or bound+1 once it is sure to exceed bound.
func osaDistance(a, b string, bound int) int {
	n := len(b)
	// The three rows on the stack for the keys a Find compares (at most
	// MaxTypoBytes and a few edits): this runs for every typo match.
	var rows [3 * (osaStackKey + 1)]int
	buf := rows[:]
	if n > osaStackKey {
		buf = make([]int, 3*(n+1))
	}
	prev2, prev, cur := buf[:n+1], buf[n+1:2*(n+1)], buf[2*(n+1):3*(n+1)]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		lowest := i
		for j := 1; j <= n; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			lowest = min(lowest, cur[j])
		}
		if lowest > bound {
			return bound + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[n]
}

// WalkTypos answers TypoFinder.FindTypos for store s: it walks, with walk,
// the trie of the dataset's keys for the prefixes within maxEdits edits of
// q.Prefix (see corrections) and searches s for each of them. It is what a
// store without a typo index of its own answers FindTypos with, and the
// reference that one with an index must agree with.
func WalkTypos(ctx context.Context, s Store, walk TrieWalk, q Query, maxEdits int) ([]Typo, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	nodes, err := corrections(ctx, walk, q.Dataset, q.Prefix, maxEdits)
	if err != nil {
		return nil, err
	}
	best := map[Key]int{} // index into found
	var found []Typo
	var cities []Found // reused: each Typo copies its city
	for _, n := range nodes {
		nq := q
		nq.Prefix, nq.Words = n.prefix, false // typos reach whole names only
		if cities, err = s.Search(ctx, cities[:0], nq); err != nil {
			return nil, err
		}
		for _, c := range cities {
			if strings.HasPrefix(c.Key.Slug, q.Prefix) {
				continue // a prefix match, not a typo
			}
			t := Typo{Found: c, Edits: n.edits, Corrected: n.prefix}
			k := c.City.Key()
			if i, dup := best[k]; dup {
				if CompareTypos(&t, &found[i]) < 0 {
					found[i] = t
				}
				continue
			}
			best[k] = len(found)
			found = append(found, t)
		}
	}
	slices.SortFunc(found, func(a, b Typo) int { return CompareTypos(&a, &b) })
	if len(found) > q.Limit {
		found = found[:q.Limit]
	}
	return found, nil
}

// CompareTypos orders typo matches: fewer edits first, then CompareFound's
// rule with the whole-name boost taken against each match's own corrected
// prefix. So "zuirch" lists Zürich, a whole-name match of "zurich", first.
func CompareTypos(a, b *Typo) int {
	if a.Edits != b.Edits {
		return a.Edits - b.Edits
	}
	return compareFound(a.Corrected, &a.Found, b.Corrected, &b.Found)
}

// correction is a prefix of real slugs within edits of the query.
type correction struct {
	prefix string
	edits  int
}

// corrections walks the trie of the dataset's keys depth first, keeping
// for each node the optimal-string-alignment distances between its path
// and every prefix of the query, and returns the nodes whose path is within
// maxEdits of the whole query. It does not descend where no extension can
// come within reach, nor below a node already found unless a descendant
// could need fewer edits, nor into the query's own exact range.
func corrections(ctx context.Context, walk TrieWalk, d Dataset, query string, maxEdits int) ([]correction, error) {
	n := len(query)
	maxDepth := n + maxEdits
	// rows[k] is the distance row of the node at depth k: one allocation.
	cells := make([]int, (maxDepth+1)*(n+1))
	rows := make([][]int, maxDepth+1)
	for k := range rows {
		rows[k] = cells[k*(n+1) : (k+1)*(n+1)]
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	var out []correction
	// visit computes the row of a node from its parent's; the walk is
	// depth first, so rows[depth-1] is always the parent's.
	visit := func(path []byte) bool {
		depth := len(path)
		if depth > maxDepth {
			return false
		}
		row, cur := rows[depth-1], rows[depth]
		b := path[depth-1]
		cur[0] = depth
		lowest := depth
		for j := 1; j <= n; j++ {
			cost := 1
			if query[j-1] == b {
				cost = 0
			}
			cur[j] = min(row[j]+1, cur[j-1]+1, row[j-1]+cost)
			if j > 1 && depth > 1 && b == query[j-2] && path[depth-2] == query[j-1] {
				cur[j] = min(cur[j], rows[depth-2][j-2]+1)
			}
			lowest = min(lowest, cur[j])
		}
		if lowest > maxEdits {
			return false
		}
		if depth == 1 && (b == ScriptMark) != (query[0] == ScriptMark) {
			return false // typos never cross scripts (see AltKey)
		}
		if depth >= n && string(path[:n]) == query {
			return false // prefix matches, found by the plain search
		}
		if dist := cur[n]; dist <= maxEdits {
			out = append(out, correction{prefix: string(path), edits: dist})
			if lowest >= dist {
				return false // nothing below can need fewer edits
			}
		}
		return depth < maxDepth
	}
	if err := walk(ctx, d, visit); err != nil {
		return nil, err
	}
	return out, nil
}
