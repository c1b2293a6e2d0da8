package embedded_test

import (
	"context"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

// withoutLines is the store as it answered before search.Query.Lines: it
// drops the field from every search, and counts the searches whose answer
// the field shortens.
type withoutLines struct {
	*embedded.Store
	cut *atomic.Int64
}

func (w withoutLines) Search(ctx context.Context, dst []search.Found, q search.Query) ([]search.Found, error) {
	if q.Lines > 0 {
		cut, err := w.Store.Search(ctx, nil, q)
		if err != nil {
			return dst, err
		}
		q.Lines = 0
		all, err := w.Store.Search(ctx, nil, q)
		if err != nil {
			return dst, err
		}
		if len(cut) < len(all) {
			w.cut.Add(1)
		}
	}
	q.Lines = 0
	return w.Store.Search(ctx, dst, q)
}

// Leaving out the later words that Query.Lines lets the store leave out
// changes no answer of the Service: on a real dataset with the alternate
// names of GeoNames, every prefix of three to six letters of every 25th
// name, typed as it is, after a space, and near a point, gets the same
// Result, hit for hit, from the store with Lines as from the store
// without; and some of those searches are shorter with it.
func TestLinesChangeNoAnswer(t *testing.T) {
	cities := readEnriched(t, shareddata.Path(t, "worldcitiespop-100k.txt.gz"), shareddata.Path(t, "geonames-cities1000.txt.gz"))
	s := mustOpen(t, t.TempDir(), embedded.Options{ReloadInterval: -1})
	defer s.Close()
	if _, err := s.Load(t.Context(), search.Large, &search.SliceReader{Cities: cities}, search.LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	var cut atomic.Int64
	with, without := search.NewService(s), search.NewService(withoutLines{s, &cut})
	step := 25
	if testing.Short() {
		step = 250
	}
	seen := map[string]bool{}
	near := &search.Point{Lat: 48.86, Lon: 2.35}
	queries := 0
	for i := 0; i < len(cities); i += step {
		for n := 3; n <= 6 && n <= len(cities[i].Slug); n++ {
			p := strings.TrimRight(cities[i].Slug[:n], "-")
			if seen[p] || strings.Count(p, "-") > len(p)-search.MinQueryLetters {
				continue
			}
			seen[p] = true
			for _, req := range []search.Request{
				{Text: p},
				{Text: p + " "},
				{Text: p, Near: near, BiasScale: search.DefaultBiasScale},
			} {
				req.Dataset, req.Limit, req.Fuzzy = search.Large, search.DefaultLimit, true
				queries++
				got, err := with.Find(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				want, err := without.Find(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%+v:\n got %+v\nwant %+v", req, got, want)
				}
			}
		}
	}
	if cut.Load() == 0 {
		t.Fatalf("none of the searches of %d queries was shorter with Lines: the test compares nothing", queries)
	}
	t.Logf("%d queries, %d searches shorter with Lines", queries, cut.Load())
}
