package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// regionsCSV names the regions of geonamesZip's places, as the okfn file
// does.
const regionsCSV = "name,country,subcountry,geonameid\n" +
	"Cologne,Germany,North Rhine-Westphalia,2886242\nBerlin,Germany,Berlin,2950159\nMunich,Germany,Bavaria,2867714\n"

// The large dataset shows region names, not codes: from --region-names,
// its variable or its key.
func TestImportNamesTheLargeDatasetsRegions(t *testing.T) {
	archive := writeFile(t, "cities500.zip", string(geonamesZip(t)))
	named := writeFile(t, "regions.csv", regionsCSV)
	config := writeFile(t, "regions.yaml", "import:\n  region_names: "+named+"\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--region-names", named}},
		{"environment", map[string]string{"CITYFINDER_REGION_NAMES": named}, nil},
		{"config file", nil, []string{"--config", config}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			out := mustRunCLI(t, append([]string{"import", "--dataset", "large", "--file", archive, "--data-dir", dir}, tc.args...)...)
			if !strings.HasPrefix(out, "imported 3 of 3 rows into large (0 rejected, 0 duplicates, 3 with region names) in ") {
				t.Errorf("summary %q, want it to count the rows with region names", out)
			}
			got := mustRunCLI(t, "query", "munc", "--dataset", "large", "--data-dir", dir)
			if want := "NAME     COUNTRY  REGION   POPULATION\nMünchen  Germany  Bavaria   1,260,391\n"; got != want {
				t.Errorf("query munc printed\n%s\nwant\n%s", got, want)
			}
			got = mustRunCLI(t, "query", "munc", "--dataset", "large", "--data-dir", dir, "--json")
			if !strings.Contains(got, `"subcountry":"Bavaria","region":"02"`) {
				t.Errorf("query munc --json = %s, want both the region's name and its code", got)
			}
		})
	}
}

func writeAt(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Without --region-names (even with an okfn CSV at datasets/world-cities.csv,
// where make puts it), or for a MaxMind file without --geonames, a line says
// that the regions have no names, and query shows no codes instead.
func TestImportSaysWhenRegionsHaveNoNames(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.Mkdir("datasets", 0o755); err != nil {
		t.Fatal(err)
	}
	writeAt(t, filepath.Join("datasets", "world-cities.csv"), regionsCSV)
	archive := writeFile(t, "cities500.zip", string(geonamesZip(t)))
	dir := t.TempDir()
	out, errOut, err := runCLI(t, "import", "--dataset", "large", "--file", archive, "--data-dir", dir)
	if err != nil || !strings.Contains(errOut, "no region names") || !strings.Contains(errOut, "--region-names") || strings.Contains(out, "region names") {
		t.Errorf("import without the okfn CSV: %v, stdout %q, stderr %q; want a line saying the regions have no names", err, out, errOut)
	}
	if got, want := mustRunCLI(t, "query", "munc", "--dataset", "large", "--data-dir", dir), "NAME     COUNTRY  POPULATION\nMünchen  Germany   1,260,391\n"; got != want {
		t.Errorf("query munc printed\n%s\nwant no region column\n%s", got, want)
	}

	maxmind := writeFile(t, "worldcitiespop.txt", "Country,City,AccentCity,Region,Population,Latitude,Longitude\nde,munchen,München,02,1260391,48.14,11.58\n")
	_, errOut, err = runCLI(t, "import", "--dataset", "large", "--file", maxmind, "--data-dir", dir, "--allow-shrink",
		"--region-names", writeFile(t, "regions.csv", regionsCSV))
	if err != nil || !strings.Contains(errOut, "no region names") || !strings.Contains(errOut, "--geonames") {
		t.Errorf("MaxMind file without --geonames: %v, stderr %q; want a line naming --geonames", err, errOut)
	}

	missing := filepath.Join(t.TempDir(), "world-cities.csv")
	_, _, err = runCLI(t, "import", "--dataset", "large", "--file", archive, "--data-dir", dir, "--region-names", missing)
	if err == nil || !strings.HasPrefix(err.Error(), "--region-names: okfn file "+missing) {
		t.Errorf("a missing --region-names file: err = %v, want one naming the flag and the file", err)
	}
}

// With region names, the large dataset's namesakes read apart, and no
// answer lists the same line (name, region, country) twice: real rows of
// both large sources, cut to the cities the queries find.
func TestQueryListsEachLineOnce(t *testing.T) {
	t.Parallel()
	queries := []string{"tokyo", "london", "springfield"}
	keep := func(name string) bool {
		name = strings.ToLower(strings.TrimSpace(name))
		for _, q := range queries {
			if strings.HasPrefix(name, q) {
				return true
			}
		}
		return false
	}
	geonames := sampleLines(t, "geonames-cities1000.txt.gz", "", func(f []string) bool { return keep(f[2]) }, "\t")
	maxmind := sampleLines(t, "worldcitiespop-100k.txt.gz", "Country,City,AccentCity,Region,Population,Latitude,Longitude", func(f []string) bool { return keep(f[1]) }, ",")
	okfn := shareddata.Path(t, "world-cities.csv")
	for _, tc := range []struct {
		name string
		args []string
		want []string // lines that only region names tell apart
	}{
		{"GeoNames", []string{"--file", geonames}, []string{"London|England|United Kingdom", "London|Ontario|Canada"}},
		// The regions of MaxMind's codes are those of the GeoNames places
		// of the whole file.
		{"MaxMind", []string{"--file", maxmind, "--geonames", shareddata.Path(t, "geonames-cities1000.txt.gz")},
			[]string{"Tokyo|Tokyo|Japan", "Tokyo|Hiroshima|Japan"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			mustRunCLI(t, append([]string{"import", "--dataset", "large", "--data-dir", dir, "--region-names", okfn}, tc.args...)...)
			var lines []string
			for _, q := range queries {
				var hits []search.Hit
				if err := json.Unmarshal([]byte(mustRunCLI(t, "query", q, "--dataset", "large", "--data-dir", dir, "--json", "--limit", "20")), &hits); err != nil {
					t.Fatal(err)
				}
				seen := make(map[string]bool)
				for _, h := range hits {
					line := h.Name + "|" + h.Subcountry + "|" + h.Country
					if seen[line] {
						t.Errorf("query %s lists %s twice", q, line)
					}
					seen[line] = true
					lines = append(lines, line)
				}
				table := mustRunCLI(t, "query", q, "--dataset", "large", "--data-dir", dir, "--limit", "20")
				for _, h := range hits {
					if h.Region != "" && h.Subcountry == "" && strings.Contains(table, "  "+h.Region+"  ") {
						t.Errorf("query %s shows the code %s of %s", q, h.Region, h.Name)
					}
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(strings.Join(lines, "\n")+"\n", w+"\n") {
					t.Errorf("no line %s in %q", w, lines)
				}
			}
		})
	}
}

// sampleLines writes the header and the lines of a shared dataset file
// whose fields (split at sep) keep, to a file it returns the path of.
func sampleLines(t *testing.T, name, header string, keep func(fields []string) bool, sep string) string {
	t.Helper()
	gz := openShared(t, name)
	var b strings.Builder
	if header != "" {
		b.WriteString(header + "\n")
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if fields := strings.Split(sc.Text(), sep); len(fields) > 2 && sc.Text() != header && keep(fields) {
			b.WriteString(sc.Text() + "\n")
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, strings.TrimSuffix(name, ".gz"), b.String())
}

// openShared opens the gzipped shared dataset file name, decompressed, until
// the test ends.
func openShared(t *testing.T, name string) io.Reader {
	t.Helper()
	f, err := os.Open(shareddata.Path(t, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	return gz
}
