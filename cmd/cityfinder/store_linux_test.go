package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/internal/poll"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// Importing the small dataset beside a large one does not read the large
// one's snapshot: the import's peak memory once its store is open is that
// of an import into an empty directory, where reading the snapshot would
// add its whole size.
func TestImportReadsNoOtherSnapshot(t *testing.T) {
	t.Parallel()
	beside := t.TempDir()
	copyServed(t, search.Large, beside) // GeoNames' cities, as `make run` serves them
	fi, err := os.Stat(filepath.Join(beside, "large.cfs"))
	if err != nil {
		t.Fatal(err)
	}
	alone, besideLarge := importPeak(t, t.TempDir()), importPeak(t, beside)
	t.Logf("peak RSS with the store open: %d MB alone, %d MB beside a %d MB snapshot", alone>>20, besideLarge>>20, fi.Size()>>20)
	if besideLarge-alone > fi.Size()/2 {
		t.Errorf("importing small beside large peaks at %d MB, %d MB above an import alone: the %d MB snapshot of large was read",
			besideLarge>>20, (besideLarge-alone)>>20, fi.Size()>>20)
	}
}

// importPeak runs an import of two cities into dir and returns its peak
// RSS once it has opened its store. The cities come through a named pipe,
// which the import opens after its store: while it waits for them, its
// high-water mark (VmHWM, which a parent's rusage would blur with its own
// from before exec) is read.
func importPeak(t *testing.T, dir string) int64 {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "cities.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipe: %v", err)
	}
	p := startProcess(t, "", nil, "import", "--file", fifo, "--data-dir", dir, "--log-level", "warn")
	var w *os.File
	poll.Until(t, time.Minute, "the import to open its file", func() bool {
		if !p.running() {
			t.Fatalf("import exited: %v", p.err)
		}
		var err error
		w, err = os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0) // ENXIO until a reader has it open
		return err == nil
	})
	hwm := vmHWM(t, p.cmd.Process.Pid)
	if _, err := io.WriteString(w, twoCities); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := p.wait(t, time.Minute); err != nil {
		t.Fatalf("import into %s: %v", dir, err)
	}
	return hwm
}

// vmHWM returns the peak resident memory of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal(errors.Join(errors.New("no VmHWM in /proc/PID/status"), sc.Err()))
	return 0
}
