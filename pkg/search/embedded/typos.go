package embedded

import (
	"bytes"
	"context"
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

var _ search.TypoFinder = (*Store)(nil)

// FindTypos implements search.TypoFinder: it finds the same corrections as
// search.WalkTypos, by running the same optimal-string-alignment automaton
// over the snapshot's trie (see typoWalk), then ranks each correction's
// cities as Search does and merges them as WalkTypos does.
func (s *Store) FindTypos(ctx context.Context, q search.Query, maxEdits int) ([]search.Typo, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if maxEdits > maxTypoEdits || len(q.Prefix) > maxTypoQuery || !isSlug(q.Prefix) {
		// Beyond what the automaton's bit sets hold: walk as the Service
		// would (WalkTypos takes the lock itself).
		return search.WalkTypos(ctx, s, q, maxEdits)
	}
	s.use(q.Dataset)
	s.mu.RLock()
	snap, err := s.snapshot(ctx, q.Dataset)
	if err != nil {
		s.mu.RUnlock()
		return nil, err
	}
	if snap.trie == nil { // a dataset whose slugs the trie cannot hold
		s.mu.RUnlock()
		return search.WalkTypos(ctx, s, q, maxEdits)
	}
	defer s.mu.RUnlock()
	if maxEdits < 1 {
		return nil, nil // within no edits only the query itself, a prefix match
	}
	return snap.findTypos(q, maxEdits), nil
}

// isSlug reports whether every byte of s is in the slug alphabet.
func isSlug(s string) bool {
	for i := range len(s) {
		if _, ok := trigramSymbol(s[i]); !ok {
			return false
		}
	}
	return true
}

// Bounds of the automaton: its states are one 64-bit set of query
// positions (0 to len(query)) per number of edits.
const (
	maxTypoEdits = 2
	maxTypoQuery = 63
)

// correction is a trie node within the edit budget of the query: its path
// is arena[off:off+depth] of the walk that found it.
type correction struct {
	off, depth uint32
	edits      uint8
}

// typoHit is one city of one correction.
type typoHit struct {
	rec    uint32
	edits  uint8
	whole  bool   // the city's slug is the whole correction
	depth  uint32 // the correction's length
	weight int64
	order  uint32 // position in WalkTypos's order of discovery
}

// findTypos answers FindTypos from the snapshot.
func (s *snapshot) findTypos(q search.Query, maxEdits int) []search.Typo {
	w := walkPool.Get().(*typoWalk)
	w.init(s, q.Prefix, maxEdits)
	w.run()
	found, arena := w.corrections()
	walkPool.Put(w)
	// Each correction's best cities as Search ranks them, less the prefix
	// matches, in the order WalkTypos meets them.
	var hits []typoHit
	var buf [search.MaxLimit]uint32
	prefix := []byte(q.Prefix)
	for _, c := range found {
		corrected := aliasString(arena[c.off : c.off+c.depth])
		for _, r := range s.find(corrected, newFilter(&q), q.Limit, buf[:0]) {
			slug := s.slug(r) // the key that found the record: its main name's, for now
			if bytes.HasPrefix(slug, prefix) {
				continue
			}
			whole := len(slug) == int(c.depth)
			weight := s.pop(r)
			if whole {
				weight *= search.ExactBoost
			}
			hits = append(hits, typoHit{rec: r, edits: c.edits, whole: whole, depth: c.depth, weight: weight, order: uint32(len(hits))})
		}
	}
	// search.CompareTypos's order; between two hits of one city, the first
	// met wins a tie, as in WalkTypos.
	slices.SortFunc(hits, func(a, b typoHit) int {
		if a.edits != b.edits {
			return int(a.edits) - int(b.edits)
		}
		if a.weight != b.weight {
			if a.weight > b.weight {
				return -1
			}
			return 1
		}
		if a.whole != b.whole {
			if a.whole {
				return -1
			}
			return 1
		}
		if a.rec != b.rec {
			return int(s.rank(a.rec)) - int(s.rank(b.rec))
		}
		return int(a.order) - int(b.order)
	})
	var out []search.Typo
	var idx []uint32
	for _, h := range hits {
		if len(out) == q.Limit {
			break
		}
		if slices.Contains(idx, h.rec) {
			continue // the same city met again through a worse correction
		}
		idx = append(idx, h.rec)
		out = append(out, search.Typo{Edits: int(h.edits), Corrected: aliasString(s.slug(h.rec)[:h.depth])})
	}
	for i, c := range s.cities(idx) {
		out[i].Found = c
	}
	return out
}
