package server

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/breaker"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/guarded"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// Every row of errorTable is reached by an error that the API meets, made
// by the code that makes it: no row is dead, none hidden by an earlier one.
func TestErrorTableRowsAreReached(t *testing.T) {
	empty := search.NewService(memory.New())
	closedStore := memory.New()
	closedStore.Close()
	closed := search.NewService(closedStore)
	trip := breaker.New(breaker.Config{Threshold: 1})
	tripped := search.NewService(guarded.New(closedStore, trip))
	if _, err := tripped.Find(t.Context(), search.Request{Text: "par", Limit: 1}); !errors.Is(err, search.ErrUnavailable) {
		t.Fatalf("a search of a closed store = %v, want it unavailable (which opens the breaker)", err)
	}
	late, cancelLate := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancelLate()
	gone, cancelGone := context.WithCancel(t.Context())
	cancelGone()
	find := func(ctx context.Context, svc *search.Service, req search.Request) error {
		req.Limit = search.DefaultLimit
		_, err := svc.Find(ctx, req)
		return err
	}
	_, _, badLimit := decodeSearch(parseValues(url.Values{"q": {"par"}, "limit": {"ten"}}.Encode()))
	paris := memory.New()
	defer paris.Close()
	if _, err := paris.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{{ID: 1, Name: "Paris", Slug: "paris", Country: "France"}}}, search.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	_, noSuchCity := search.NewService(paris).Lookup(t.Context(), search.LookupRequest{ID: "2"})

	reached := make([]bool, len(errorTable))
	for _, tc := range []struct {
		name    string
		err     error
		status  int
		message string
	}{
		{"a parameter that does not parse", badLimit, 400, `Invalid limit "ten": use a whole number from 1 to 100`},
		{"a query too short", find(t.Context(), empty, search.Request{Text: "pa"}), 400, "Enter at least 3 letters"},
		{"an unknown dataset is an invalid query", find(t.Context(), empty, search.Request{Dataset: "huge", Text: "par"}), 400,
			`Unknown dataset "huge": use small or large`},
		{"an id that no city has", noSuchCity, 404, "No city has this id in this dataset"},
		{"a dataset never imported", find(t.Context(), empty, search.Request{Text: "par"}), 503, "This dataset is not available yet"},
		{"a store behind an open circuit breaker", find(t.Context(), tripped, search.Request{Text: "par"}), 503, UnavailableMessage},
		{"a store that is down", find(t.Context(), closed, search.Request{Text: "par"}), 503, UnavailableMessage},
		{"a search past its deadline", find(late, empty, search.Request{Text: "par"}), 503, "Search took too long, try again later"},
		{"a client that left", find(gone, empty, search.Request{Text: "par"}), statusClientClosedRequest, "Request canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := lookupError(tc.err)
			if got.status != tc.status || got.message != tc.message {
				t.Errorf("%v: status %d, message %q; want %d, %q", tc.err, got.status, got.message, tc.status, tc.message)
			}
			for i, k := range errorTable {
				if k.target == got.target {
					reached[i] = true
				}
			}
		})
	}
	for i, k := range errorTable {
		if !reached[i] {
			t.Errorf("no error reaches row %d of the table (%v)", i, k.target)
		}
	}
}
