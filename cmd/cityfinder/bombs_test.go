package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
)

// bombSize is how many bytes each hostile file unpacks to: 512 times the
// longest line a reader accepts, and enough for the unbounded readers of
// old to take hundreds of megabytes.
const bombSize = 32 << 20

// maxBombRSS is the peak RSS an import of a hostile file may reach.
const maxBombRSS = 100 << 20

// bombPart is a piece of a hostile file: data, repeat times over.
type bombPart struct {
	data   string
	repeat int
}

// mustWriteBomb writes a gzip file whose content is the parts in order.
// Each part is compressed once and its gzip member written repeat times
// (gzip readers read concatenated members as one stream), so that a file
// of tens of megabytes unpacked costs next to nothing to build.
func mustWriteBomb(t *testing.T, name string, parts ...bombPart) string {
	t.Helper()
	var file bytes.Buffer
	for _, p := range parts {
		var member bytes.Buffer
		zw, err := gzip.NewWriterLevel(&member, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write([]byte(p.data)); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		for range max(p.repeat, 1) {
			file.Write(member.Bytes())
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, file.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runChild runs one command line through run() in a child process (see
// TestBombChild) and returns its stdout, stderr, exit code and peak RSS in
// bytes. The peak is the child's own VmHWM: its ru_maxrss would not do, as
// Linux counts in it the parent's memory, which the child shares between
// vfork and exec.
func runChild(t *testing.T, args ...string) (stdout, stderr string, code int, rss int64) {
	t.Helper()
	report := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestBombChild$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "CITYFINDER_BOMB_RSS="+report)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	hwm, err := os.ReadFile(report)
	if err != nil {
		t.Fatalf("the child left no peak RSS: %v\nstderr: %s", err, errOut.Bytes())
	}
	if rss, err = strconv.ParseInt(string(hwm), 10, 64); err != nil {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		t.Logf("ru_maxrss %.1f MB (the parent's memory included)", float64(ru.Maxrss)/1e3)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode(), rss
}

// TestBombChild is the child process of runChild: it runs the command line
// after "--" and writes its peak RSS in bytes to $CITYFINDER_BOMB_RSS.
func TestBombChild(t *testing.T) {
	report := os.Getenv("CITYFINDER_BOMB_RSS")
	if report == "" {
		return
	}
	code := run(flag.Args(), os.Stdout, os.Stderr) // what follows "--"
	if err := os.WriteFile(report, []byte(strconv.FormatInt(peakRSS(), 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 2
	}
	os.Exit(code)
}

// peakRSS is this process's VmHWM in bytes, or -1 when /proc has none.
func peakRSS() int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(status)) {
		if kb, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(kb), "kB")), 10, 64)
			if err == nil {
				return n << 10
			}
		}
	}
	return -1
}

// Hostile files cost the import a bounded amount of memory and a short
// message, whatever their size: a line longer than the readers accept is
// one rejected row, or for a header a clear error.
func TestImportBoundsMemoryOnHostileFiles(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read a process's peak RSS")
	}
	const okfnHeader = "name,country,subcountry,geonameid\n"
	const maxmindHeader = "Country,City,AccentCity,Region,Population,Latitude,Longitude\n"
	var okfnRows, maxmindRows strings.Builder
	for i := range 200 { // one bad row in 201 stays under any sane rejection threshold
		fmt.Fprintf(&okfnRows, "Town %d,Albania,Tirana,%d\n", i, i+1)
		fmt.Fprintf(&maxmindRows, "al,town %d,Town %d,50,,41.3,19.8\n", i, i)
	}
	const chunk = 1 << 20
	tests := []struct {
		name       string
		dataset    string
		parts      []bombPart
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{
			name:       "a gzip of zeros as the small dataset",
			dataset:    "small",
			parts:      []bombPart{{strings.Repeat("\x00", chunk), bombSize / chunk}},
			wantCode:   1,
			wantStderr: `unexpected header: line 1 is longer than 65536 bytes ("\x00\x00`,
		},
		{
			name:       "a gzip of zeros as the large dataset",
			dataset:    "large",
			parts:      []bombPart{{strings.Repeat("\x00", chunk), bombSize / chunk}},
			wantCode:   1,
			wantStderr: `unexpected header: line 1 is longer than 65536 bytes ("\x00\x00`,
		},
		{
			name:    "one huge header line",
			dataset: "small",
			parts: []bombPart{
				{strings.Repeat("name,", chunk/5), bombSize / chunk},
				{"\n" + okfnRows.String(), 1},
			},
			wantCode:   1,
			wantStderr: `unexpected header: line 1 is longer than 65536 bytes ("name,name,`,
		},
		{
			name:    "one huge data line in the okfn CSV",
			dataset: "small",
			parts: []bombPart{
				{okfnHeader + "Before,Albania,Tirana,1\n", 1},
				{strings.Repeat("x", chunk), bombSize / chunk},
				{"\n" + okfnRows.String(), 1},
			},
			wantStdout: "imported 201 of 202 rows into small (1 rejected",
			wantStderr: `line 3: line longer than 65536 bytes: "xxxx`,
		},
		{
			name:    "one huge data line with a stray quote in the okfn CSV",
			dataset: "small",
			parts: []bombPart{
				{okfnHeader + "Before,Albania,Tirana,1\n\"", 1},
				{strings.Repeat("y", chunk), bombSize / chunk},
				{"\n" + okfnRows.String(), 1},
			},
			wantStdout: "imported 201 of 202 rows into small (1 rejected",
			wantStderr: `line 3: line longer than 65536 bytes: "\"yyyy`,
		},
		{
			name:    "one huge data line in the MaxMind file",
			dataset: "large",
			parts: []bombPart{
				{maxmindHeader + "al,before,Before,50,,41.3,19.8\n", 1},
				{strings.Repeat("z", chunk), bombSize / chunk},
				{"\n" + maxmindRows.String(), 1},
			},
			wantStdout: "imported 201 of 202 rows into large (1 rejected",
			wantStderr: `line 3: line longer than 65536 bytes: "zzzz`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := mustWriteBomb(t, "bomb.gz", tt.parts...)
			stdout, stderr, code, rss := runChild(t, "import", "--dataset", tt.dataset, "--file", file, "--data-dir", t.TempDir(), "--log-level", "warn")
			t.Logf("peak RSS %.1f MB, stderr %d bytes", float64(rss)/1e6, len(stderr))
			if code != tt.wantCode || !strings.HasPrefix(stdout, tt.wantStdout) || !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("exit %d, stdout %.300q, stderr %.300q; want exit %d, stdout %q…, stderr saying %q",
					code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
			}
			if len(stderr) > 1000 {
				t.Errorf("stderr holds %d bytes, want a few lines", len(stderr))
			}
			if rss <= 0 || rss > maxBombRSS {
				t.Errorf("peak RSS %d MB, want under %d MB", rss>>20, maxBombRSS>>20)
			}
		})
	}
	if importer.MaxLine*64 > bombSize {
		t.Fatalf("bombs of %d bytes are too small to prove a cap of %d", bombSize, importer.MaxLine)
	}
}

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
