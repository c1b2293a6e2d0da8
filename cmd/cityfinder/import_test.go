package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// strayQuoteCSV is the okfn file with a stray quote on its fourth line,
// cut to a few rows.
func strayQuoteCSV(t *testing.T) string {
	t.Helper()
	full := shareddata.Path(t, "world-cities.csv")
	data := mustReadFile(t, full)
	lines := strings.Split(string(data), "\n")
	bad := append(lines[:3:3], `"Bad Town,France,Ile,123`)
	for _, l := range lines[3:] {
		if len(bad) == 9 {
			break
		}
		if !strings.Contains(l, `"`) {
			bad = append(bad, l)
		}
	}
	return writeFile(t, "bad.csv", strings.Join(bad, "\n")+"\n")
}

// An import that would replace the full okfn dataset with a handful of
// rows is refused and the old dataset keeps answering, unless
// --allow-shrink (or its variable, or its key) says it is intended.
func TestImportRefusesToShrink(t *testing.T) {
	full := shareddata.Path(t, "world-cities.csv")
	bad := strayQuoteCSV(t)
	allowed := writeFile(t, "allow.yaml", "import:\n  allow_shrink: true\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--allow-shrink"}},
		{"environment", map[string]string{"CITYFINDER_ALLOW_SHRINK": "true"}, nil},
		{"config file", nil, []string{"--config", allowed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := mustRunCLI(t, "import", "--file", full, "--data-dir", dir)
			if !strings.HasPrefix(out, "imported 33,886 of 34,032 rows") {
				t.Fatalf("the full import: %q", out)
			}
			_, errOut, err := runCLI(t, "import", "--file", bad, "--data-dir", dir)
			want := "refused to replace the 33886 cities of small with 7: fewer than half, and 1 of the 8 rows were rejected (12.5%, more than 1%); small keeps its 33886 cities (if that is intended, import again with --allow-shrink)"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("import of the cut file: err = %v, want %q", err, want)
			}
			if !strings.Contains(errOut, "line 4") {
				t.Errorf("stderr %q does not name the bad line 4", errOut)
			}
			if got := mustRunCLI(t, "query", "seoul", "--data-dir", dir); !strings.Contains(got, "Seoul") {
				t.Errorf("after the refused import, query seoul = %q, want the old dataset", got)
			}

			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out = mustRunCLI(t, append([]string{"import", "--file", bad, "--data-dir", dir}, tc.args...)...)
			if !strings.HasPrefix(out, "imported 7 of 8 rows into small (1 rejected") {
				t.Errorf("import allowed to shrink: %q", out)
			}
			if got := mustRunCLI(t, "query", "seoul", "--data-dir", dir, "--json", "--fuzzy=false"); got != "[]\n" {
				t.Errorf("after the allowed import, query seoul = %q, want nothing", got)
			}
		})
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// firstFor is a query prefix and the city that must come first for it.
type firstFor struct{ prefix, first string }

// assertEnriched checks the summary of an import of the okfn file with
// --geonames, and the first city of each query of the dataset in dir.
func assertEnriched(t *testing.T, out, dir, enriched string, want []firstFor) {
	t.Helper()
	if !strings.HasPrefix(out, "imported 33,886 of 34,032 rows into small (0 rejected, 146 duplicates, ") || !strings.Contains(out, enriched) {
		t.Errorf("summary %q, want it to count the enriched rows (%q)", out, enriched)
	}
	for _, q := range want {
		if got := strings.Fields(firstRow(mustRunCLI(t, "query", q.prefix, "--data-dir", dir, "--limit", "1"))); len(got) == 0 || !strings.HasPrefix(strings.Join(got, " "), q.first+" ") {
			t.Errorf("query %s = %q, want %s first", q.prefix, got, q.first)
		}
	}
}

// --geonames completes the okfn rows with GeoNames places, so that London
// comes first for "lon": the whole dump through the flag, which is the
// import of the served data's small dataset (one import of the whole dump
// is what takes time).
func TestImportEnrichesWithTheWholeGeoNamesDump(t *testing.T) {
	t.Parallel()
	assertEnriched(t, servedSummary(t, search.Small), servedData(t), ", 25,535 enriched from GeoNames (25,272 by id, 263 by name)) in ",
		[]firstFor{{"lon", "London"}, {"par", "Paris"}, {"mos", "Moscow"}, {"tok", "Tokyo"}, {"new", "New York City"}})
}

// The variable and the key of --geonames work as the flag does; they name
// a dump of three German cities.
func TestImportEnrichesWithGeoNames(t *testing.T) {
	csv := shareddata.Path(t, "world-cities.csv")
	three := writeFile(t, "cities500.zip", string(geonamesZip(t)))
	config := writeFile(t, "geonames.yaml", "import:\n  geonames: "+three+"\n")
	for _, tc := range []struct {
		name     string
		env      map[string]string
		args     []string
		enriched string
		want     []firstFor
	}{
		{"environment", map[string]string{"CITYFINDER_GEONAMES": three}, nil, ", 3 enriched from GeoNames (3 by id, 0 by name)) in ", []firstFor{{"cologne", "Köln"}}},
		{"config file", nil, []string{"--config", config}, ", 3 enriched from GeoNames (3 by id, 0 by name)) in ", []firstFor{{"cologne", "Köln"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			out := mustRunCLI(t, append([]string{"import", "--file", csv, "--data-dir", dir}, tc.args...)...)
			assertEnriched(t, out, dir, tc.enriched, tc.want)
		})
	}
}

// A GeoNames file that cannot be read fails the import with a message
// naming it, and the dataset keeps its content.
func TestImportWithBadGeoNamesKeepsTheDataset(t *testing.T) {
	t.Parallel()
	csv := shareddata.Path(t, "world-cities.csv")
	gz := mustReadFile(t, shareddata.Path(t, "geonames-cities1000.txt.gz"))
	dir := t.TempDir()
	mustRunCLI(t, "import", "--file", csv, "--data-dir", dir)
	before := mustRunCLI(t, "query", "lon", "--data-dir", dir)
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(t.TempDir(), "cities1000.txt"), "no such file"},
		{"the okfn csv", csv, "want a GeoNames row"},
		{"a truncated gzip", writeFile(t, "cities1000.txt.gz", string(gz[:len(gz)/20])), "unexpected EOF"}, // 6,129 rows, then cut
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, "import", "--file", csv, "--data-dir", dir, "--geonames", tc.path)
			if err == nil || !strings.Contains(err.Error(), "--geonames: GeoNames file "+tc.path+": ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, tc.path, tc.want)
			}
			if got := mustRunCLI(t, "query", "lon", "--data-dir", dir); got != before {
				t.Errorf("after the failed import, query lon = %q, want %q", got, before)
			}
		})
	}
}

// A GeoNames file that cannot be opened is named the way it was given:
// the flag, the variable, or the key in the config file.
func TestImportNamesTheGeoNamesSettingAsGiven(t *testing.T) {
	csv := writeFile(t, "cities.csv", "name,country,subcountry,geonameid\nParis,France,Ile-de-France,2988507\n")
	missing := filepath.Join(t.TempDir(), "cities1000.txt")
	config := writeFile(t, "c.yaml", "import:\n  geonames: "+missing+"\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"flag", nil, []string{"--geonames", missing}, "--geonames: "},
		{"environment", map[string]string{"CITYFINDER_GEONAMES": missing}, nil, "CITYFINDER_GEONAMES: "},
		{"config file", nil, []string{"--config", config}, "import.geonames in " + config + ": "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			_, _, err := runCLI(t, append([]string{"import", "--file", csv, "--data-dir", t.TempDir()}, tc.args...)...)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !strings.Contains(err.Error(), missing) {
				t.Errorf("err = %v, want one that starts %q and names %s", err, tc.want, missing)
			}
		})
	}
}

// geonamesZip is a GeoNames dump of three places in a zip archive, as
// GeoNames publishes cities500.zip.
func geonamesZip(t *testing.T) []byte {
	t.Helper()
	rows := []string{
		"2886242\tKöln\tKoeln\tCologne,Colonia,Кёльн\t50.93333\t6.95\tP\tPPLA2\tDE\t\t07\t053\t05315\t05315000\t963395\t\t58\tEurope/Berlin\t2013-03-06",
		"2950159\tBerlin\tBerlin\tBerlino,Berlín\t52.52437\t13.41053\tP\tPPLC\tDE\t\t16\t00\t11000\t11000000\t3426354\t74\t43\tEurope/Berlin\t2012-09-19",
		"2867714\tMünchen\tMuenchen\tMunich,Monaco di Baviera\t48.13743\t11.57549\tP\tPPLA\tDE\t\t02\t091\t09162\t09162000\t1260391\t\t524\tEurope/Berlin\t2011-12-22",
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create("cities500.txt")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, strings.Join(rows, "\n")+"\n")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Without --file, the large dataset is GeoNames' cities500.zip, downloaded
// once into the downloads of --data-dir, whatever the working directory,
// and read with its alternate names; here from a loopback server standing
// in for GeoNames.
func TestImportLargeDownloadsGeoNames(t *testing.T) {
	archive := geonamesZip(t)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.URL.Path != "/export/dump/cities500.zip" {
			http.NotFound(w, r)
			return
		}
		w.Write(archive)
	}))
	defer srv.Close()
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	source := srv.URL + "/export/dump/cities500.zip"

	out := mustRunCLI(t, "import", "--dataset", "large", "--data-dir", dir, "--source", source)
	if !strings.HasPrefix(out, "imported 3 of 3 rows into large (0 rejected, 0 duplicates) in ") {
		t.Errorf("summary %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "downloads", "cities500.zip")); err != nil {
		t.Errorf("no local copy of the download: %v", err)
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("the download left %d files in the working directory", len(entries))
	}
	if got := firstRow(mustRunCLI(t, "query", "munc", "--dataset", "large", "--data-dir", dir)); !strings.HasPrefix(got, "München") {
		t.Errorf("query munc = %q, want München", got)
	}

	// The local copy serves the next import.
	mustRunCLI(t, "import", "--dataset", "large", "--data-dir", dir, "--source", source)
	if n := requests.Load(); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}

	// --download-dir puts it elsewhere; a URL as --file is downloaded too.
	elsewhere := filepath.Join(t.TempDir(), "cache")
	mustRunCLI(t, "import", "--dataset", "large", "--data-dir", dir, "--download-dir", elsewhere, "--file", source)
	if _, err := os.Stat(filepath.Join(elsewhere, "cities500.zip")); err != nil || requests.Load() != 2 {
		t.Errorf("no download into --download-dir (%d downloads): %v", requests.Load(), err)
	}
}

// Offline, the download fails naming the URL and --file, and leaves
// nothing behind.
func TestImportLargeOffline(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/export/dump/cities1000.zip"
	srv.Close() // connections are refused from now on
	dir := t.TempDir()
	_, _, err := runCLI(t, "import", "--dataset", "large", "--data-dir", dir, "--source", url)
	if err == nil || !strings.Contains(err.Error(), "download "+url) || !strings.Contains(err.Error(), "--file") {
		t.Errorf("err = %v, want one naming %s and --file", err, url)
	}
	if _, err := os.Stat(filepath.Join(dir, "downloads")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the failed download left its directory behind: %v", err)
	}
}

func TestLargeSources(t *testing.T) {
	for _, tc := range []struct {
		source, url string
	}{
		{"cities500", "https://download.geonames.org/export/dump/cities500.zip"},
		{"allCountries", "https://download.geonames.org/export/dump/allCountries.zip"},
		{"https://mirror.example/geonames/cities5000.zip", "https://mirror.example/geonames/cities5000.zip"},
	} {
		if url := defaultSource(search.Large, tc.source); url != tc.url {
			t.Errorf("source %s: %s, want %s", tc.source, url, tc.url)
		}
	}
	for _, bad := range []string{"cities100", "ftp://example.com/cities500.zip", "https://example.com", "https://example.com/"} {
		_, _, err := runCLI(t, "import", "--dataset", "large", "--data-dir", t.TempDir(), "--source", bad)
		if err == nil || !strings.Contains(err.Error(), "invalid --source") {
			t.Errorf("--source %s: err = %v, want it refused", bad, err)
		}
	}
}

// --file is read in the format its first line shows, whatever its name.
func TestImportLargeFileFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// The real file's first 99 rows, gzipped as the 100k sample is (whose
	// import took 9 s of make test under the race detector).
	sample := mustReadFile(t, shareddata.Path(t, "worldcitiespop-sample.txt"))
	maxmind := mustWriteBomb(t, "worldcitiespop.txt.gz", bombPart{string(sample), 1})
	if out := mustRunCLI(t, "import", "--dataset", "large", "--file", maxmind, "--data-dir", dir); !strings.HasPrefix(out, "imported 99 of 99 rows into large") {
		t.Errorf("MaxMind file: %q", out)
	}
	renamed := writeFile(t, "cities.dat", string(geonamesZip(t)))
	out := mustRunCLI(t, "import", "--dataset", "large", "--file", renamed, "--data-dir", dir, "--allow-shrink")
	if !strings.HasPrefix(out, "imported 3 of 3 rows into large") {
		t.Errorf("GeoNames zip named cities.dat: %q", out)
	}
}

// firstRow returns the first city of query's table, after its header.
func firstRow(table string) string {
	rows := strings.SplitN(table, "\n", 3)
	if len(rows) < 2 {
		return ""
	}
	return rows[1]
}

// The malformed rows of a --geonames dump are reported as the main file's
// are, however few: the count and the first line numbers on stderr, under
// the dump's name. Two bad rows in 302 are below the 1 % that fails it.
func TestImportReportsMalformedGeoNamesRows(t *testing.T) {
	var dump strings.Builder
	for i := range 300 {
		if i == 10 || i == 200 {
			dump.WriteString("not\ta\tGeoNames\trow\n")
		}
		fmt.Fprintf(&dump, "%d\tTown %d\tTown %d\t\t41.3\t19.8\tP\tPPL\tAL\t\t50\t\t\t\t%d\t\t\tEurope/Tirane\t2020-01-01\n", 100+i, i, i, 1000+i)
	}
	geonames := writeFile(t, "cities1000.txt", dump.String())
	csv := writeFile(t, "cities.csv", "name,country,subcountry,geonameid\nTown 1,Albania,Tirana,101\nTown 2,Albania,Tirana,102\n")
	out, errOut, err := runCLI(t, "import", "--file", csv, "--data-dir", t.TempDir(), "--geonames", geonames)
	if err != nil {
		t.Fatalf("import: %v\nstderr: %s", err, errOut)
	}
	if !strings.Contains(out, "2 enriched from GeoNames") {
		t.Errorf("summary %q, want both rows enriched", out)
	}
	want := "rejected rows in " + geonames + ":\nline 11: wrong number of fields (4, want 19)\nline 202: wrong number of fields (4, want 19)\n"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr = %q, want it to contain %q", errOut, want)
	}
}

// --max-rows bounds the rows an import reads: a longer file fails with a
// message that says the limit and the flag to raise, and the dataset keeps
// its content.
func TestImportRowLimit(t *testing.T) {
	t.Parallel()
	csv := shareddata.Path(t, "world-cities.csv")
	dir := t.TempDir()
	mustRunCLI(t, "import", "--file", csv, "--data-dir", dir)
	before := mustRunCLI(t, "query", "lon", "--data-dir", dir)
	_, _, err := runCLI(t, "import", "--file", csv, "--data-dir", dir, "--max-rows", "1000")
	if !errors.Is(err, importer.ErrTooManyRows) || !strings.Contains(err.Error(), "more than 1,000 rows") || !strings.Contains(err.Error(), "raise --max-rows") {
		t.Errorf("err = %v, want one saying the limit and --max-rows", err)
	}
	if got := mustRunCLI(t, "query", "lon", "--data-dir", dir); got != before {
		t.Errorf("after the refused import, query lon = %q, want %q", got, before)
	}
	if _, _, err := runCLI(t, "import", "--file", csv, "--data-dir", dir, "--max-rows", "0"); err == nil || !strings.Contains(err.Error(), "invalid --max-rows") {
		t.Errorf("--max-rows 0: err = %v, want it invalid", err)
	}
}
