package search_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// The typo budget goes by the letters a person typed: one edit from 5,
// two from 7, and a character of a script other than Latin counts one
// letter, never more than it folds to.
func TestMaxEdits(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       int
	}{
		{"four letters get none", "pari", 0},
		{"five letters get one", "paris", 1},
		{"six letters get one", "zuirch", 1},
		{"seven letters get two", "chigaco", 2},
		{"seven letters, as typed", "Palmero", 2},
		{"a folded slug counts its letters, not its hyphens", "san-fr", 1},
		{"spaces and punctuation are no letters", "san fr.", 1},
		{"digits count", "12345", 1},
		{"diacritics fold to their letters", "Zürich", 1},
		{"a letter that folds to two counts two", "straße", 2},
		{"Cyrillic letters count one each", "Москвп", 1},
		{"Cyrillic, seven letters", "Новосиб", 2},
		{"a Cyrillic letter counts one, though it folds to four", "Щёлк", 0},
		{"Greek letters count one each", "Αθήνα", 1},
		{"Arabic letters count no more than they fold to", "القاهرة", 0},
		{"four Hebrew letters get none, though they fold to five", "ירוש", 0},
		{"Devanagari vowel signs are typed too", "मुंबई", 1},
		{"two Han characters get none, though they fold to eight letters", "東京", 0},
		{"four Han characters get none", "名古屋市", 0},
		{"a query already folded from Han counts its letters", "dong-jing", 2},
		{"two hangul syllables get none", "서울", 0},
		{"five kana get one", "とうきょう", 1},
		{"eight katakana get two", "サンフランシスコ", 2},
		{"Ethiopic syllables count one each", "አዲስ አበባ", 1},
		{"Han and Latin letters together", "東京 tow", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := search.MaxEdits(tc.text); got != tc.want {
				t.Errorf("MaxEdits(%q) = %d, want %d", tc.text, got, tc.want)
			}
		})
	}
}

// What the typo budget makes of real queries: two edits from 7 letters,
// one at most once the text matches a name as typed, and none when it
// matches a place of some size.
func TestFindTypos(t *testing.T) {
	with := func(c search.City, alts ...string) search.City {
		c.AltNames = alts
		return c
	}
	svc, _ := mustService(t,
		storetest.CountryCity("Istanbul", "Türkiye", "tr", 11174257),
		with(storetest.CountryCity("Ijevan", "Armenia", "am", 14737), "Istibulagh"),
		storetest.CountryCity("Chicago", "United States", "us", 2695598),
		storetest.CountryCity("Palermo", "Italy", "it", 668405),
		storetest.CountryCity("Palmer", "United States", "us", 18261),
		storetest.CountryCity("Marseille", "France", "fr", 794811),
		storetest.CountryCity("Marsella", "Colombia", "co", 7000),
		storetest.CountryCity("Johannesberg", "Germany", "de", 3914),
		storetest.CountryCity("Johannesburg", "South Africa", "za", 957441),
	)
	for _, tc := range []struct {
		text string
		want []string // name, as the alternate name matched, and edits
	}{
		{"chigaco", []string{"Chicago 2"}},
		// Two edits on a city 37 times larger outrank one on Palmer:
		// "palmero" is Palermo typed whole, misspelled.
		{"palmero", []string{"Palermo 2", "Palmer 1"}},
		{"chigac", nil}, // six letters get one edit, not two
		// A name typed in full: one edit at most, and none at all when
		// it names a place of TypedRightScore (issue 26).
		{"istanbul", []string{"Istanbul 0"}},
		{"marseille", []string{"Marseille 0"}},
		// A village that bears the typed name keeps no one from the
		// city misspelled: its prefix match is weak.
		{"johannesberg", []string{"Johannesburg 1", "Johannesberg 0"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			req := search.Request{Dataset: search.Large, Text: tc.text, Limit: 10, Fuzzy: true}
			if got := typoLines(t, svc, req); !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// The matches of one edit on small places do not crowd out one of two
// edits on a large one: the Service asks the store for the two-edit
// neighbourhood at once, and Score decides.
func TestTwoEditsCompeteWithAFullListOfOne(t *testing.T) {
	cities := []search.City{storetest.CountryCity("Palermo", "Italy", "it", 668405)}
	for i := range 2 * search.DefaultLimit {
		cities = append(cities, storetest.CountryCity(fmt.Sprintf("Palmer %c", 'A'+i), "United States", "us", int64(1000+i)))
	}
	svc, _ := mustService(t, cities...)
	req := search.Request{Dataset: search.Large, Text: "palmero", Limit: search.DefaultLimit, Fuzzy: true}
	got := typoLines(t, svc, req)
	if len(got) != search.DefaultLimit || got[0] != "Palermo 2" {
		t.Errorf("got %q, want Palermo with 2 edits first of %d", got, search.DefaultLimit)
	}
	// The places two edits away are searched within the request's
	// countries, as every other match.
	req.Countries = "us"
	if got := typoLines(t, svc, req); len(got) != search.DefaultLimit || slices.Contains(got, "Palermo 2") {
		t.Errorf("within the US: got %q, want %d Palmers and no Palermo", got, search.DefaultLimit)
	}
}

// typoLines returns the hits of req, each as its name, the alternate name
// it matched if any, and its edits.
func typoLines(t *testing.T, svc *search.Service, req search.Request) []string {
	t.Helper()
	res, err := svc.Find(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, 0, len(res.Hits))
	for _, h := range res.Hits {
		as := ""
		if h.Matched != nil {
			as = " as " + h.Matched.Name
		}
		lines = append(lines, fmt.Sprintf("%s%s %d", h.Name, as, h.Edits))
	}
	if len(lines) == 0 {
		return nil
	}
	return lines
}

// Prefix matches of hamlets that fill half the answer do not keep out the
// city one edit away that outranks them: typo matches that would only pad
// the list below the first half stay out. Nor does one town of some size
// among hamlets ("prais" beside Praisville): Paris is still what the
// person most likely meant. Only once half the answer is places of known
// population, one of some size (search.WeakFillScore), was the name typed
// right, and no typo match is looked for.
func TestWeakPrefixMatchesLetTheCityMeantAhead(t *testing.T) {
	cities := []search.City{
		storetest.CountryCity("Paris", "France", "fr", 2138551),
		storetest.CountryCity("Priais", "France", "fr", 0), // one edit, of no known population
	}
	hamlets := []string{"Prais 0", "Prais 0", "Prais 0", "Prais 0", "Prais 0", "Prais 0"}
	for _, country := range []string{"Angola", "Brazil", "France", "Peru", "Chile", "Panama"} {
		cities = append(cities, storetest.CountryCity("Prais", country, "", 0))
	}
	praisville := storetest.CountryCity("Praisville", "Canada", "ca", 20000)
	var towns []search.City
	for i, country := range []string{"Spain", "Italy", "Chile", "Peru"} {
		towns = append(towns, storetest.CountryCity(fmt.Sprintf("Prais %c", 'A'+i), country, "", 300))
	}
	for _, tc := range []struct {
		name   string
		cities []search.City
		want   []string
	}{
		{"hamlets only", cities, append([]string{"Paris 1"}, hamlets...)},
		{"a town among hamlets", append(slices.Clip(cities), praisville),
			append([]string{"Paris 1", "Praisville 0"}, hamlets...)},
		{"half the answer populated", append(append(slices.Clip(cities), praisville), towns...),
			append([]string{"Praisville 0", "Prais A 0", "Prais B 0", "Prais C 0", "Prais D 0"}, hamlets[:5]...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc, _ := mustService(t, tc.cities...)
			got := typoLines(t, svc, search.Request{Dataset: search.Large, Text: "prais", Limit: 10, Fuzzy: true})
			if !slices.Equal(got, tc.want) {
				t.Errorf("prais: got %q, want %q", got, tc.want)
			}
		})
	}
}

// Beside one town and hamlets of the name typed, a city one edit away is
// listed only when it is much the larger (search.TypoReach): "kapur" is
// Kanpur misspelled as likely as Kapurthala typed, "bosto" is Boston.
func TestTypoMatchesBesideATownAreWithinReach(t *testing.T) {
	for _, tc := range []struct {
		text   string
		cities []search.City
		want   []string
	}{
		{"kapur", []search.City{
			storetest.CountryCity("Kapurthala", "India", "in", 92667),
			storetest.CountryCity("Kanpur", "India", "in", 2823249),
		}, []string{"Kanpur 1", "Kapurthala 0"}},
		{"bosto", []search.City{
			storetest.CountryCity("Boston", "United States", "us", 675647),
			storetest.CountryCity("Rostov", "Russia", "ru", 1130305),
		}, []string{"Boston 0"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			hamlet := strings.ToUpper(tc.text[:1]) + tc.text[1:]
			want := tc.want
			for _, country := range []string{"Angola", "Brazil", "France", "Peru", "Chile"} {
				tc.cities = append(tc.cities, storetest.CountryCity(hamlet, country, "", 0))
				want = append(want, hamlet+" 0")
			}
			svc, _ := mustService(t, tc.cities...)
			got := typoLines(t, svc, search.Request{Dataset: search.Large, Text: tc.text, Limit: 10, Fuzzy: true})
			if !slices.Equal(got, want) {
				t.Errorf("got %q, want %q", got, want)
			}
		})
	}
}

// Above weak prefix matches, the typo matches are asked of the store for
// the cities of known population only (search.Query.Populated): a place
// of none would score 0 and never be kept. Not with a location bias,
// which lifts a hamlet near the person, nor when prefix matches are too
// few to be weak fill: then typo matches pad the list, of any size.
func TestWeakPrefixMatchesAskForPopulatedTypos(t *testing.T) {
	cities := []search.City{
		storetest.CountryCity("Paris", "France", "fr", 2138551),
		storetest.CountryCity("Priais", "France", "fr", 0),
		storetest.CountryCity("Prainha", "Brazil", "br", 0),
	}
	for _, country := range []string{"Angola", "Brazil", "France", "Peru", "Chile", "Panama"} {
		cities = append(cities, storetest.CountryCity("Prais", country, "", 0))
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	storetest.MustLoad(t, store, search.Large, cities...)
	var asked []search.Query
	svc := search.NewService(storetest.Wrap(store, func(_ context.Context, c storetest.Call) error {
		if c.Method == "FindTypos" {
			asked = append(asked, c.Query)
		}
		return nil
	}))
	for _, tc := range []struct {
		name      string
		req       search.Request
		populated bool
	}{
		{"weak prefix matches", search.Request{Text: "prais"}, true},
		{"with a location bias", search.Request{Text: "prais", Near: &search.Point{Lat: -8.8, Lon: 13.2}, BiasScale: 1}, false},
		{"too few prefix matches", search.Request{Text: "prain"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			req := tc.req
			req.Dataset, req.Limit, req.Fuzzy = search.Large, 10, true
			if _, err := svc.Find(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			if len(asked) == 0 {
				t.Fatal("no typo matches asked for")
			}
			for _, q := range asked {
				if q.Populated != tc.populated {
					t.Errorf("%q asked with Populated %t, want %t", q.Prefix, q.Populated, tc.populated)
				}
			}
		})
	}
}

// A one-edit match through an alternate name of a small place does not
// leave the two-edit walk out: it says little of what the person meant.
func TestAlternateNamesOneEditAwayLetTwoEditsCompete(t *testing.T) {
	boshnyakovo := storetest.CountryCity("Boshnyakovo", "Russia", "ru", 1491)
	boshnyakovo.AltNames = []string{"Nishisakovtan"}
	svc, _ := mustService(t, boshnyakovo, storetest.CountryCity("Kinshasa", "DR Congo", "cd", 7785965))
	got := typoLines(t, svc, search.Request{Dataset: search.Large, Text: "nishasa", Limit: 10, Fuzzy: true})
	if want := []string{"Kinshasa 2", "Boshnyakovo as Nishisakovtan 1"}; !slices.Equal(got, want) {
		t.Errorf("nishasa: got %q, want %q", got, want)
	}
}

// The well-known places two edits away are looked for after the two-edit
// walk too, whose answer one-edit matches of unknown population can fill
// before the places two edits away are reached.
func TestKnownPlacesTwoEditsAwayBesideAWalkOfTwo(t *testing.T) {
	cities := []search.City{
		storetest.CountryCity("Nanchang", "China", "cn", 1871351),
		storetest.CountryCity("Nanchong", "China", "cn", 7150000),
	}
	for i := range search.DefaultLimit - 1 {
		cities = append(cities, storetest.CountryCity(fmt.Sprintf("Nancheng %c", 'A'+i), "China", "cn", 0))
	}
	svc, _ := mustService(t, cities...)
	got := typoLines(t, svc, search.Request{Dataset: search.Large, Text: "nanncheng", Limit: search.DefaultLimit, Fuzzy: true})
	if len(got) < 2 || got[0] != "Nanchong 2" || got[1] != "Nanchang 2" {
		t.Errorf("nanncheng: got %q, want Nanchong and Nanchang first", got)
	}
}
