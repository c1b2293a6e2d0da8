package embedded

import (
	"context"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Holds tells whether the store holds dataset d's snapshot in memory.
func (s *Store) Holds(d search.Dataset) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.snaps[d] != nil
}

// WalkTrie is the walk of the trie of dataset d's keys that search.WalkTypos
// takes, which FindTypos must agree with.
func (s *Store) WalkTrie(ctx context.Context, d search.Dataset, visit func(path []byte) bool) error {
	return s.walkTrie(ctx, d, visit)
}

// Misspell makes one or two random edits in q (see misspell).
var Misspell = misspell

// AwaitWalkAids waits until the typo walk's aids of dataset d's snapshot
// are built (see snapshot.aidsBuilt), and reports whether it has the
// nodes of known population (see popNodes).
func (s *Store) AwaitWalkAids(ctx context.Context, d search.Dataset) (bool, error) {
	s.mu.RLock()
	snap, err := s.snapshot(ctx, d)
	s.mu.RUnlock()
	if err != nil {
		return false, err
	}
	<-snap.aidsBuilt
	return snap.popNodes.Load() != nil, nil
}

// Update is the -update flag of the golden tests.
var Update = update

// ZeroImportTime clears the import time in the header of a snapshot file's
// bytes: the only field that changes from one import of a file to the next.
func ZeroImportTime(data []byte) { clear(data[hImported : hImported+8]) }
