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
// why its file could not be read, or that it was never imported.
// The caller holds s.mu.
func (s *Store) missing(d search.Dataset) error {
	if err := s.broken[d]; err != nil {
		return err
	}
	return search.EmptyDatasetError(d)
}

// unreadableError is why a dataset's snapshot file could not be read, and
// how to recover: an import writes a new file in its place.
type unreadableError struct {
	d   search.Dataset
	err error
}

func (e *unreadableError) Error() string {
	what := "cannot be read"
	if errors.Is(e.err, errCorrupt) {
		what = "is corrupt"
	}
	return fmt.Sprintf("dataset %s %s: %v; import it again to replace the file: `cityfinder import --dataset %s`", e.d, what, e.err, e.d)
}

// Unwrap makes the error a search.ErrUnavailable (the dataset cannot be
// served until it is imported again) that keeps its cause.
func (e *unreadableError) Unwrap() []error { return []error{search.ErrUnavailable, e.err} }
