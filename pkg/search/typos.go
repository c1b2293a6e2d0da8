package search

import (
	"context"
	"slices"
	"strings"
)

// Extender is implemented by stores that can list cheaply which bytes
// follow a prefix in the slugs of a dataset: the children of the prefix in
// the trie of slugs. WithTypos walks that trie; without an Extender it asks
// Search about each possible next byte instead.
type Extender interface {
	// Extensions returns, in increasing order and without repeats, every
	// byte b such that some slug of d starts with prefix+b.
	Extensions(ctx context.Context, d Dataset, prefix string) ([]byte, error)
}

// slugAlphabet is every byte a slug can hold, in byte order.
const slugAlphabet = "-0123456789abcdefghijklmnopqrstuvwxyz"

// MaxEdits is how many typos a folded query may hold and still match: none
// below 5 letters, one from 5, two from 9.
func MaxEdits(prefix string) int {
	letters := len(prefix) - strings.Count(prefix, "-")
	switch {
	case letters >= 9:
		return 2
	case letters >= 5:
		return 1
	}
	return 0
}

// WithTypos returns a Searcher that, for queries with Fuzzy set, follows the
// cities whose slug starts with q.Prefix with the cities whose slug starts
// with a string within MaxEdits edits of it (an insertion, a deletion, a
// substitution, or a transposition of two neighbours each), until q.Limit.
//
// Typo matches rank below every exact prefix match: fewer edits first, then
// by the usual rule taken against the corrected prefix, so that "zuirch"
// finds Zürich as a whole-name match of "zurich". Their Match span covers
// the corrected prefix. Every lookup goes through s, so country filters and
// stores behave as for exact queries.
func WithTypos(s Searcher) Searcher { return &typos{s: s} }

type typos struct{ s Searcher }

// typoHit is a typo match with what ranks it: its edits, and the corrected
// prefix that its weight and whole-name boost are taken against.
type typoHit struct {
	city      City
	edits     int
	corrected string
}

func (t *typos) Search(ctx context.Context, q Query) ([]City, error) {
	exact, err := t.s.Search(ctx, q)
	edits := MaxEdits(q.Prefix)
	if err != nil || !q.Fuzzy || edits == 0 || len(exact) >= q.Limit {
		return exact, err
	}
	// Fewer edits rank first, so when the matches within fewer edits fill
	// the answer, those needing more can stay unsearched: the walk for two
	// edits visits many times the nodes of the walk for one.
	var hits []typoHit
	for e := 1; e <= edits; e++ {
		if hits, err = t.typoHits(ctx, q, e); err != nil {
			return nil, err
		}
		if len(exact)+len(hits) >= q.Limit {
			break
		}
	}
	out := exact
	for _, h := range hits {
		if len(out) == q.Limit {
			break
		}
		h.city.Match = MatchSpan(h.city.Name, min(len(h.corrected), len(h.city.Slug)))
		out = append(out, h.city)
	}
	return out, nil
}

// typoHits returns the cities within edits of q that are not exact
// matches, best first, each once with its fewest edits.
func (t *typos) typoHits(ctx context.Context, q Query, edits int) ([]typoHit, error) {
	nodes, err := t.corrections(ctx, q.Dataset, q.Prefix, edits)
	if err != nil {
		return nil, err
	}
	best := map[Key]int{} // index into hits
	var hits []typoHit
	for _, n := range nodes {
		found, err := t.s.Search(ctx, Query{Dataset: q.Dataset, Prefix: n.prefix, Limit: q.Limit, Countries: q.Countries})
		if err != nil {
			return nil, err
		}
		for _, c := range found {
			if strings.HasPrefix(c.Slug, q.Prefix) {
				continue // an exact match, listed already
			}
			h := typoHit{city: c, edits: n.edits, corrected: n.prefix}
			k := c.Key()
			if i, dup := best[k]; dup {
				if compareTypos(&h, &hits[i]) < 0 {
					hits[i] = h
				}
				continue
			}
			best[k] = len(hits)
			hits = append(hits, h)
		}
	}
	slices.SortFunc(hits, func(a, b typoHit) int { return compareTypos(&a, &b) })
	return hits, nil
}

// compareTypos orders typo matches: fewer edits, then Compare's rule with
// the whole-name boost taken against each match's own corrected prefix.
func compareTypos(a, b *typoHit) int {
	if a.edits != b.edits {
		return a.edits - b.edits
	}
	aw, bw := Weight(a.corrected, a.city.Slug, a.city.Population), Weight(b.corrected, b.city.Slug, b.city.Population)
	switch {
	case aw > bw:
		return -1
	case aw < bw:
		return 1
	}
	if ae, be := a.city.Slug == a.corrected, b.city.Slug == b.corrected; ae != be {
		if ae {
			return -1
		}
		return 1
	}
	// Neither or both are whole-name matches of equal weight: the rest of
	// Compare's order does not look at the prefix.
	return Compare("", &a.city, &b.city)
}

// correction is a prefix of real slugs within edits of the query.
type correction struct {
	prefix string
	edits  int
}

// corrections walks the trie of the dataset's slugs depth first, keeping
// for each node the optimal-string-alignment distances between its path
// and every prefix of the query, and returns the nodes whose path is within
// maxEdits of the whole query. It does not descend where no extension can
// come within reach, nor below a node already found unless a descendant
// could need fewer edits, nor into the query's own exact range.
func (t *typos) corrections(ctx context.Context, d Dataset, query string, maxEdits int) ([]correction, error) {
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
		if depth >= n && string(path[:n]) == query {
			return false // exact matches, found by the plain search
		}
		if dist := cur[n]; dist <= maxEdits {
			out = append(out, correction{prefix: string(path), edits: dist})
			if lowest >= dist {
				return false // nothing below can need fewer edits
			}
		}
		return depth < maxDepth
	}
	if err := t.walkTrie(ctx, d, visit); err != nil {
		return nil, err
	}
	return out, nil
}

// TrieWalker is implemented by stores that walk the trie of a dataset's
// slugs themselves, faster than WithTypos can through Extensions.
type TrieWalker interface {
	// WalkTrie calls visit with the path of every node below the root,
	// depth first, children in byte order, and goes below a node only when
	// visit returns true. visit must not keep path.
	WalkTrie(ctx context.Context, d Dataset, visit func(path []byte) bool) error
}

// walkTrie walks with the store's TrieWalker, or else node by node through
// its Extensions (or Search).
func (t *typos) walkTrie(ctx context.Context, d Dataset, visit func(path []byte) bool) error {
	if w, ok := t.s.(TrieWalker); ok {
		return w.WalkTrie(ctx, d, visit)
	}
	var walk func(path []byte) error
	walk = func(path []byte) error {
		next, err := t.extensions(ctx, d, string(path))
		if err != nil {
			return err
		}
		for _, b := range next {
			child := append(path, b)
			if visit(child) {
				if err := walk(child); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(nil)
}

// extensions asks the store's Extender, or else Search about every byte.
func (t *typos) extensions(ctx context.Context, d Dataset, prefix string) ([]byte, error) {
	if e, ok := t.s.(Extender); ok {
		return e.Extensions(ctx, d, prefix)
	}
	var out []byte
	for i := range len(slugAlphabet) {
		b := slugAlphabet[i]
		if prefix == "" && b == '-' {
			continue
		}
		found, err := t.s.Search(ctx, Query{Dataset: d, Prefix: prefix + string(b), Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			out = append(out, b)
		}
	}
	return out, nil
}
