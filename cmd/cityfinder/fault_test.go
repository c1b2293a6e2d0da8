package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/mongotest"
	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/internal/shareddata"
)

// writeBigOKFN writes an okfn-format CSV of n generated rows.
func writeBigOKFN(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "name,country,subcountry,geonameid")
	for i := range n {
		fmt.Fprintf(w, "Generated Town %d,France,Region %d,%d\n", i, i%97, 10_000_000+i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readOffset returns how far process pid has read into the file at path,
// from /proc/PID/fdinfo, or -1 while it has not opened it.
func readOffset(pid int, path string) int64 {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		target, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil || target != path {
			continue
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%s", pid, fd.Name()))
		if err != nil {
			return -1
		}
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "pos:"); ok {
				pos, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				return pos
			}
		}
	}
	return -1
}

// An import killed with SIGKILL halfway through its file leaves the old
// dataset in place, and the next import succeeds and cleans up.
func TestImportKilledHalfwayKeepsTheOldDataset(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("needs /proc to watch the import's progress")
	}
	dir := t.TempDir()
	mustRunCLI(t, "import", "--file", shareddata.Path(t, "world-cities-2016.csv"), "--data-dir", dir)
	// Enough rows for the import to be seen halfway through its file and
	// while it writes its snapshot: under the race detector, where each
	// import takes several times as long, a fifth of them.
	rows, summary := 250_000, "imported 250,000 of 250,000 rows"
	if raceEnabled {
		rows, summary = 50_000, "imported 50,000 of 50,000 rows"
	}
	big := writeBigOKFN(t, rows)
	fi, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--",
		"import", "--file", big, "--data-dir", dir, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "CITYFINDER_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if !poll.Within(60*time.Second, func() bool { return readOffset(cmd.Process.Pid, big) >= fi.Size()/2 }) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the import did not read half its file within 60 s")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) {
		t.Fatalf("killed import: %v, want it killed", err)
	}

	if got := mustRunCLI(t, "query", "istanbul", "--data-dir", dir); !strings.Contains(got, "İstanbul") {
		t.Errorf("after the killed import, query istanbul = %q, want the old dataset", got)
	}
	if got := mustRunCLI(t, "query", "generated", "--data-dir", dir, "--json"); got != "[]\n" {
		t.Errorf("the killed import's rows are visible: %s", got)
	}

	// Killed again while it writes the new snapshot: a temporary file is
	// left behind, and the old dataset still answers.
	cmd = exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--",
		"import", "--file", big, "--data-dir", dir, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "CITYFINDER_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killed := false
	for !killed {
		select {
		case err := <-done:
			t.Fatalf("the import finished (%v) before it was seen writing", err)
		case <-time.After(time.Millisecond):
		}
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".small.cfs.tmp-*")); len(tmp) > 0 {
			cmd.Process.Signal(syscall.SIGKILL)
			<-done
			killed = true
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".small.cfs.tmp-*")); len(tmp) == 0 {
		t.Fatal("the import killed while writing left no temporary file to clean up")
	}
	if got := mustRunCLI(t, "query", "istanbul", "--data-dir", dir); !strings.Contains(got, "İstanbul") {
		t.Errorf("after the import killed while writing: %q, want the old dataset", got)
	}

	out := mustRunCLI(t, "import", "--file", big, "--data-dir", dir)
	if !strings.HasPrefix(out, summary) {
		t.Errorf("the next import: %q, want %q", out, summary)
	}
	last := fmt.Sprintf("Generated Town %d", rows-1)
	if got := mustRunCLI(t, "query", strings.ToLower(last), "--data-dir", dir); !strings.Contains(got, last) {
		t.Errorf("after the next import: %q", got)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left behind: %q", leftovers)
	}
}

// The same fault with MongoDB: an import killed halfway leaves the old
// dataset answering and its staging collection behind, and the next import
// succeeds and drops that leftover.
func TestMongoImportKilledHalfwayKeepsTheOldDataset(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fdinfo"); err != nil {
		t.Skip("needs /proc to watch the import's progress")
	}
	uri := mongotest.URI(t)
	db := mongotest.Database(t, uri)
	mongoArgs := []string{"--mongo-uri", uri, "--mongo-db", db, "--mongo-query-timeout", ferretQueryTimeout, "--log-level", "warn"}
	old := writeFile(t, "old.csv", "name,country,subcountry,geonameid\nParis,France,Ile-de-France,2988507\n")
	mustRunCLI(t, append([]string{"import", "--file", old}, mongoArgs...)...)
	big := writeBigOKFN(t, 20_000)
	fi, err := os.Stat(big)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--", "import", "--file", big}, mongoArgs...)...)
	cmd.Env = append(os.Environ(), "CITYFINDER_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Rows stream into the staging collection as the file is read, so
	// half the file read is half the rows inserted.
	if !poll.Within(2*time.Minute, func() bool { return readOffset(cmd.Process.Pid, big) >= fi.Size()/2 }) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("the import did not read half its file within 2 minutes")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	if got := mustRunCLI(t, append([]string{"query", "paris", "--fuzzy=false"}, mongoArgs...)...); !strings.HasPrefix(firstHit(got), "Paris") {
		t.Errorf("after the killed import, query paris = %q, want the old dataset", got)
	}
	if got := mustRunCLI(t, append([]string{"query", "generated", "--fuzzy=false", "--json"}, mongoArgs...)...); got != "[]\n" {
		t.Errorf("the killed import's rows are visible: %s", got)
	}
	collections := func() []string {
		names, err := mongotest.Client(t, uri).Database(db).ListCollectionNames(t.Context(), map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		var staging []string
		for _, n := range names {
			if strings.Contains(n, "staging") {
				staging = append(staging, n)
			}
		}
		return staging
	}
	if len(collections()) == 0 {
		t.Log("the killed import left no staging collection (killed before its first insert)")
	}
	// The server may still be running the killed client's last insert (a
	// write goes on after its client is gone, on MongoDB too), which would
	// make the staging collection anew after the next import dropped it:
	// wait until its size holds still.
	size := func() (n int64) {
		for _, c := range collections() {
			m, err := mongotest.Client(t, uri).Database(db).Collection(c).EstimatedDocumentCount(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			n += m
		}
		return n
	}
	last, still := size(), 0
	poll.Until(t, 30*time.Second, "the killed import's last insert to end", func() bool {
		time.Sleep(100 * time.Millisecond)
		if n := size(); n != last {
			last, still = n, 0
			return false
		}
		still++
		return still == 3
	})

	next := writeFile(t, "next.csv", "name,country,subcountry,geonameid\nParla,Spain,Madrid,3114256\n")
	if out := mustRunCLI(t, append([]string{"import", "--file", next}, mongoArgs...)...); !strings.HasPrefix(out, "imported 1 of 1 rows") {
		t.Errorf("the next import: %q", out)
	}
	if got := mustRunCLI(t, append([]string{"query", "par", "--fuzzy=false"}, mongoArgs...)...); !strings.HasPrefix(firstHit(got), "Parla") {
		t.Errorf("after the next import: %q", got)
	}
	if left := collections(); len(left) != 0 {
		t.Errorf("staging collections left after the next import: %q", left)
	}
}
