//go:build !race

package main

// The tests of this file measure the peak RSS of an import in a child
// process built from this test binary. Under the race detector that
// process costs several times the memory and ten times the time, which
// says nothing about the import, so they run in make test's second pass,
// without -race.

import (
	"os"
	"strings"
	"testing"
)

// maxRepeatRSS is the peak RSS an import of millions of copies of a few
// rows may reach: about what a small file costs, as memory follows the
// distinct cities.
const maxRepeatRSS = 100 << 20

// An import of millions of rows that repeat a few cities costs the memory
// of those cities, not of its rows: duplicates are merged as they arrive,
// in every format, and while rows wait for their region names or their
// enrichment. Each file
// is gzip members of 100,000 rows repeated, so that it costs next to
// nothing to build; before duplicates were merged, each took 300 MB or
// more.
func TestImportMemoryFollowsDistinctCities(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read a process's peak RSS")
	}
	const rows, member = 2_000_000, 100_000
	const tirana = "3183875\tTirana\tTirana\tTirana\t41.3275\t19.81889\tP\tPPLC\tAL\t\t50\t\t\t\t418495\t\t110\tEurope/Tirane\t2020-01-01\n"
	regions := writeFile(t, "world-cities.csv", "name,country,subcountry,geonameid\nTirana,Albania,Tirana,3183875\n")
	geonames := writeFile(t, "cities1000.txt", tirana)
	tests := []struct {
		name, dataset, header, row, want string
		args                             []string
	}{
		{"okfn", "small", "name,country,subcountry,geonameid\n", "Tirana,Albania,Tirana,3183875\n",
			"imported 1 of 2,000,000 rows into small (0 rejected, 1,999,999 duplicates)", nil},
		{"okfn with --geonames", "small", "name,country,subcountry,geonameid\n", "Tirana,Albania,Tirana,3183875\n",
			"imported 1 of 2,000,000 rows into small (0 rejected, 1,999,999 duplicates, 2,000,000 enriched from GeoNames (2,000,000 by id, 0 by name))",
			[]string{"--geonames", geonames}},
		{"GeoNames", "large", "", tirana, "imported 1 of 2,000,000 rows into large (0 rejected, 1,999,999 duplicates)", nil},
		{"GeoNames with region names", "large", "", tirana,
			"imported 1 of 2,000,000 rows into large (0 rejected, 1,999,999 duplicates, 1 with region names)", []string{"--region-names", regions}},
		{"MaxMind", "large", "Country,City,AccentCity,Region,Population,Latitude,Longitude\n", "al,tirana,Tirana,50,418495,41.3275,19.8188889\n",
			"imported 1 of 2,000,000 rows into large (0 rejected, 1,999,999 duplicates)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := mustWriteBomb(t, "repeated.gz", bombPart{tt.header, 1}, bombPart{strings.Repeat(tt.row, member), rows / member})
			args := append([]string{"import", "--dataset", tt.dataset, "--file", file, "--data-dir", t.TempDir(), "--log-level", "warn"}, tt.args...)
			stdout, stderr, code, rss := runChild(t, args...)
			t.Logf("peak RSS %.1f MB", float64(rss)/1e6)
			if code != 0 || !strings.HasPrefix(stdout, tt.want) {
				t.Errorf("exit %d, stdout %.300q, stderr %.300q; want exit 0 and %q", code, stdout, stderr, tt.want)
			}
			if rss <= 0 || rss > maxRepeatRSS {
				t.Errorf("peak RSS %d MB, want under %d MB", rss>>20, maxRepeatRSS>>20)
			}
		})
	}
}

// A --geonames dump of a million copies of one place costs the memory of
// that place: a place whose geonameid came earlier is skipped as it is
// read. Before, the dump took about 450 MB.
func TestImportMemoryFollowsDistinctGeoNamesPlaces(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read a process's peak RSS")
	}
	const place = "3183875\tTirana\tTirana\tTirana,Tiranë,Тирана\t41.3275\t19.81889\tP\tPPLC\tAL\t\t50\t\t\t\t418495\t\t110\tEurope/Tirane\t2020-01-01\n"
	dump := mustWriteBomb(t, "cities1000.txt.gz", bombPart{strings.Repeat(place, 100_000), 10})
	csv := writeFile(t, "cities.csv", "name,country,subcountry,geonameid\nTirana,Albania,Tirana,3183875\n")
	stdout, stderr, code, rss := runChild(t, "import", "--file", csv, "--geonames", dump, "--data-dir", t.TempDir(), "--log-level", "warn")
	t.Logf("peak RSS %.1f MB", float64(rss)/1e6)
	if want := "imported 1 of 1 rows into small (0 rejected, 0 duplicates, 1 enriched from GeoNames (1 by id, 0 by name))"; code != 0 || !strings.HasPrefix(stdout, want) {
		t.Errorf("exit %d, stdout %.300q, stderr %.300q; want exit 0 and %q", code, stdout, stderr, want)
	}
	if rss <= 0 || rss > maxRepeatRSS {
		t.Errorf("peak RSS %d MB, want under %d MB", rss>>20, maxRepeatRSS>>20)
	}
}
