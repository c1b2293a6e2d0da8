package embedded_test

import (
	"slices"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// AppendSearch answers as Search does, after what dst holds, and leaves
// nothing of an earlier answer in a reused slice.
func TestAppendSearch(t *testing.T) {
	s := mustOpen(t, t.TempDir(), embedded.Options{ReloadInterval: -1})
	defer s.Close()
	cities := storetest.ReferenceCities(500)
	tokyo := storetest.City("Tokyo", "Japan", "Tokyo", 8336599)
	tokyo.AltNames = []string{"Edo"}
	storetest.MustLoad(t, s, search.Large, append(cities, tokyo)...)
	buf := make([]search.Found, 0, search.MaxLimit)
	for _, p := range []string{"tok", "a", "ba", "qqq", "tokyo"} {
		for _, limit := range []int{1, 10, search.MaxLimit} {
			q := search.Query{Dataset: search.Large, Prefix: p, Limit: limit}
			want, err := s.Search(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			head := search.Found{City: search.City{Name: "Head"}}
			got, err := s.AppendSearch(t.Context(), append(buf[:0], head), q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1+len(want) || got[0].Name != "Head" || !slices.EqualFunc(got[1:], want, sameFound) {
				t.Errorf("%q limit %d: AppendSearch gave %d cities after the head, Search %d, or others", p, limit, len(got)-1, len(want))
			}
			buf = got // the next answer overwrites this one
		}
	}
}

func sameFound(a, b search.Found) bool { return a.Key == b.Key && a.City.Equal(&b.City) }
