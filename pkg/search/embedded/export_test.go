package embedded

import "github.com/cityfinder/cityfinder/pkg/search"

// Holds tells whether the store holds dataset d's snapshot in memory.
func (s *Store) Holds(d search.Dataset) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snaps[d] != nil
}
