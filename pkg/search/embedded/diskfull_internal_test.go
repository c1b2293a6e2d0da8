package embedded

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// fullDisk is a snapshot file on a disk that fills after room bytes: its
// writes then fail as an *os.File's do, with ENOSPC in an *fs.PathError.
type fullDisk struct {
	*os.File
	room int
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if len(p) > f.room {
		n, _ := f.File.Write(p[:f.room])
		f.room = 0
		return n, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	f.room -= len(p)
	return f.File.Write(p)
}

// A load that fills the disk fails saying so once ("write PATH: no space
// left on device"), keeps the old dataset and leaves no temporary file.
func TestLoadOnAFullDisk(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	paris := search.City{Name: "Paris", Slug: "paris", Country: "France"}
	if _, err := s.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{paris}}, search.LoadOptions{}); err != nil {
		t.Fatal(err)
	}

	create := createFile
	t.Cleanup(func() { createFile = create })
	var path string
	createFile = func(p string) (snapshotFile, error) {
		path = p
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, err
		}
		return &fullDisk{File: f, room: 100}, nil
	}
	parla := search.City{Name: "Parla", Slug: "parla", Country: "Spain"}
	_, err = s.Load(t.Context(), search.Small, &search.SliceReader{Cities: []search.City{parla}}, search.LoadOptions{})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("load on a full disk: err = %v, want ENOSPC", err)
	}
	if want := "write " + path + ": no space left on device"; err.Error() != want || strings.Count(err.Error(), path) != 1 {
		t.Errorf("err = %q, want %q", err, want)
	}
	got, err := s.Search(t.Context(), nil, search.Query{Dataset: search.Small, Prefix: "par", Limit: 10})
	if err != nil || len(got) != 1 || got[0].Name != "Paris" {
		t.Errorf("after the failed load: %v, %v; want the old Paris", got, err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, ".small*")); len(tmp) != 0 {
		t.Errorf("temporary files left: %q", tmp)
	}
}
