package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
)

// pipeSample is the first lines of the shared GeoNames dump, plain and
// gzipped, and query prefixes that find some of its cities.
type pipeSample struct {
	plain, gz []byte
	prefixes  []string
}

// newPipeSample cuts n lines from the shared GeoNames dump.
func newPipeSample(t *testing.T, n int) pipeSample {
	t.Helper()
	var s pipeSample
	var plain bytes.Buffer
	sc := bufio.NewScanner(openShared(t, "geonames-cities1000.txt.gz"))
	sc.Buffer(nil, 1<<20)
	for i := 0; i < n && sc.Scan(); i++ {
		plain.WriteString(sc.Text() + "\n")
		if fields := strings.Split(sc.Text(), "\t"); i%(n/8) == 0 && len(fields) > 2 && len(fields[2]) >= 3 {
			if p := strings.ToLower(fields[2][:3]); strings.Trim(p, "abcdefghijklmnopqrstuvwxyz") == "" {
				s.prefixes = append(s.prefixes, p)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	s.plain = plain.Bytes()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(s.plain)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	s.gz = b.Bytes()
	return s
}

// imported is what an import of the sample left: its summary, without the
// time it took, and the answers to the sample's prefixes, regions
// included.
func (s pipeSample) imported(t *testing.T, summary, dir string) string {
	t.Helper()
	summary, _, _ = strings.Cut(summary, ") in ")
	var b strings.Builder
	b.WriteString(summary + ")\n")
	for _, p := range s.prefixes {
		b.WriteString(mustRunCLI(t, "query", p, "--dataset", "large", "--data-dir", dir, "--json", "--limit", "20"))
	}
	return b.String()
}

// importProcess runs `cityfinder import` in a process of its own, with
// stdin as its standard input (a pipe), and returns its standard output.
func importProcess(t *testing.T, stdin []byte, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--", "import"}, args...)...)
	cmd.Env = append(os.Environ(), "CITYFINDER_TEST_MAIN=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("cityfinder import %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// feed writes data into the pipe or FIFO at path once a reader opens it,
// and reports how that went on the channel it returns.
func feed(path string, data []byte) <-chan error {
	done := make(chan error, 1)
	go func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			done <- err
			return
		}
		_, err = w.Write(data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	return done
}

// A source that cannot seek (standard input, /dev/stdin, a FIFO, a
// /dev/fd pipe as bash's <(…) gives, and the gzip itself through a pipe)
// imports exactly what the same file on disk does, region names on: every
// input is read once.
func TestImportFromAPipeReadsEveryRow(t *testing.T) {
	t.Parallel()
	s := newPipeSample(t, 3000)
	regionNames := shareddata.Path(t, "world-cities.csv")
	common := []string{"--dataset", "large", "--region-names", regionNames, "--log-level", "warn"}
	onDisk := writeFile(t, "cities1000.txt.gz", string(s.gz))
	dir := t.TempDir()
	want := s.imported(t, mustRunCLI(t, append([]string{"import", "--file", onDisk, "--data-dir", dir}, common...)...), dir)
	if !strings.Contains(want, " of 3,000 rows into large") || !strings.Contains(want, " with region names)") || !strings.Contains(want, `"subcountry":`) {
		t.Fatalf("the import from disk:\n%s\nwant about 3,000 cities with region names", want)
	}

	for _, tc := range []struct {
		name string
		run  func(t *testing.T, dir string) string // returns the summary
	}{
		{"--file - with stdin", func(t *testing.T, dir string) string {
			return importProcess(t, s.plain, append([]string{"--file", "-", "--data-dir", dir}, common...)...)
		}},
		{"/dev/stdin", func(t *testing.T, dir string) string {
			return importProcess(t, s.plain, append([]string{"--file", "/dev/stdin", "--data-dir", dir}, common...)...)
		}},
		{"the gzip through a pipe", func(t *testing.T, dir string) string {
			return importProcess(t, s.gz, append([]string{"--file", "-", "--data-dir", dir}, common...)...)
		}},
		{"a FIFO", func(t *testing.T, dir string) string {
			fifo := filepath.Join(t.TempDir(), "cities1000.txt")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("no FIFO: %v", err)
			}
			done := feed(fifo, s.plain)
			out := mustRunCLI(t, append([]string{"import", "--file", fifo, "--data-dir", dir}, common...)...)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			return out
		}},
		{"a /dev/fd pipe", func(t *testing.T, dir string) string {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			done := make(chan error, 1)
			go func() {
				_, err := w.Write(s.gz)
				w.Close()
				done <- err
			}()
			path := fmt.Sprintf("/dev/fd/%d", r.Fd())
			if _, err := os.Stat(path); err != nil {
				t.Skipf("no %s: %v", path, err)
			}
			out := mustRunCLI(t, append([]string{"import", "--file", path, "--data-dir", dir}, common...)...)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			return out
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if got := s.imported(t, tc.run(t, dir), dir); got != want {
				t.Errorf("imported\n%s\nwant, as from the file on disk,\n%s", got, want)
			}
		})
	}
}

// --geonames with a GeoNames dump as the file is refused before anything
// is built, saying why, and the dataset keeps its content.
func TestImportRefusesGeoNamesForAGeoNamesFile(t *testing.T) {
	archive := writeFile(t, "cities500.zip", string(geonamesZip(t)))
	dir := t.TempDir()
	mustRunCLI(t, "import", "--dataset", "large", "--file", archive, "--data-dir", dir, "--log-level", "error")
	_, _, err := runCLI(t, "import", "--dataset", "large", "--file", archive, "--data-dir", dir, "--log-level", "error",
		"--geonames", filepath.Join(t.TempDir(), "never-read.txt"))
	if err == nil || !strings.HasPrefix(err.Error(), "--geonames: ") || !strings.Contains(err.Error(), "is itself a GeoNames dump") {
		t.Fatalf("err = %v, want --geonames refused as of no use to a GeoNames file", err)
	}
	if got := firstRow(mustRunCLI(t, "query", "munc", "--dataset", "large", "--data-dir", dir)); !strings.HasPrefix(got, "München") {
		t.Errorf("after the refused import, query munc = %q, want the dataset as it was", got)
	}
}
