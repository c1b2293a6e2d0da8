package search_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
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
		{"two letters in another script", func(r *search.Request) { r.Text = "תל" }, "q", "Enter at least 3 letters", false},
		{"letters of another script that fold to nothing", func(r *search.Request) { r.Text = "ااا" }, "q", "Enter at least 3 letters", false},
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
		{"a typo match ranks among the prefix matches by its score: one edit on a large population before a prefix of a small one",
			search.Request{Dataset: search.Large, Text: "paros", Limit: 10, Fuzzy: true}, "paros",
			[]hit{{"Paris", search.Span{End: 5}, 1}, {"Paros", search.Span{End: 5}, 0}, {"Parisot", search.Span{End: 5}, 1}}},
		{"no typo matches when a prefix match is a place of TypedRightScore",
			search.Request{Dataset: search.Large, Text: "paris", Limit: 10, Fuzzy: true}, "paris",
			[]hit{{"Paris", search.Span{End: 5}, 0}, {"Parisot", search.Span{End: 5}, 0}}},
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

// The Service asks the store's typo search for one edit, then for two
// only when one finds too few.
func TestFindAsksTheStoresTypoSearch(t *testing.T) {
	_, store := mustService(t, append(serviceCities(),
		storetest.CountryCity("San Francisco", "United States", "us", 864816),
		storetest.CountryCity("Sanfrancisco", "Colombia", "co", 0))...)
	var asked []int
	svc := search.NewService(storetest.Wrap(store, func(_ context.Context, c storetest.Call) error {
		if c.Method == "FindTypos" {
			asked = append(asked, c.MaxEdits)
		}
		return nil
	}))
	res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: "san-fransisko", Limit: 10, Fuzzy: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Hits[0].Name != "San Francisco" || res.Hits[0].Edits != 2 {
		t.Errorf("hits %+v, want San Francisco with 2 edits", res.Hits)
	}
	// One edit finds nothing, so the Service asks again for two.
	if !slices.Equal(asked, []int{1, 2}) {
		t.Errorf("the store was asked for %v edits, want [1 2]", asked)
	}
	asked = nil
	if _, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: "zuirch", Limit: 10, Fuzzy: true}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(asked, []int{1}) { // six letters: one edit
		t.Errorf("the store was asked for %v edits, want [1]", asked)
	}
	// A text that matches a name as typed gets one edit at most, and a
	// place of some size among its matches none; a place of known
	// population one edit away leaves the two-edit walk out.
	for _, tc := range []struct {
		text string
		want []int
	}{
		{"sanfrancisc", []int{1}},      // a village's prefix: one edit, not two
		{"san francisco", nil},         // San Francisco, typed whole
		{"zurichx", []int{1}},          // one edit finds Zürich: the fewest typos win
		{"parisoq", []int{1, 2}},       // one edit finds only Parisot, of unknown population
		{"san-fransisko", []int{1, 2}}, // one edit finds nothing
	} {
		asked = nil
		if _, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: tc.text, Limit: 10, Fuzzy: true}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(asked, tc.want) {
			t.Errorf("%q: the store was asked for %v edits, want %v", tc.text, asked, tc.want)
		}
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

// geoCities are places to test qualifiers and location bias with.
func geoCities() []search.City {
	at := func(name, country, code, sub, region string, pop int64, lat, lon float64) search.City {
		c := storetest.CountryCity(name, country, code, pop)
		c.Subcountry, c.Region = sub, region
		c.Lat, c.Lon, c.HasLocation = lat, lon, true
		return c
	}
	return []search.City{
		at("Paris", "France", "fr", "Île-de-France", "", 2138551, 48.85341, 2.3488),
		at("Paris", "United States", "us", "Texas", "TX", 24171, 33.66094, -95.55551),
		at("Paras", "Panama", "pa", "Coclé", "", 100, 8.5, -80.3),
		at("London", "United Kingdom", "gb", "England", "", 7556900, 51.50853, -0.12574),
		at("London", "Canada", "ca", "Ontario", "ON", 346765, 42.98339, -81.23304),
		at("Springfield", "United States", "us", "Illinois", "IL", 116250, 39.80172, -89.64371),
		at("Springfield", "United States", "us", "Missouri", "MO", 159498, 37.21533, -93.29824),
		at("Springfield", "United States", "us", "Massachusetts", "MA", 153060, 42.10148, -72.58981),
		// Two edits from "springfield il": a typo match, were typos looked for.
		at("Springfield Gardens", "United States", "us", "New York", "NY", 0, 40.66, -73.76),
		at("Washington", "United States", "us", "District of Columbia", "DC", 601723, 38.89511, -77.03637),
		at("Washington Court House", "United States", "us", "Ohio", "OH", 14192, 39.53645, -83.43908),
		at("San José", "Costa Rica", "cr", "San José", "", 335007, 9.93333, -84.08333),
		at("San Jose", "United States", "us", "California", "CA", 945942, 37.33939, -121.89496),
		at("Santiago", "Chile", "cl", "Santiago Metropolitan", "", 4837295, -33.45694, -70.64827),
		at("San Bernardo", "Chile", "cl", "Santiago Metropolitan", "", 262990, -33.59217, -70.6996),
		at("San Antonio", "United States", "us", "Texas", "TX", 1327407, 29.42412, -98.49363),
		at("Santo Domingo", "Dominican Republic", "do", "Nacional", "", 2201941, 18.47186, -69.89232),
		at("Sanaa", "Yemen", "ye", "Sanaa", "", 1937451, 15.35472, 44.20667),
		at("Newtown", "United States", "us", "Pennsylvania", "PA", 0, 40.22927, -74.93683),
		at("New York City", "United States", "us", "New York", "NY", 8175133, 40.71427, -74.00597),
	}
}

func TestFindReadsQualifiers(t *testing.T) {
	svc, _ := mustService(t, geoCities()...)
	for _, tc := range []struct {
		text, wantQualifier string
		want                []string
	}{
		{"paris france", "country:fr", []string{"Paris (France)"}},
		{"paris, france", "country:fr", []string{"Paris (France)"}},
		{"paris fr", "country:fr", []string{"Paris (France)"}},
		{"paris tx", "region:tx", []string{"Paris (United States)"}},
		{"paris texas", "region:texas", []string{"Paris (United States)"}},
		{"london ca", "country:ca", []string{"London (Canada)"}},
		{"london on", "region:on", []string{"London (Canada)"}},
		{"san jose costa rica", "country:cr", []string{"San José (Costa Rica)"}},
		{"springfield il", "region:il", []string{"Springfield (United States)"}},
		{"springfield illinois", "region:illinois", []string{"Springfield (United States)"}},
		{"washington dc", "region:dc", []string{"Washington (United States)"}},
		// A whole match needs no qualifier: none is read.
		{"washington court", "", []string{"Washington Court House (United States)"}},
		// A qualifier that names no place leaves the city it follows,
		// typed right: no typo matches pad it.
		{"paris atlantis", "", []string{"Paris (France)", "Paris (United States)"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: tc.text, Limit: 10, Fuzzy: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.Name+" ("+h.Country+")")
			}
			if res.Qualifier != tc.wantQualifier || !slices.Equal(got, tc.want) {
				t.Errorf("qualifier %q, hits %q; want %q, %q", res.Qualifier, got, tc.wantQualifier, tc.want)
			}
		})
	}
}

func TestFindBiasedByLocation(t *testing.T) {
	svc, _ := mustService(t, geoCities()...)
	chicago := &search.Point{Lat: 41.85003, Lon: -87.65005}
	for _, tc := range []struct {
		name  string
		req   search.Request
		first string
	}{
		{"no location: population decides", search.Request{Text: "san"}, "Santiago"},
		{"in Chile, a Chilean city first", search.Request{Text: "san b", Near: &search.Point{Lat: -33.4, Lon: -70.6}}, "San Bernardo"},
		{"in Texas, the Texan Paris first", search.Request{Text: "paris", Near: &search.Point{Lat: 33.6, Lon: -95.5}}, "Paris (United States)"},
		{"near Springfield, Illinois", search.Request{Text: "spring", Near: &search.Point{Lat: 39.8, Lon: -89.6}}, "Springfield (Illinois)"},
		{"a big city 300 km away beats a hamlet next door", search.Request{Text: "new", Near: &search.Point{Lat: 40.229, Lon: -74.937}}, "New York City"},
		{"a scale of 0 is no bias", search.Request{Text: "spring", Near: chicago, BiasScale: 0}, "Springfield (Missouri)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Dataset, tc.req.Limit = search.Large, 10
			if tc.req.Near != nil && tc.name != "a scale of 0 is no bias" {
				tc.req.BiasScale = search.DefaultBiasScale
			}
			res, err := svc.Find(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 {
				t.Fatal("no hits")
			}
			h := res.Hits[0]
			got := h.Name
			switch {
			case strings.Contains(tc.first, "("+h.Country+")"):
				got += " (" + h.Country + ")"
			case strings.Contains(tc.first, "("+h.Subcountry+")"):
				got += " (" + h.Subcountry + ")"
			}
			if got != tc.first {
				t.Errorf("first hit %s (%s, %s), want %s", h.Name, h.Subcountry, h.Country, tc.first)
			}
			if tc.req.Near != nil && !h.HasDistance {
				t.Errorf("a hit near a point has no distance: %+v", h)
			}
		})
	}
}

func TestFindInBox(t *testing.T) {
	svc, _ := mustService(t, geoCities()...)
	res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: "san", Limit: 10,
		Box: &search.Box{MinLon: -75, MinLat: -40, MaxLon: -65, MaxLat: -30}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.Name)
	}
	if !slices.Equal(got, []string{"Santiago", "San Bernardo"}) {
		t.Errorf("hits in the box around Santiago: %q", got)
	}
	for _, bad := range []search.Request{
		{Box: &search.Box{MinLon: 10, MinLat: 0, MaxLon: 5, MaxLat: 1}},
		{Near: &search.Point{Lat: 91}},
		{Near: &search.Point{Lat: 0, Lon: 0}, BiasScale: 2},
	} {
		bad.Dataset, bad.Text, bad.Limit = search.Large, "san", 10
		if _, err := svc.Find(t.Context(), bad); !errors.Is(err, search.ErrInvalidQuery) {
			t.Errorf("%+v: err = %v, want ErrInvalidQuery", bad, err)
		}
	}
}

func TestFindLaterWords(t *testing.T) {
	svc, _ := mustService(t, append(geoCities(), storetest.CountryCity("York", "United Kingdom", "gb", 153717))...)
	res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: "york", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 2 || res.Hits[0].Name != "York" || res.Hits[1].Name != "New York City" ||
		res.Hits[1].Match != (search.Span{Start: 4, End: 8}) {
		t.Errorf("hits %+v: want York, then New York City with the span of York", res.Hits)
	}
}

// The same name, subcountry and country twice would read as one city
// twice: the better one is listed, and the list still fills up.
func TestFindListsEachLineOnce(t *testing.T) {
	tokyo := func(region string, pop int64) search.City {
		c := storetest.CountryCity("Tokyo", "Japan", "jp", pop)
		c.Region = region
		return c
	}
	var cities []search.City
	for i, r := range []string{"40", "41", "42", "43", "44"} {
		cities = append(cities, tokyo(r, int64(100-i)))
	}
	cities = append(cities, storetest.CountryCity("Tokyo Station", "Japan", "jp", 5), storetest.CountryCity("Tokyō", "Japan", "jp", 1))
	svc, _ := mustService(t, cities...)
	res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: "tokyo", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range res.Hits {
		got = append(got, h.Name+"/"+h.Region)
	}
	// Tokyō is a whole-name match of "tokyo" (1 × 10): before Tokyo Station (5).
	if want := []string{"Tokyo/40", "Tokyō/", "Tokyo Station/"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// A query in a script other than Latin finds names in its script first,
// their matched letters marked in the name, and else the Latin names its
// transliteration reaches; a Latin query never reaches the transliteration
// of a name in another script.
func TestFindAcrossScripts(t *testing.T) {
	with := func(c search.City, alts ...string) search.City {
		c.AltNames = alts
		return c
	}
	svc, _ := mustService(t,
		with(storetest.CountryCity("Moscow", "Russia", "ru", 10381222), "Moskva", "Μόσχα", "Москва"),
		with(storetest.CountryCity("London", "United Kingdom", "gb", 7556900), "Лондон"),
		with(storetest.CountryCity("Los Angeles", "United States", "us", 3971883), "लॉस एंजेलेस"),
		storetest.CountryCity("Lonar", "India", "in", 23416),
		storetest.CountryCity("Paris", "France", "fr", 2138551),
		with(storetest.CountryCity("Cairo", "Egypt", "eg", 7734614), "القاهرة"),
		storetest.CountryCity("Lhasa", "China", "cn", 118721),
		with(storetest.CountryCity("Tokyo", "Japan", "jp", 8336599), "東京"),
		with(storetest.CountryCity("Dongying", "China", "cn", 306450), "东营"),
	)
	for _, tc := range []struct {
		text, prefix string
		want         []string // name, as the alternate name matched, its marked letters
	}{
		{"Москв", "moskv", []string{"Moscow as Москва [0:5]"}},
		// The Greek "Μόσχα" ("moskha") matches as well, and its key sorts
		// first: a Cyrillic query shows the Cyrillic name.
		{"моск", "mosk", []string{"Moscow as Москва [0:4]"}},
		{"Μόσ", "mos", []string{"Moscow as Μόσχα [0:3]"}},
		// Names in other scripts reach each other: लॉस is "lons".
		{"Лон", "lon", []string{"London as Лондон [0:3]", "Los Angeles as लॉस एंजेलेस [0:2]"}},
		// No such name: the transliteration, as Latin letters would.
		{"Пари", "pari", []string{"Paris [0:4]"}},
		{"lons", "lons", nil},
		{"lonsenjeles", "lonsenjeles", nil},
		{"lon", "lon", []string{"London [0:3]", "Lonar [0:3]"}},
		// Four letters typed, though the alifs fold to nothing: "lq".
		{"القا", "lq", []string{"Cairo as القاهرة [0:3]"}},
		// No name in the script, and a transliteration too short for a
		// query in Latin letters: nothing, not Lhasa.
		{"اله", "lh", nil},
		// Two characters of a syllabic script get no typo matches:
		// Dongying ("dong-ying") is one edit from "dong-jing".
		{"東京", "dong-jing", []string{"Tokyo as 東京 [0:2]"}},
		// Six Cyrillic letters get one.
		{"Москвп", "moskvp", []string{"Moscow as Москва [0:6]"}},
	} {
		t.Run(tc.text, func(t *testing.T) {
			res, err := svc.Find(t.Context(), search.Request{Dataset: search.Large, Text: tc.text, Limit: 10, Fuzzy: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.Prefix != tc.prefix {
				t.Errorf("prefix %q, want %q", res.Prefix, tc.prefix)
			}
			var got []string
			for _, h := range res.Hits {
				s := h.Name
				if h.Matched != nil {
					s += " as " + h.Matched.Name + " " + spanString(h.Matched.Span)
				} else {
					s += " " + spanString(h.Match)
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func spanString(s search.Span) string {
	return "[" + strconv.Itoa(s.Start) + ":" + strconv.Itoa(s.End) + "]"
}

// Matches of the same Score, such as places of unknown population, are
// listed as CompareFound orders them: shorter keys first, then by key.
func TestFindBreaksScoreTiesByCompareFound(t *testing.T) {
	svc, _ := mustService(t,
		storetest.CountryCity("Parisotb", "France", "fr", 0),
		storetest.CountryCity("Parisota", "France", "fr", 0),
		storetest.CountryCity("Parisot", "France", "fr", 0),
		storetest.CountryCity("Parisotaa", "Italy", "it", 0),
	)
	for _, text := range []string{"pariso", "pariso "} {
		got := typoLines(t, svc, search.Request{Dataset: search.Large, Text: text, Limit: 10})
		if want := []string{"Parisot 0", "Parisota 0", "Parisotb 0", "Parisotaa 0"}; !slices.Equal(got, want) {
			t.Errorf("%q: got %q, want %q", text, got, want)
		}
	}
}

func TestFindAppendWritesFindsHitsAfterDst(t *testing.T) {
	cities := append(geoCities(), storetest.CountryCity("Moscow", "Russia", "ru", 10381222))
	cities[len(cities)-1].AltNames = []string{"Moskva", "Москва"}
	svc, _ := mustService(t, cities...)
	paris := &search.Point{Lat: 48.85, Lon: 2.35}
	// stale is what a slice reused from an earlier answer holds past its
	// length: none of it may show in the new hits.
	stale := search.Hit{City: search.City{Name: "Stale"}, Label: "Stale, Nowhere", Match: search.Span{End: 9},
		Matched: &search.NameMatch{Name: "Old"}, Edits: 2, Corrected: "stale", DistanceKm: 9, HasDistance: true}
	for _, tc := range []struct {
		name string
		req  search.Request
		room int // capacity after dst's one element
	}{
		{"prefix matches in the room there is", search.Request{Text: "san", Limit: 10, Fuzzy: true}, 10},
		{"prefix matches grow a slice too short", search.Request{Text: "san", Limit: 10, Fuzzy: true}, 1},
		{"typo matches and their corrections", search.Request{Text: "pariss", Limit: 10, Fuzzy: true}, 10},
		{"distances from a point", search.Request{Text: "par", Limit: 10, Near: paris, BiasScale: search.DefaultBiasScale}, 10},
		{"an alternate name matched", search.Request{Text: "москв", Limit: 10}, 10},
		{"a qualifier read", search.Request{Text: "springfield il", Limit: 10, Fuzzy: true}, 10},
		{"the words before one that names nothing", search.Request{Text: "paris atlantis", Limit: 10, Fuzzy: true}, 10},
		{"nothing found", search.Request{Text: "qqqq", Limit: 10}, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Dataset = search.Large
			want, err := svc.Find(t.Context(), tc.req)
			if err != nil {
				t.Fatal(err)
			}
			mem := make([]search.Hit, 1+tc.room)
			for i := range mem {
				mem[i] = stale
			}
			first := search.Hit{City: search.City{Name: "Kept"}, Label: "Kept, Here"}
			mem[0] = first
			got, err := svc.FindAppend(t.Context(), mem[:1], tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("FindAppend = %+v\nFind       = %+v", got, want)
			}
			if !reflect.DeepEqual(mem[0], first) {
				t.Errorf("dst's element became %+v", mem[0])
			}
			if inRoom := len(want.Hits) > 0 && len(want.Hits) <= tc.room; inRoom && &got.Hits[0] != &mem[1] {
				t.Errorf("%d hits with room for %d were not written into dst's memory", len(want.Hits), tc.room)
			}
		})
	}
}
