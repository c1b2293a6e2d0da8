package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// placesData imports a small MaxMind file (no ids: every city gets a
// derived one) as the large dataset and returns the data directory.
func placesData(t *testing.T) string {
	t.Helper()
	file := writeFile(t, "cities.txt", "Country,City,AccentCity,Region,Population,Latitude,Longitude\n"+
		"fr,paris,Paris,A8,2110694,48.866667,2.333333\n"+
		"fr,paris 04,Paris 04,A8,28000,48.8534,2.3565\n"+
		"fr,saint-denis,Saint-Denis,A8,106785,48.93564,2.35387\n"+
		"fr,lyon,Lyon,B9,463700,45.75,4.85\n")
	dir := t.TempDir()
	mustRunCLI(t, "import", "--dataset", "large", "--file", file, "--data-dir", dir)
	return dir
}

// idOf finds the id of the first city that query gives for text.
func idOf(t *testing.T, dir, text string) uint32 {
	t.Helper()
	var hits []search.Hit
	if err := json.Unmarshal([]byte(mustRunCLI(t, "query", text, "--dataset", "large", "--data-dir", dir, "--json", "--limit", "1")), &hits); err != nil || len(hits) != 1 {
		t.Fatalf("query %s --json: %v, %d hits", text, err, len(hits))
	}
	return hits[0].ID
}

func TestShowPrintsTheCityOfAnID(t *testing.T) {
	dir := placesData(t)
	id := idOf(t, dir, "lyon")
	if id < search.DerivedIDBase {
		t.Fatalf("a MaxMind row's id is %d, want a derived id", id)
	}
	ids := strconv.FormatUint(uint64(id), 10)
	got := mustRunCLI(t, "show", ids, "--dataset", "large", "--data-dir", dir)
	want := "" +
		"NAME  COUNTRY  POPULATION  LAT,LON             ID\n" +
		"Lyon  France      463,700  45.75,4.85  " + ids + "\n"
	if got != want {
		t.Errorf("show printed\n%s\nwant\n%s", got, want)
	}
	got = mustRunCLI(t, "show", ids, "--dataset", "large", "--data-dir", dir, "--json")
	want = `{"name":"Lyon","label":"Lyon","slug":"lyon","country":"France","country_code":"fr","region":"B9","population":463700,"lat":45.75,"lon":4.85,"id":` + ids + "}\n"
	if got != want {
		t.Errorf("show --json printed\n%s\nwant\n%s", got, want)
	}
	// The same file imported again: the same id.
	mustRunCLI(t, "import", "--dataset", "large", "--file", writeFile(t, "again.txt", "Country,City,AccentCity,Region,Population,Latitude,Longitude\n"+
		"fr,lyon,Lyon,B9,463700,45.75,4.85\n"), "--data-dir", dir, "--allow-shrink")
	if again := idOf(t, dir, "lyon"); again != id {
		t.Errorf("Lyon's id after another import of its row: %d, was %d", again, id)
	}
}

func TestShowAndNearestRefuseWhatTheyCannotAnswer(t *testing.T) {
	dir := placesData(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "12", "--dataset", "large"}, "no city has id 12 in dataset large"},
		{[]string{"show", "0", "--dataset", "large"}, `invalid ID "0": use a positive whole number`},
		{[]string{"show", "paris", "--dataset", "large"}, `invalid ID "paris"`},
		{[]string{"nearest", "91,2", "--dataset", "large"}, `invalid LAT,LON "91,2"`},
		{[]string{"nearest", "48.85", "--dataset", "large"}, `invalid LAT,LON "48.85"`},
		{[]string{"nearest", "48.85,2.35", "--limit", "0", "--dataset", "large"}, "invalid --limit 0"},
		{[]string{"nearest", "48.85,2.35", "--radius-km", "0", "--dataset", "large"}, "invalid --radius-km 0"},
		{[]string{"nearest", "48.85,2.35"}, "import"}, // the small dataset was never imported: the message says how to
	} {
		_, _, err := runCLI(t, append(tc.args, "--data-dir", dir)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("cityfinder %s: %v; want an error saying %q", strings.Join(tc.args, " "), err, tc.want)
		}
	}
}

func TestNearestNamesTheCityFirst(t *testing.T) {
	dir := placesData(t)
	got := mustRunCLI(t, "nearest", "48.8544,2.36", "--limit", "2", "--dataset", "large", "--data-dir", dir)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME ") || !strings.Contains(lines[0], "DISTANCE") ||
		!strings.HasPrefix(lines[1], "Paris  ") || !strings.Contains(lines[1], "2.4 km") || !strings.HasPrefix(lines[2], "Paris 04") {
		t.Errorf("nearest printed\n%s\nwant Paris, then Paris 04, with their distances", got)
	}
	got = mustRunCLI(t, "nearest", "48.93,2.355", "--limit", "1", "--dataset", "large", "--data-dir", dir, "--json")
	var hits []search.Hit
	if err := json.Unmarshal([]byte(got), &hits); err != nil || len(hits) != 1 || hits[0].Name != "Saint-Denis" || !hits[0].HasDistance {
		t.Errorf("nearest --json printed %s, want Saint-Denis with its distance", got)
	}
	// A point that starts with a minus is the point, not flags.
	if got := mustRunCLI(t, "nearest", "-60,-100", "--dataset", "large", "--data-dir", dir); got != "no cities within 100 km of -60,-100\n" {
		t.Errorf("nearest at sea printed %q", got)
	}
}
