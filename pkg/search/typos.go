package search

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// MaxEdits is how many typos a folded query may hold and still match: none
// below 5 letters, one from 5, two from 9.
func MaxEdits(prefix string) int {
	switch n := letters(prefix); {
	case n >= 9:
		return 2
	case n >= 5:
		return 1
	}
	return 0
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

// TypoFinder is implemented by stores that find typo matches from an index
// of their own, faster than the Service's walk of their trie.
//
// FindTypos returns exactly what the Service's own walk (WalkTypos) returns
// for the same arguments: the best q.Limit cities of q.Dataset (and of
// q.Countries, when not empty) with a key that does not start with
// q.Prefix but starts with a string within maxEdits edits of it, each
// once, in CompareTypos order. Its errors are those of Store.Search. The conformance
// suite compares the two over many random queries.
type TypoFinder interface {
	FindTypos(ctx context.Context, q Query, maxEdits int) ([]Typo, error)
}

// TrieWalker is implemented by stores that walk the trie of a dataset's
// keys of whole names (see Keys: not those of later words, which typos do
// not reach) themselves, faster than WalkTypos can through Extensions.
type TrieWalker interface {
	// WalkTrie calls visit with the path of every node below the root,
	// depth first, children in byte order, and goes below a node only when
	// visit returns true. visit must not keep path.
	WalkTrie(ctx context.Context, d Dataset, visit func(path []byte) bool) error
}

// Extender is implemented by stores that can list cheaply which bytes
// follow a prefix in the keys of whole names of a dataset: the children of
// the prefix in the trie of those keys. WalkTypos walks that trie; without an Extender it asks
// Search about each possible next byte instead.
type Extender interface {
	// Extensions returns, in increasing order and without repeats, every
	// byte b such that some key of d starts with prefix+b.
	Extensions(ctx context.Context, d Dataset, prefix string) ([]byte, error)
}

// FindsTypos reports whether the Service finds typo matches in its store:
// it needs a store that has a TypoFinder, or lets the Service walk the
// trie of its keys (a TrieWalker or an Extender). A store without any
// (MongoDB: a walk there costs a query per trie node) answers with prefix
// matches only, whatever Request.Fuzzy says.
func (s *Service) FindsTypos() bool {
	switch s.store.(type) {
	case TypoFinder, TrieWalker, Extender:
		return true
	}
	return false
}

// typos returns the best typo matches of q, at most want of them. Fewer
// edits rank first, so when the matches within fewer edits fill the
// answer, those needing more stay unsearched: the walk for two edits
// visits many times the nodes of the walk for one.
func (s *Service) typos(ctx context.Context, q Query, want int) ([]Typo, error) {
	if !s.FindsTypos() {
		return nil, nil
	}
	var found []Typo
	for e := 1; e <= MaxEdits(q.Prefix); e++ {
		var err error
		if f, ok := s.store.(TypoFinder); ok {
			found, err = f.FindTypos(ctx, q, e)
		} else {
			found, err = WalkTypos(ctx, s.store, q, e)
		}
		if err != nil {
			return nil, err
		}
		if len(found) >= want {
			return found[:want], nil
		}
	}
	return found, nil
}

// WalkTypos finds typo matches (see TypoFinder) in a store that is a
// TrieWalker or an Extender: it walks the trie of the dataset's keys for
// the prefixes within maxEdits edits of q.Prefix (see corrections) and
// searches each of them. It is the reference that a TypoFinder must agree
// with.
func WalkTypos(ctx context.Context, s Store, q Query, maxEdits int) ([]Typo, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	nodes, err := corrections(ctx, s, q.Dataset, q.Prefix, maxEdits)
	if err != nil {
		return nil, err
	}
	best := map[Key]int{} // index into found
	var found []Typo
	for _, n := range nodes {
		nq := q
		nq.Prefix, nq.Words = n.prefix, false // typos reach whole names only
		cities, err := s.Search(ctx, nq)
		if err != nil {
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
func corrections(ctx context.Context, s Store, d Dataset, query string, maxEdits int) ([]correction, error) {
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
	if err := walkTrie(ctx, s, d, visit); err != nil {
		return nil, err
	}
	return out, nil
}

// errNoTrie means a store can neither walk its trie nor list extensions.
var errNoTrie = errors.New("the store cannot walk the trie of its keys")

// walkTrie walks with the store's TrieWalker, or else node by node through
// its Extender.
func walkTrie(ctx context.Context, s Store, d Dataset, visit func(path []byte) bool) error {
	if w, ok := s.(TrieWalker); ok {
		return w.WalkTrie(ctx, d, visit)
	}
	e, ok := s.(Extender)
	if !ok {
		return errNoTrie
	}
	var walk func(path []byte) error
	walk = func(path []byte) error {
		next, err := e.Extensions(ctx, d, string(path))
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
