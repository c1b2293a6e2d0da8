package embedded

import (
	"context"
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// FindTypos implements search.TypoFinder: it finds the same corrections as
// search.WalkTypos, by running the same optimal-string-alignment automaton
// over the snapshot's trie (see typoWalk), then ranks each correction's
// cities as Search does and merges them as WalkTypos does.
func (s *Store) FindTypos(ctx context.Context, q search.Query, maxEdits int) ([]search.Typo, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if maxEdits > maxTypoEdits || len(q.Prefix) > maxTypoQuery || !isSlug(q.Prefix) {
		// Beyond what the automaton's bit sets hold: walk the trie
		// (WalkTypos takes the lock itself).
		return search.WalkTypos(ctx, s, s.walkTrie, q, maxEdits)
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
		return search.WalkTypos(ctx, s, s.walkTrie, q, maxEdits)
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
// is arena[off:off+depth] of the walk that found it, its keys [lo, hi).
type correction struct {
	off, depth uint32
	lo, hi     uint32
	edits      uint8
}

// typoHit is one city of one correction.
type typoHit struct {
	rec    uint32 // the record of the key that found it
	rank   uint32 // rec's base rank, read once rather than in every comparison
	city   uint32
	edits  uint8
	whole  bool   // the key's slug is the whole correction
	depth  uint32 // the correction's length
	weight int64
}

// findTypos answers FindTypos from the snapshot. Typos reach the keys of
// whole names, main and alternate: the records, over which the trie is
// built.
func (s *snapshot) findTypos(q search.Query, maxEdits int) []search.Typo {
	w := walkPool.Get().(*typoWalk)
	w.init(s, q.Prefix, maxEdits, q.Populated)
	w.run()
	found, arena := w.corrections()
	defer walkPool.Put(w) // w holds found, arena and hits until the answer is made
	// Each correction's best cities as Search ranks them, less the prefix
	// matches; the best q.Limit cities of them all are kept as they come,
	// so that most hits cost one comparison with the worst kept.
	top := w.hits[:0]
	defer func() { w.hits = top[:0] }()
	var buf [search.MaxLimit]uint32
	ownLo, ownHi := w.prefixed() // keys that start with the query: prefix matches
	f := newFilter(&q)
	for _, c := range found {
		corrected := aliasString(arena[c.off : c.off+c.depth])
		for _, r := range s.names.findRange(corrected, f, c.lo, c.hi, q.Limit, buf[:0]) {
			if r >= ownLo && r < ownHi {
				continue
			}
			// search.Weight against the correction, which the key starts
			// with: it is the whole key when it is as long.
			rec := s.rec(r)
			whole := int(rec.slugLen()) == int(c.depth)
			top = keepBest(top, q.Limit, typoHit{
				rec: r, rank: rec.rank(), city: s.city(r), edits: c.edits, whole: whole, depth: c.depth,
				weight: weight(int64(rec.pop()), rec.isAlt(), whole),
			})
		}
	}
	out := make([]search.Typo, len(top))
	for i, h := range top {
		out[i] = search.Typo{Edits: int(h.edits), Corrected: aliasString(s.slug(h.rec)[:h.depth])}
		s.fillFound(&out[i].Found, h.rec)
	}
	return out
}

// keepBest adds h to top, the best hits met so far of at most limit
// cities, each through its best hit, in order: a hit that ranks after
// limit others of other cities, or after another of its own city, can
// never be shown.
func keepBest(top []typoHit, limit int, h typoHit) []typoHit {
	if len(top) == limit && !h.before(&top[len(top)-1]) {
		return top
	}
	for i := range top {
		if top[i].city == h.city {
			if !h.before(&top[i]) {
				return top // the same city met again through a worse correction or key
			}
			top = slices.Delete(top, i, i+1)
			break
		}
	}
	if len(top) == limit {
		top = top[:limit-1]
	}
	at := len(top)
	for at > 0 && h.before(&top[at-1]) {
		at--
	}
	return slices.Insert(top, at, h)
}

// before reports whether h ranks before o in search.CompareTypos's order.
// Past the weight and the whole-name match, the base rank orders two keys
// as CompareTypos does: main name first, then shorter, then by slug and
// city. Between two hits of one key WalkTypos keeps the first it met, in
// its depth-first order: the two corrections are prefixes of the key, and
// the shorter comes first.
func (h *typoHit) before(o *typoHit) bool {
	switch {
	case h.edits != o.edits:
		return h.edits < o.edits
	case h.weight != o.weight:
		return h.weight > o.weight
	case h.whole != o.whole:
		return h.whole
	case h.rec != o.rec:
		return h.rank < o.rank
	}
	return h.depth < o.depth
}
