// Package guarded puts a search.Store behind a circuit breaker (package
// breaker), so that a backing service that hangs, such as MongoDB, fails
// searches at once while it is down instead of making each wait out its
// query timeout.
//
// Search, Stats and FindTypos go through the breaker: a call that fails
// with search.ErrUnavailable (the service cannot be reached or did not
// answer in time) is a failure, one the store answered (a result, an empty
// or corrupt dataset, an invalid query) a success, and one whose ctx ended
// first says nothing. While the breaker is open they fail at once with an
// error that matches both search.ErrUnavailable and breaker.ErrOpen. Load
// and Close, which an import or a shutdown makes once and may take long,
// pass straight through, as does any method that search.Store gains until
// it is guarded here too: a new method is guarded in three lines, with
// guard (see Search).
package guarded

import (
	"context"
	"errors"
	"fmt"

	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// Store is a search.Store behind a breaker. Its embedded Store is the
// wrapped one: the methods that Store does not guard reach it directly.
type Store struct {
	search.Store
	breaker *breaker.Breaker
}

var _ search.Store = (*Store)(nil)

// New returns s behind b: a *Store, or one that is also a
// search.TypoFinder when s is, so that the wrapper keeps every feature of
// s.
func New(s search.Store, b *breaker.Breaker) search.Store {
	g := &Store{Store: s, breaker: b}
	if f, ok := s.(search.TypoFinder); ok {
		return &typoStore{Store: g, finder: f}
	}
	return g
}

// Search implements search.Store through the breaker.
func (s *Store) Search(ctx context.Context, dst []search.Found, q search.Query) ([]search.Found, error) {
	out, err := guard(ctx, s.breaker, func() ([]search.Found, error) { return s.Store.Search(ctx, dst, q) })
	if err != nil {
		return dst, err
	}
	return out, nil
}

// Stats implements search.Store through the breaker.
func (s *Store) Stats(ctx context.Context, d search.Dataset) (search.DatasetStats, error) {
	return guard(ctx, s.breaker, func() (search.DatasetStats, error) { return s.Store.Stats(ctx, d) })
}

// typoStore is New's Store over a search.TypoFinder.
type typoStore struct {
	*Store
	finder search.TypoFinder
}

var _ search.TypoFinder = (*typoStore)(nil)

// FindTypos implements search.TypoFinder through the breaker.
func (s *typoStore) FindTypos(ctx context.Context, q search.Query, maxEdits int) ([]search.Typo, error) {
	return guard(ctx, s.breaker, func() ([]search.Typo, error) { return s.finder.FindTypos(ctx, q, maxEdits) })
}

// guard makes call unless b is open, and tells b how it went.
func guard[T any](ctx context.Context, b *breaker.Breaker, call func() (T, error)) (T, error) {
	c, err := b.Allow()
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%w: %w", search.ErrUnavailable, err)
	}
	v, err := call()
	c.Done(outcome(ctx, err))
	return v, err
}

// outcome judges the store's backing service by how one call ended.
func outcome(ctx context.Context, err error) breaker.Outcome {
	switch {
	case err == nil:
		return breaker.Success
	case ctx.Err() != nil:
		return breaker.Ignored
	case errors.Is(err, search.ErrUnavailable) && !errors.Is(err, search.ErrCorrupt):
		return breaker.Failure
	}
	return breaker.Success
}
