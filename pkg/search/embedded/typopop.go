package embedded

// popNodes marks the nodes of a trie that some key of a city of known
// population lies under: bit k of levels[d] is set when the range of keys
// of node k of level d holds such a key (see trie.keysAt: a range may end
// with shorter keys of other nodes, which makes a bit set where none is
// needed, never the reverse). A walk of a query that keeps only such
// cities (search.Query.Populated, what the Service asks when the prefix
// matches are weak hamlets) leaves out the other nodes and everything
// below them: none of their keys could be kept. Of the 3 million keys of
// the large dataset, some 47,000 have a population, and the walk of a
// query such as "prais" keeps to the few branches that lead to them. One
// bit per node: 0.4 MB for the large dataset.
type popNodes struct {
	levels [][]uint64 // levels[d]: a bit per node of level d; none for the root
}

// has reports whether node k of level d may have a key of a city of
// known population.
func (p *popNodes) has(d int, k uint32) bool { return p.levels[d][k>>6]>>(k&63)&1 != 0 }

// buildPopNodes returns the popNodes of s's trie, nil when it has none: a
// pass over the records for the keys of known population, then one over
// each level's nodes beside them.
func buildPopNodes(s *snapshot) *popNodes {
	t := s.trie
	if t == nil {
		return nil
	}
	var keys []uint32
	for i := range uint32(s.count) {
		if s.rec(i).pop() > 0 { // an alternate name's record has its city's
			keys = append(keys, i)
		}
	}
	p := &popNodes{levels: make([][]uint64, t.depth()+1)}
	for d := 1; d <= t.depth(); d++ {
		n := len(t.levels[d]) / wordSize
		if d == t.depth() {
			n-- // the sentinel
		}
		set := make([]uint64, (n+63)/64)
		j := 0
		for k := range uint32(n) {
			lo, hi := t.keysAt(d, k)
			for j < len(keys) && keys[j] < lo {
				j++
			}
			if j < len(keys) && keys[j] < hi {
				set[k>>6] |= 1 << (k & 63)
			}
		}
		p.levels[d] = set
	}
	return p
}

// pruned reports whether the walk leaves out node k of depth d, a level of
// the trie: it keeps only cities of known population, and none is below.
func (w *typoWalk) pruned(d int, k uint32) bool {
	return w.pop != nil && d <= w.t.depth() && !w.pop.has(d, k)
}
