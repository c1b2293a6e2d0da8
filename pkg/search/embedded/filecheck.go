package embedded

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// ErrFileGone means that the snapshot file of a dataset a Store answers
// from is no longer in the data directory: searches go on from memory, but
// a restart would find the dataset empty.
var ErrFileGone = errors.New("snapshot file is gone")

// FileCheck tells whether the snapshot files on disk still hold the
// datasets a Store answers from, for readiness: a file removed, or replaced
// or damaged so that it can no longer be read, while searches go on from
// memory. It reads a file through (its checksum) only when the file changed
// since it last looked, so a check every second costs a stat. It is safe
// for concurrent use.
type FileCheck struct {
	store *Store
	mu    sync.Mutex
	seen  map[search.Dataset]fileVerdict
}

// fileVerdict is what a FileCheck found of one version of a file.
type fileVerdict struct {
	fi  fs.FileInfo
	err error
}

// NewFileCheck returns a FileCheck of the files of s.
func NewFileCheck(s *Store) *FileCheck {
	return &FileCheck{store: s, seen: make(map[search.Dataset]fileVerdict)}
}

// Serves reports whether the store answers dataset d from a snapshot in
// memory, whose file Check then looks at.
func (c *FileCheck) Serves(d search.Dataset) bool {
	c.store.mu.RLock()
	defer c.store.mu.RUnlock()
	return c.store.snaps[d] != nil
}

// Check returns nil when the file of dataset d holds a whole snapshot, or
// when the store answers from no snapshot of d (its Stats says why); an
// error that matches ErrFileGone when the file was removed, and one that
// matches search.ErrCorrupt when the file cannot be read. A file replaced
// by a whole newer import passes: the store switches to it at its next
// reload.
func (c *FileCheck) Check(d search.Dataset) error {
	if !c.Serves(d) {
		return nil
	}
	path := c.store.Path(d)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &search.DatasetError{Dataset: d, Err: fmt.Errorf("%w: %s was removed; the dataset is served from memory "+
			"until a restart finds it empty", ErrFileGone, path)}
	}
	if err != nil {
		return &search.DatasetError{Dataset: d, Err: fmt.Errorf("stat %s: %w", path, err)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.seen[d]; ok && os.SameFile(v.fi, fi) && v.fi.ModTime().Equal(fi.ModTime()) && v.fi.Size() == fi.Size() {
		return v.err
	}
	if _, err = readStats(path); err != nil {
		err = unreadable(d, err)
	}
	c.seen[d] = fileVerdict{fi: fi, err: err}
	return err
}
