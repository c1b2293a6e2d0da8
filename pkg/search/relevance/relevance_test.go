package relevance_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/relevance"
)

var update = flag.Bool("update", false, "record today's figures as the floors")

const (
	judgmentsFile        = "testdata/judgments.tsv"
	floorsFile           = "testdata/floors.json"
	validationFile       = "testdata/validation.tsv"
	validationFloorsFile = "testdata/validation-floors.json"
	keystrokeFloorsFile  = "testdata/keystrokes.json"
)

func TestJudgmentsFileReads(t *testing.T) {
	cases, err := relevance.LoadJudgments(judgmentsFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 300 {
		t.Errorf("%d judged queries, want at least 300", len(cases))
	}
	checkCases(t, cases)
}

// TestValidationFileReads checks the held-out cases: at least 100, none
// of them a query the judged cases hold already.
func TestValidationFileReads(t *testing.T) {
	cases, err := relevance.LoadJudgments(validationFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Errorf("%d validation queries, want at least 100", len(cases))
	}
	checkCases(t, cases)
	judged, err := relevance.LoadJudgments(judgmentsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range judged {
		for _, c := range cases {
			if strings.EqualFold(c.Query, j.Query) && c.ID == j.ID {
				t.Errorf("line %d: %q for #%d is judged already (judgments.tsv line %d)", c.Line, c.Query, c.ID, j.Line)
			}
		}
	}
}

// checkCases checks that no query is judged twice in a category, and that
// exactly the location cases have a location.
func checkCases(t *testing.T, cases []relevance.Case) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		if key := c.Category + "\t" + c.Query; c.Near == nil { // a location case may repeat a query elsewhere
			if seen[key] {
				t.Errorf("line %d: %s %q is judged twice", c.Line, c.Category, c.Query)
			}
			seen[key] = true
		}
		if (c.Category == "location") != (c.Near != nil) {
			t.Errorf("line %d: %s %q: only location cases have a location", c.Line, c.Category, c.Query)
		}
	}
}

func TestReadJudgments(t *testing.T) {
	tests := []struct {
		name, line string
		want       relevance.Case // Line is 2
		wantErr    string
	}{
		{name: "keeps a trailing space", line: "space\tnew \t5128581\t\t\tNew York City",
			want: relevance.Case{Category: "space", Query: "new ", ID: 5128581, Place: "New York City"}},
		{name: "reads a location", line: "location\tspring\t4250542\t39.8\t-89.64\tSpringfield",
			want: relevance.Case{Category: "location", Query: "spring", ID: 4250542, Near: &search.Point{Lat: 39.8, Lon: -89.64}, Place: "Springfield"}},
		{name: "refuses a missing field", line: "prefix\tlon\t2643743\t\t", wantErr: "5 fields"},
		{name: "refuses an id that is no number", line: "prefix\tlon\tLondon\t\t\tLondon", wantErr: "not a GeoNames id"},
		{name: "refuses id 0", line: "prefix\tlon\t0\t\t\tLondon", wantErr: "not a GeoNames id"},
		{name: "refuses half a location", line: "location\tlon\t1\t42\t\tLondon", wantErr: "both lat and lon"},
		{name: "refuses a location off the globe", line: "location\tlon\t1\t95\t0\tLondon", wantErr: "invalid location"},
		{name: "refuses a blank query", line: "prefix\t \t1\t\t\tLondon", wantErr: "empty"},
		{name: "refuses the name of the overall line", line: "all\tlon\t1\t\t\tLondon", wantErr: "every case"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cases, err := relevance.ReadJudgments(strings.NewReader("# a comment\n" + tt.line + "\n\n"))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "line 2") {
					t.Fatalf("error %v, want one about line 2 that says %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.want.Line = 2
			if len(cases) != 1 || !sameCase(cases[0], tt.want) {
				t.Fatalf("got %+v, want %+v", cases, tt.want)
			}
		})
	}
}

func sameCase(a, b relevance.Case) bool {
	near := (a.Near == nil && b.Near == nil) || (a.Near != nil && b.Near != nil && *a.Near == *b.Near)
	a.Near, b.Near = nil, nil
	return near && a == b
}

// cities of a made-up dataset where population order and the ranking
// disagree: a small exact "Par", an alternate name, two places of one id.
var cities = []search.City{
	{ID: 1, Name: "Par", Slug: "par", Country: "United Kingdom", Population: 1600},
	{ID: 2, Name: "Paris", Slug: "paris", Country: "France", Population: 2_100_000},
	{ID: 3, Name: "Parma", Slug: "parma", Country: "Italy", Population: 175_000, AltNames: []string{"Parme", "Πάρμα"}},
	{ID: 4, Name: "Köln", Slug: "koln", Country: "Germany", Population: 960_000, AltNames: []string{"Cologne"}},
	{ID: 2, Name: "Paris", Slug: "paris", Country: "France", Subcountry: "Île-de-France", Population: 2_100_000},
}

func TestBaselineOrdersByPopulation(t *testing.T) {
	b := relevance.NewBaseline(cities)
	tests := []struct {
		query string
		want  []uint32
	}{
		{"par", []uint32{2, 3, 1}}, // each id once, however many rows
		{"Par ", []uint32{2, 3, 1}},
		{"parme", []uint32{3}},
		{"colo", []uint32{4}},
		{"πάρμ", []uint32{3}}, // by its transliteration, "parm"
		{"lon", nil},
	}
	for _, tt := range tests {
		var got []uint32
		for _, c := range b.Top(tt.query, 10) {
			got = append(got, c.ID)
		}
		if !equalIDs(got, tt.want) {
			t.Errorf("Top(%q) = %v, want %v", tt.query, got, tt.want)
		}
	}
	if got := b.Top("par", 2); len(got) != 2 {
		t.Errorf("Top(par, 2) has %d cities", len(got))
	}
	if !b.Has(4) || b.Has(5) {
		t.Error("Has(4) should be true and Has(5) false")
	}
}

func equalIDs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReportFiguresAndFloors(t *testing.T) {
	r := relevance.Report{Dataset: search.Small, Outcomes: []relevance.Outcome{
		{Case: relevance.Case{Category: "prefix"}, Rank: 1, BaselineRank: 2},
		{Case: relevance.Case{Category: "prefix"}, Rank: 4, BaselineRank: 0},
		{Case: relevance.Case{Category: "typo"}, Rank: 0, BaselineRank: 1},
	}}
	want := []relevance.CategoryFigures{
		{Category: "prefix", Find: relevance.Figures{Cases: 2, Hit1: 0.5, Hit5: 1, MRR: 0.625}, Baseline: relevance.Figures{Cases: 2, Hit1: 0, Hit5: 0.5, MRR: 0.25}},
		{Category: "typo", Find: relevance.Figures{Cases: 1}, Baseline: relevance.Figures{Cases: 1, Hit1: 1, Hit5: 1, MRR: 1}},
		{Category: "all", Find: relevance.Figures{Cases: 3, Hit1: 1.0 / 3, Hit5: 2.0 / 3, MRR: 1.25 / 3}, Baseline: relevance.Figures{Cases: 3, Hit1: 1.0 / 3, Hit5: 2.0 / 3, MRR: 1.5 / 3}},
	}
	got := r.Categories()
	if len(got) != len(want) {
		t.Fatalf("categories %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("category %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if f := r.Failures(); len(f) != 2 || f[0].Rank != 4 || f[1].Rank != 0 {
		t.Errorf("failures %+v, want the ranks 4 and 0", f)
	}

	path := filepath.Join(t.TempDir(), "floors.json")
	if err := relevance.WriteFloors(path, []relevance.Report{r}); err != nil {
		t.Fatal(err)
	}
	floors, err := relevance.ReadFloors(path)
	if err != nil {
		t.Fatal(err)
	}
	if drops := floors.Check(&r); len(drops) != 0 {
		t.Errorf("the figures just recorded dropped: %v", drops)
	}
	worse := r
	worse.Outcomes = append([]relevance.Outcome(nil), r.Outcomes...)
	worse.Outcomes[1].Rank = 6 // prefix: hit@5 and MRR drop, hit@1 holds
	worse.Outcomes = append(worse.Outcomes, relevance.Outcome{Case: relevance.Case{Category: "space"}, Rank: 1})
	joined := strings.Join(floors.Check(&worse), "\n")
	for _, s := range []string{"small prefix: hit@5 0.5000, below its floor 1.0000", "small prefix: MRR 0.5833, below its floor 0.6250", "small space: no floor recorded"} {
		if !strings.Contains(joined, s) {
			t.Errorf("drops %q, want one saying %q", joined, s)
		}
	}
	if strings.Contains(joined, "prefix: hit@1") {
		t.Errorf("drops %q name prefix hit@1, which held", joined)
	}
}

func TestKeystrokeFiguresAndFloors(t *testing.T) {
	k := relevance.Keystrokes{Dataset: search.Large, Places: []relevance.Typed{
		{City: search.City{ID: 1, Name: "Chengdu"}, Find: 6, Baseline: 5},
		{City: search.City{ID: 2, Name: "Paris"}, Find: 3, Baseline: 4},
		{City: search.City{ID: 3, Name: "Lima"}, Find: 3, Baseline: 3},
		{City: search.City{ID: 4, Name: "Zagreb"}, Find: 7, Baseline: 3}, // never first
	}}
	want := relevance.KeystrokeFigures{Places: 4, Later: 2, Sooner: 1, Mean: 4.75, BaselineMean: 3.75}
	if got := k.Figures(); got != want {
		t.Errorf("figures %+v, want %+v", got, want)
	}
	if later := k.Later(); len(later) != 2 || later[0].City.ID != 4 || later[1].City.ID != 1 {
		t.Errorf("later %+v, want Zagreb (4 letters lost) then Chengdu", later)
	}
	var out strings.Builder
	if err := k.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"later than population order 2 (and 0 behind places of about their size), sooner 1", `"Zagreb…" after 7 letters, "Zag" in population order`} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report %q, want it to say %q", out.String(), s)
		}
	}

	path := filepath.Join(t.TempDir(), "keystrokes.json")
	if err := relevance.WriteKeystrokeFloors(path, []relevance.Keystrokes{k}); err != nil {
		t.Fatal(err)
	}
	floors, err := relevance.ReadKeystrokeFloors(path)
	if err != nil {
		t.Fatal(err)
	}
	if drops := floors.Check(&k); len(drops) != 0 {
		t.Errorf("the figures just recorded dropped: %v", drops)
	}
	worse := relevance.Keystrokes{Dataset: search.Large, Places: append([]relevance.Typed(nil), k.Places...)}
	worse.Places[2].Find = 4 // Lima: one more later, and a higher mean
	joined := strings.Join(floors.Check(&worse), "\n")
	for _, s := range []string{"3 places later than population order, above the floor of 2", "5.0000 letters on average, above the floor of 4.7500"} {
		if !strings.Contains(joined, s) {
			t.Errorf("drops %q, want one saying %q", joined, s)
		}
	}
	if drops := floors.Check(&relevance.Keystrokes{Dataset: search.Small}); len(drops) != 1 || !strings.Contains(drops[0], "no floor") {
		t.Errorf("drops %v for a dataset without floors, want one saying so", drops)
	}
}

// TestKeystrokesCountTiesApart checks that a place that waits only behind
// places of about its size is counted apart, listed as tied, and still
// held to the floor of all the places that wait.
func TestKeystrokesCountTiesApart(t *testing.T) {
	k := relevance.Keystrokes{Dataset: search.Large, Places: []relevance.Typed{
		{City: search.City{ID: 1, Name: "Nagpur", Population: 2_228_018}, Find: 4, Baseline: 3, Tied: true,
			Instead: search.City{ID: 2, Name: "Nagoya", Population: 2_191_279}},
		{City: search.City{ID: 3, Name: "Durgapur", Population: 518_872}, Find: 5, Baseline: 4,
			Instead: search.City{ID: 4, Name: "Durg", Population: 255_283}},
	}}
	if got, want := k.Figures(), (relevance.KeystrokeFigures{Places: 2, Later: 1, Tied: 1, Mean: 4.5, BaselineMean: 3.5}); got != want {
		t.Errorf("figures %+v, want %+v", got, want)
	}
	var out strings.Builder
	if err := k.Write(&out); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"later than population order 1 (and 1 behind places of about their size)", "first Nagoya,  #2 (98% of its size) (tied)", "first Durg,  #4 (49% of its size)\n"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("report %q, want it to say %q", out.String(), s)
		}
	}
	floors := relevance.KeystrokeFloors{search.Large: {Places: 2, Later: 1, Tied: 0, Mean: 4.5}}
	if joined := strings.Join(floors.Check(&k), "\n"); !strings.Contains(joined, "2 places later than population order, tied ones included, above the floor of 1") {
		t.Errorf("drops %q, want one for the tied place above the floor", joined)
	}
}

func TestReadSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cities.txt")
	rows := "6618983\tZagreb - Centar\tZagreb - Centar\t\t45.81\t15.97\tP\tPPLX\tHR\t\t21\t\t\t\t800000\t\t\tEurope/Zagreb\t2019-09-05\n" +
		"3186886\tZagreb\tZagreb\tZagrabia\t45.81\t15.97\tP\tPPLC\tHR\t\t21\t\t\t\t698966\t\t158\tEurope/Zagreb\t2019-09-05\n"
	if err := os.WriteFile(path, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	sections, err := relevance.ReadSections(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(sections) != 1 || !sections[6618983] {
		t.Errorf("sections %v, want Zagreb - Centar (#6618983) alone", sections)
	}
	other := filepath.Join(t.TempDir(), "cities.csv")
	if err := os.WriteFile(other, []byte("name,country,subcountry,geonameid\nZagreb,Croatia,Zagreb,3186886\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if sections, err := relevance.ReadSections(other); err != nil || len(sections) != 0 {
		t.Errorf("sections %v, %v for an okfn CSV, want none and no error", sections, err)
	}
}
