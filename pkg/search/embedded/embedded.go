// Package embedded is cityfinder's default search.Store: it needs no server,
// keeping each dataset as one immutable snapshot file under a data
// directory, read into memory when opened.
//
// A load builds a complete new snapshot in a temporary file, syncs it and
// renames it over the old one, so a crash or a failed import leaves the old
// dataset whole, and a reader only ever opens a finished file. A Store in
// another process (a running `serve`) notices the new file within its reload
// interval and switches to it between two searches.
//
// Every key of a city (see search.Keys) is indexed: the keys of whole
// names (main and alternate) in one index, those of later words in
// another. Lookups cost a binary search within the keys that share the
// query's first three or four letters, plus a scan of at most ScanLimit
// keys ordered by one integer each; prefixes with more matches than that
// (such as "san" in a dataset of millions) are ranked at import time
// instead (see precompute).
package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Defaults for Options.
const (
	DefaultReloadInterval = time.Second
	DefaultScanLimit      = 64
)

// Options tune a Store; the zero value gives the defaults.
type Options struct {
	// ReloadInterval is how often the Store looks for snapshots written by
	// other processes; negative turns the check off.
	ReloadInterval time.Duration
	// ScanLimit is the longest range a query ranks by scanning; longer
	// ones are ranked at import. It takes effect at the next Load.
	ScanLimit int
	// Logger receives reload events and errors.
	Logger *slog.Logger
	// Lazy leaves each snapshot unread until a search, count or load first
	// needs its dataset, so that a process that uses one dataset (an
	// import, a query) never holds the others in memory. Reloads then look
	// only at the datasets already read.
	Lazy bool
}

// Store is the embedded search.Store.
type Store struct {
	dir       string
	opts      Options
	log       *slog.Logger
	mu        sync.RWMutex // guards snaps and files; held for reading during a search
	snaps     map[search.Dataset]*snapshot
	files     map[search.Dataset]fs.FileInfo
	broken    map[search.Dataset]error // a snapshot file that could not be read
	closed    bool
	openMu    sync.Mutex              // serialises first reads; guards opened
	opened    map[search.Dataset]bool // with Lazy, the datasets read at least once
	stop      chan struct{}
	pollDone  chan struct{}
	closeOnce sync.Once

	// versions number the snapshots each dataset has served (see
	// Version): each new one, and Close, takes the next of lastVersion.
	// mu guards them.
	versions    map[search.Dataset]uint64
	lastVersion uint64
}

var (
	_ search.Store      = (*Store)(nil)
	_ search.TypoFinder = (*Store)(nil)
	_ search.Versioned  = (*Store)(nil)
)

// FileExt is the extension of snapshot files: <dir>/<dataset>.cfs.
const FileExt = ".cfs"

// Open opens the store in dir, mapping the snapshots already there. The
// directory need not exist yet: Load creates it.
func Open(dir string, opts Options) (*Store, error) {
	if opts.ReloadInterval == 0 {
		opts.ReloadInterval = DefaultReloadInterval
	}
	if opts.ScanLimit <= 0 {
		opts.ScanLimit = DefaultScanLimit
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Store{
		dir:    dir,
		opts:   opts,
		log:    opts.Logger.With("component", "embedded"),
		snaps:  make(map[search.Dataset]*snapshot),
		files:  make(map[search.Dataset]fs.FileInfo),
		broken: make(map[search.Dataset]error),
		opened: make(map[search.Dataset]bool),
		stop:   make(chan struct{}),
	}
	// A snapshot that cannot be read (corrupt, or from an older version)
	// must not keep the store from opening: import replaces it, and
	// searches of that dataset say what is wrong and how to recover.
	if !opts.Lazy {
		_ = s.Reload()
	}
	if opts.ReloadInterval > 0 {
		s.pollDone = make(chan struct{})
		go s.poll()
	}
	return s, nil
}

// Path is where the snapshot of dataset d lives.
func (s *Store) Path(d search.Dataset) string {
	return filepath.Join(s.dir, string(d)+FileExt)
}

// Search implements search.Store. Most of a lookup's time goes to fresh
// memory for the answer (two kilobytes for ten cities): a caller that
// reuses dst spares it.
func (s *Store) Search(ctx context.Context, dst []search.Found, q search.Query) ([]search.Found, error) {
	if err := q.Validate(); err != nil {
		return dst, err
	}
	s.use(q.Dataset)
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap, err := s.snapshot(ctx, q.Dataset)
	if err != nil {
		return dst, err
	}
	return snap.answer(&q, dst), nil
}

// snapshot returns the snapshot of dataset d, reading it first if the
// store is Lazy, or the error the contract asks for. The caller holds s.mu
// for reading.
func (s *Store) snapshot(ctx context.Context, d search.Dataset) (*snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.closed {
		return nil, fmt.Errorf("embedded store: %w: closed", search.ErrUnavailable)
	}
	snap := s.snaps[d]
	if snap == nil {
		return nil, s.missing(d)
	}
	return snap, nil
}

// Stats implements search.Store.
func (s *Store) Stats(ctx context.Context, d search.Dataset) (search.DatasetStats, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.DatasetStats{}, err
	}
	s.use(d)
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap, err := s.snapshot(ctx, d)
	if err != nil {
		return search.DatasetStats{}, err
	}
	return snap.stats(), nil
}

// walkTrie is the search.TrieWalk of dataset d's snapshot, for the typo
// searches beyond what FindTypos's automaton holds.
func (s *Store) walkTrie(ctx context.Context, d search.Dataset, visit func(path []byte) bool) error {
	s.use(d)
	s.mu.RLock()
	defer s.mu.RUnlock()
	snap, err := s.snapshot(ctx, d)
	if err != nil {
		return err
	}
	snap.walkTrie(visit)
	return nil
}

// Load implements search.Store. Concurrent loads of one dataset, from this
// process or others, are serialised by a lock file beside the snapshot.
func (s *Store) Load(ctx context.Context, d search.Dataset, r search.CityReader, opts search.LoadOptions) (search.LoadStats, error) {
	if _, err := search.ParseDataset(string(d)); err != nil {
		return search.LoadStats{}, err
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return search.LoadStats{}, fmt.Errorf("create data directory: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(s.dir, string(d)+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return search.LoadStats{}, fmt.Errorf("open lock file: %w", err)
	}
	defer lock.Close() // releases the lock
	if err := lockFile(lock); err != nil {
		return search.LoadStats{}, fmt.Errorf("lock dataset %s: %w", d, err)
	}
	s.removeStale(d)

	final := s.Path(d)
	tmp := filepath.Join(s.dir, fmt.Sprintf(".%s%s.tmp-%d", d, FileExt, time.Now().UnixNano()))
	stats, err := buildFile(ctx, r, tmp, build{scanLimit: s.opts.ScanLimit, listCap: search.MaxLimit, source: opts.Source, enter: opts.Enter}, s.log)
	if err != nil {
		os.Remove(tmp)
		return stats, err
	}
	if opts.Check != nil {
		if err := s.check(d, stats, opts.Check); err != nil {
			os.Remove(tmp)
			return stats, err
		}
	}
	opts.Enter(search.PhaseSwapping)
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return stats, fmt.Errorf("replace %s: %w", final, err)
	}
	syncDir(s.dir)
	if !s.read(d) {
		return stats, nil // read when first used
	}
	if err := s.reload(d); err != nil {
		return stats, err
	}
	return stats, nil
}

// check hands the stats of dataset d as it is on disk now, and of the
// load about to replace it, to the load's Check. The caller holds d's lock
// file, so no other load can change d meanwhile.
//
// A dataset that cannot be read (corrupt, or of an older format) counts as
// none. The stats come from the snapshot in memory when it is the file's,
// else from the file's header once its checksum is verified: an import
// need not read the whole old dataset into memory to replace it.
func (s *Store) check(d search.Dataset, next search.LoadStats, check func(prev search.DatasetStats, next search.LoadStats) error) error {
	var prev search.DatasetStats
	path := s.Path(d)
	fi, err := os.Stat(path)
	s.mu.RLock()
	snap, held := s.snaps[d], s.files[d]
	s.mu.RUnlock()
	switch {
	case err != nil: // no dataset yet
	case snap != nil && held != nil && os.SameFile(held, fi) && held.ModTime().Equal(fi.ModTime()) && held.Size() == fi.Size():
		prev = snap.stats()
	default:
		if prev, err = readStats(path); err != nil {
			s.log.Warn("read the dataset before replacing it", "dataset", d, "err", err)
		}
	}
	if err := check(prev, next); err != nil {
		return fmt.Errorf("load %s: %w", d, err)
	}
	return nil
}

// removeStale deletes temporary files that a killed load of d left behind.
// The caller holds d's lock, so no live load owns them.
func (s *Store) removeStale(d search.Dataset) {
	matches, _ := filepath.Glob(filepath.Join(s.dir, "."+string(d)+FileExt+".tmp-*"))
	for _, m := range matches {
		if err := os.Remove(m); err == nil {
			s.log.Info("removed leftover of an interrupted import", "file", m)
		}
	}
}

func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}

// Reload reads every dataset whose snapshot file changed since it was last
// read (with Lazy, of those read already). The Store calls it every
// ReloadInterval; serve calls it on SIGHUP, tests directly.
func (s *Store) Reload() error {
	var errs []error
	for _, d := range search.Datasets {
		if s.read(d) {
			errs = append(errs, s.reload(d))
		}
	}
	return errors.Join(errs...)
}

func (s *Store) reload(d search.Dataset) error {
	path := s.Path(d)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // keep what is mapped: a removed file is not an empty dataset
	}
	if err != nil {
		return fmt.Errorf("stat %s: %w", path, err)
	}
	s.mu.RLock()
	old := s.files[d]
	s.mu.RUnlock()
	if old != nil && os.SameFile(old, fi) && old.ModTime().Equal(fi.ModTime()) && old.Size() == fi.Size() {
		return nil
	}
	snap, err := openSnapshot(path)
	if err != nil {
		s.mu.Lock()
		if s.snaps[d] == nil {
			s.broken[d] = err
		}
		s.files[d] = fi // report a broken file once, not at every poll
		s.mu.Unlock()
		return unreadable(d, err)
	}
	// The file may have been replaced again between Stat and open; then
	// the next reload maps the newer one.
	// The previous snapshot needs no closing: it is memory, and results
	// that still point into it keep it alive.
	s.log.Debug("dataset read", "dataset", d, "cities", snap.cities, "keys", snap.count+snap.words.n, "heavy_prefixes", snap.names.heavy.len()+snap.words.heavy.len())
	if old != nil { // a new import replaces the dataset this process answers from
		s.log.Info("dataset reloaded", "dataset", d, "cities", snap.cities)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.snaps[d], s.files[d] = snap, fi
		delete(s.broken, d)
		s.nextVersion(d)
	}
	return nil
}

// Version implements search.Versioned: the number of the snapshot of d
// that searches read, which changes with the snapshot under the same lock
// (a Load, a Reload that reads a newer file; a MongoDB mirror reloads
// this store when it switches generations), and at Close.
func (s *Store) Version(d search.Dataset) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.versions[d]
}

// nextVersion gives dataset d a new version; the caller holds s.mu.
func (s *Store) nextVersion(d search.Dataset) {
	if s.versions == nil {
		s.versions = make(map[search.Dataset]uint64)
	}
	s.lastVersion++
	s.versions[d] = s.lastVersion
}

func (s *Store) poll() {
	defer close(s.pollDone)
	t := time.NewTicker(s.opts.ReloadInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.Reload(); err != nil {
				s.log.Error("reload", "err", err)
			}
		}
	}
}

// Close implements search.Store.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		if s.pollDone != nil {
			<-s.pollDone
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.closed = true
		clear(s.snaps)
		for _, d := range search.Datasets { // no answer of the closed store stays valid
			s.nextVersion(d)
		}
	})
	return nil
}
