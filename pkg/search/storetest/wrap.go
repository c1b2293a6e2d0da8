package storetest

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Call is a call of a store's method, as a store made by Wrap sees it.
type Call struct {
	// Method is the method's name: "Search", "Lookup", "Nearby",
	// "FindTypos", "Stats", "Load" or "Close".
	Method string
	// Dataset is the dataset the call is about; "" for Close.
	Dataset search.Dataset
	// Query is the query of Search and FindTypos.
	Query search.Query
	// MaxEdits is FindTypos's.
	MaxEdits int
	// ID is Lookup's.
	ID uint32
	// Near is the query of Nearby.
	Near search.NearQuery
}

// Wrap returns a decorator around s: a store that tells before of each
// call, then passes it on to s, unless before returns an error, which the
// call then returns without reaching s. A nil before lets every call
// through. It is how tests make a store fail on demand or count what is
// asked of it, and the shape of any decorator (logging, metrics): the
// wrapper is a search.TypoFinder exactly when s is one, so that it keeps
// every feature of s. RunWrapped holds it to the whole suite.
func Wrap(s search.Store, before func(ctx context.Context, c Call) error) search.Store {
	w := &wrapper{store: s, before: before}
	if f, ok := s.(search.TypoFinder); ok {
		return &typoWrapper{wrapper: w, finder: f}
	}
	return w
}

// wrapper is Wrap's store over one that finds no typos.
type wrapper struct {
	store  search.Store
	before func(context.Context, Call) error
}

var _ search.Store = (*wrapper)(nil)

func (w *wrapper) ask(ctx context.Context, c Call) error {
	if w.before == nil {
		return nil
	}
	return w.before(ctx, c)
}

func (w *wrapper) Search(ctx context.Context, dst []search.Found, q search.Query) ([]search.Found, error) {
	if err := w.ask(ctx, Call{Method: "Search", Dataset: q.Dataset, Query: q}); err != nil {
		return dst, err
	}
	return w.store.Search(ctx, dst, q)
}

func (w *wrapper) Lookup(ctx context.Context, d search.Dataset, id uint32) (search.City, error) {
	if err := w.ask(ctx, Call{Method: "Lookup", Dataset: d, ID: id}); err != nil {
		return search.City{}, err
	}
	return w.store.Lookup(ctx, d, id)
}

func (w *wrapper) Nearby(ctx context.Context, dst []search.City, q search.NearQuery) ([]search.City, error) {
	if err := w.ask(ctx, Call{Method: "Nearby", Dataset: q.Dataset, Near: q}); err != nil {
		return dst, err
	}
	return w.store.Nearby(ctx, dst, q)
}

func (w *wrapper) Stats(ctx context.Context, d search.Dataset) (search.DatasetStats, error) {
	if err := w.ask(ctx, Call{Method: "Stats", Dataset: d}); err != nil {
		return search.DatasetStats{}, err
	}
	return w.store.Stats(ctx, d)
}

func (w *wrapper) Load(ctx context.Context, d search.Dataset, r search.CityReader, opts search.LoadOptions) (search.LoadStats, error) {
	if err := w.ask(ctx, Call{Method: "Load", Dataset: d}); err != nil {
		return search.LoadStats{}, err
	}
	return w.store.Load(ctx, d, r, opts)
}

func (w *wrapper) Close() error {
	if err := w.ask(context.Background(), Call{Method: "Close"}); err != nil {
		return err
	}
	return w.store.Close()
}

// typoWrapper is Wrap's store over a search.TypoFinder.
type typoWrapper struct {
	*wrapper
	finder search.TypoFinder
}

var _ search.TypoFinder = (*typoWrapper)(nil)

func (w *typoWrapper) FindTypos(ctx context.Context, q search.Query, maxEdits int) ([]search.Typo, error) {
	if err := w.ask(ctx, Call{Method: "FindTypos", Dataset: q.Dataset, Query: q, MaxEdits: maxEdits}); err != nil {
		return nil, err
	}
	return w.finder.FindTypos(ctx, q, maxEdits)
}

// RunWrapped runs the suite (see Run) through a Wrap of each store that
// open makes, and checks that every method of the contract, FindTypos
// included when the store finds typos, was called through the wrapper: a
// decorator keeps every feature of the store it wraps.
func RunWrapped(t *testing.T, open Opener, opts ...Option) {
	t.Helper()
	calls := map[string]*atomic.Int64{} // by method; read only once made
	for _, m := range []string{"Search", "Lookup", "Nearby", "Stats", "Load", "Close", "FindTypos"} {
		calls[m] = new(atomic.Int64)
	}
	var findsTypos atomic.Bool
	t.Run("wrapped", func(t *testing.T) {
		Run(t, func(t *testing.T) search.Store {
			s := open(t)
			if _, ok := s.(search.TypoFinder); ok {
				findsTypos.Store(true)
			}
			return Wrap(s, func(_ context.Context, c Call) error {
				calls[c.Method].Add(1)
				return nil
			})
		}, opts...)
	})
	for m, n := range calls {
		if n.Load() == 0 && (m != "FindTypos" || findsTypos.Load()) {
			t.Errorf("no call of %s went through the wrapper", m)
		}
	}
}
