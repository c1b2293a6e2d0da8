package embedded

import (
	"errors"
	"fmt"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// use reads dataset d's snapshot the first time a Lazy store needs it.
func (s *Store) use(d search.Dataset) {
	if !s.opts.Lazy {
		return
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	if s.opened[d] {
		return
	}
	s.opened[d] = true
	_ = s.reload(d) // an unreadable snapshot is kept in broken: searches report it
}

// read tells whether the store holds (or tried to read) dataset d's
// snapshot: always, unless Lazy.
func (s *Store) read(d search.Dataset) bool {
	if !s.opts.Lazy {
		return true
	}
	s.openMu.Lock()
	defer s.openMu.Unlock()
	return s.opened[d]
}

// missing is the error of a search of dataset d, which holds no snapshot:
// that its file is corrupt or could not be read, or that it was never
// imported. The caller holds s.mu.
func (s *Store) missing(d search.Dataset) error {
	if err := s.broken[d]; err != nil {
		return unreadable(d, err)
	}
	return search.EmptyDatasetError(d)
}

// unreadable is the error of dataset d whose snapshot could not be read
// for err: corrupt (search.ErrCorrupt), or unavailable for now.
func unreadable(d search.Dataset, err error) error {
	if errors.Is(err, errCorrupt) {
		err = fmt.Errorf("%w: %w", search.ErrCorrupt, err)
	} else {
		err = fmt.Errorf("%w: %w", search.ErrUnavailable, err)
	}
	return &search.DatasetError{Dataset: d, Err: err}
}
