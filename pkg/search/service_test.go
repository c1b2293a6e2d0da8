package search_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// mustService returns a service over a memory store holding cities as the
// large dataset.
func mustService(t *testing.T, cities ...search.City) (*search.Service, *memory.Store) {
	t.Helper()
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	storetest.MustLoad(t, store, search.Large, cities...)
	return search.NewService(store), store
}

func serviceCities() []search.City {
	return []search.City{
		storetest.CountryCity("Zürich", "Switzerland", "ch", 341730),
		storetest.CountryCity("Zug", "Switzerland", "ch", 23435),
		storetest.CountryCity("São Paulo", "Brazil", "br", 10021295),
		storetest.CountryCity("Paris", "France", "fr", 2138551),
		storetest.CountryCity("Parisot", "France", "fr", 0),
		storetest.CountryCity("Paros", "Greece", "gr", 13715),
	}
}

func TestFindRefusesBadRequests(t *testing.T) {
	svc, _ := mustService(t, serviceCities()...)
	ok := search.Request{Dataset: search.Large, Text: "par", Limit: 10}
	for _, tc := range []struct {
		name      string
		change    func(*search.Request)
		field     string
		message   string
		isUnknown bool // also ErrUnknownDataset
	}{
		{"two letters", func(r *search.Request) { r.Text = "pa" }, "q", "Enter at least 3 letters", false},
		{"punctuation is not a letter", func(r *search.Request) { r.Text = "a-b" }, "q", "Enter at least 3 letters", false},
		{"characters that fold to nothing", func(r *search.Request) { r.Text = "𠀀𠀁𠀂" }, "q", "Enter at least 3 letters", false},
		{"letters are runes, not bytes", func(r *search.Request) { r.Text = "İs" }, "q", "Enter at least 3 letters", false},
		{"spaces around do not count", func(r *search.Request) { r.Text = "  pa \t" }, "q", "Enter at least 3 letters", false},
		{"too long", func(r *search.Request) { r.Text = strings.Repeat("é", 101) }, "q", "Query is too long: use at most 100 characters", false},
		{"not UTF-8", func(r *search.Request) { r.Text = "par\xff" }, "q", "Query is not valid UTF-8", false},
		{"unknown dataset", func(r *search.Request) { r.Dataset = "huge" }, "dataset", `Unknown dataset "huge": use small or large`, true},
		{"limit 0", func(r *search.Request) { r.Limit = 0 }, "limit", "Invalid limit 0: use a whole number from 1 to 100", false},
		{"limit over the most", func(r *search.Request) { r.Limit = 101 }, "limit", "Invalid limit 101: use a whole number from 1 to 100", false},
		{"unknown country", func(r *search.Request) { r.Countries = "fr,Atlantis" }, "country",
			`Unknown country "Atlantis": use ISO codes such as cl, or English names`, false},
		{"country list not UTF-8", func(r *search.Request) { r.Countries = "fr\xff" }, "country", "Invalid country list", false},
		{"huge country list", func(r *search.Request) { r.Countries = strings.Repeat("fr,", 400) }, "country", "Invalid country list", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := ok
			tc.change(&req)
			_, err := svc.Find(t.Context(), req)
			var invalid *search.InvalidError
			if !errors.As(err, &invalid) || !errors.Is(err, search.ErrInvalidQuery) {
				t.Fatalf("err = %v, want an *InvalidError matching ErrInvalidQuery", err)
			}
			if invalid.Field != tc.field || invalid.Message != tc.message {
				t.Errorf("field %q, message %q; want %q, %q", invalid.Field, invalid.Message, tc.field, tc.message)
			}
			if got := errors.Is(err, search.ErrUnknownDataset); got != tc.isUnknown {
				t.Errorf("errors.Is(err, ErrUnknownDataset) = %v, want %v", got, tc.isUnknown)
			}
		})
	}
}

func TestFindAnswers(t *testing.T) {
	svc, _ := mustService(t, serviceCities()...)
	type hit struct {
		name  string
		match search.Span
		edits int
	}
	for _, tc := range []struct {
		name       string
		req        search.Request
		wantPrefix string
		want       []hit
	}{
		{"prefix matches, with the span the query covers",
			search.Request{Dataset: search.Large, Text: "par", Limit: 10}, "par",
			[]hit{{"Paris", search.Span{End: 3}, 0}, {"Paros", search.Span{End: 3}, 0}, {"Parisot", search.Span{End: 3}, 0}}},
		{"the text is trimmed and folded once, the span counts code points",
			search.Request{Dataset: search.Large, Text: " SAO_p ", Limit: 10}, "sao-p",
			[]hit{{"São Paulo", search.Span{End: 5}, 0}}},
		{"typo matches follow the prefix matches",
			search.Request{Dataset: search.Large, Text: "paris", Limit: 10, Fuzzy: true}, "paris",
			[]hit{{"Paris", search.Span{End: 5}, 0}, {"Parisot", search.Span{End: 5}, 0}, {"Paros", search.Span{End: 5}, 1}}},
		{"a typo match's span covers its corrected prefix",
			search.Request{Dataset: search.Large, Text: "zuirch", Limit: 10, Fuzzy: true}, "zuirch",
			[]hit{{"Zürich", search.Span{End: 6}, 1}}},
		{"no typo matches unless asked",
			search.Request{Dataset: search.Large, Text: "zuirch", Limit: 10}, "zuirch", nil},
		{"no typo matches when the prefix matches fill the answer",
			search.Request{Dataset: search.Large, Text: "paris", Limit: 2, Fuzzy: true}, "paris",
			[]hit{{"Paris", search.Span{End: 5}, 0}, {"Parisot", search.Span{End: 5}, 0}}},
		{"typo matches only fill what is left",
			search.Request{Dataset: search.Large, Text: "paris", Limit: 1, Fuzzy: true, Countries: "gr"}, "paris",
			[]hit{{"Paros", search.Span{End: 5}, 1}}},
		{"letters count once folded: two CJK characters make eight",
			search.Request{Dataset: search.Large, Text: "東京", Limit: 10}, "dong-jing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := svc.Find(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if res.Hits == nil || res.Prefix != tc.wantPrefix || res.Dataset != search.Large {
				t.Errorf("result %+v: want non-nil hits, prefix %q, dataset large", res, tc.wantPrefix)
			}
			var got []hit
			for _, h := range res.Hits {
				got = append(got, hit{h.Name, h.Match, h.Edits})
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got  %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestFindDefaultsToTheSmallDataset(t *testing.T) {
	svc, _ := mustService(t, serviceCities()...)
	_, err := svc.Find(t.Context(), search.Request{Text: "par", Limit: 10})
	var de *search.DatasetError
	if !errors.Is(err, search.ErrEmptyDataset) || !errors.As(err, &de) || de.Dataset != search.Small {
		t.Errorf("err = %v, want dataset small empty", err)
	}
}

// typoIndex is a store with a typo index of its own: the Service must ask
// it rather than walk the trie.
type typoIndex struct {
	*memory.Store
	asked []int
}

func (s *typoIndex) FindTypos(ctx context.Context, q search.Query, maxEdits int) ([]search.Typo, error) {
	s.asked = append(s.asked, maxEdits)
	return search.WalkTypos(ctx, s.Store, q, maxEdits)
}

func TestFindAsksTheStoresTypoIndex(t *testing.T) {
	_, store := mustService(t, append(serviceCities(), storetest.CountryCity("San Francisco", "United States", "us", 864816))...)
	idx := &typoIndex{Store: store}
	svc := search.NewService(idx)
	res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: "san-fransisko", Limit: 10, Fuzzy: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Name != "San Francisco" || res.Hits[0].Edits != 2 {
		t.Errorf("hits %+v, want San Francisco with 2 edits", res.Hits)
	}
	// One edit finds nothing, so the Service asks again for two.
	if !slices.Equal(idx.asked, []int{1, 2}) {
		t.Errorf("the index was asked for %v edits, want [1 2]", idx.asked)
	}
}

func TestServiceStats(t *testing.T) {
	svc, _ := mustService(t, serviceCities()...)
	if st, err := svc.Stats(t.Context(), search.Large); err != nil || st.Cities != len(serviceCities()) {
		t.Errorf("Stats(large) = %+v, %v; want %d cities", st, err, len(serviceCities()))
	}
	if _, err := svc.Stats(t.Context(), search.Small); !errors.Is(err, search.ErrEmptyDataset) {
		t.Errorf("Stats(small) err = %v, want ErrEmptyDataset", err)
	}
	if _, err := svc.Stats(t.Context(), "huge"); !errors.Is(err, search.ErrUnknownDataset) {
		t.Errorf("Stats(huge) err = %v, want ErrUnknownDataset", err)
	}
}
