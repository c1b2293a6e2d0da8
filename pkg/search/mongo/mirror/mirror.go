// Package mirror serves the datasets kept in MongoDB from memory: it keeps
// a copy of the snapshot that each import publishes there (see
// mongo.SnapshotCollection) in a local directory, and answers every search
// through the embedded store that reads that directory, so that a replica
// has the embedded store's answers (typos, alternate names, every filter)
// and speed, and its features as they grow.
//
// A Store looks for a new generation every PollInterval, and at once when
// a change stream announces one (a replica-set MongoDB; FerretDB and a
// standalone MongoDB have none, and are polled). It downloads the new file
// beside the one it serves, checks its size and SHA-256, renames it over
// the old and reads it; the embedded store switches to it between two
// searches, and keeps the old one when the new cannot be read. So a
// replica never answers from a half-loaded or corrupt snapshot.
//
// The directory keeps the last good copy: a replica that starts while
// MongoDB is unreachable serves it, and says so through Health. With no
// copy and no MongoDB a dataset answers search.ErrEmptyDataset, as the
// embedded store does for a dataset never imported.
package mirror

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
	"github.com/cityfinder/cityfinder/pkg/search/mongo"
)

// DefaultPollInterval is how often a Store asks MongoDB for a new
// generation when no change stream tells it.
const DefaultPollInterval = 2 * time.Second

// Options configure a Store.
type Options struct {
	// Dir holds the copies of the snapshots; it is made if missing.
	Dir string
	// PollInterval is how often MongoDB is asked for new generations;
	// zero means DefaultPollInterval, negative never (Sync only).
	PollInterval time.Duration
	// Logger hears of new generations and of MongoDB's absences.
	Logger *slog.Logger
}

// Store is a search.Store that answers from the embedded store over Dir
// and keeps Dir in step with MongoDB. Every method of the embedded store
// is promoted, so that whatever it answers, a Store does; Load is refused:
// imports go to MongoDB.
type Store struct {
	*embedded.Store
	source *mongo.Store
	dir    string
	opts   Options
	log    *slog.Logger

	syncMu   sync.Mutex                // one Sync at a time; guards told and rejected
	told     map[search.Dataset]bool   // datasets whose missing snapshot was logged
	rejected map[search.Dataset]string // the SHA-256 of a generation that could not be read
	mu       sync.Mutex                // guards the fields below
	held     map[search.Dataset]held
	err      error     // of the last Sync, nil if it succeeded
	since    time.Time // when Syncs began to fail

	stop chan struct{}
	done sync.WaitGroup
	once sync.Once
}

// held is the copy of a dataset that the Store serves.
type held struct {
	sha256 string
	gen    int64 // 0 when read from Dir at start and not yet confirmed
}

var (
	_ search.Store     = (*Store)(nil)
	_ search.Versioned = (*Store)(nil) // the embedded store's, which Sync reloads
)

// ErrReadOnly is Load's error: a mirror is filled by imports into MongoDB.
var ErrReadOnly = errors.New("a replica serving MongoDB's snapshots does not import: import into MongoDB")

// Open opens the copies in opts.Dir, syncs them with source once, within
// ctx, and keeps them in step until Close. MongoDB being unreachable is no
// error: the Store serves what Dir holds and tries again every
// PollInterval. The Store owns source and closes it.
func Open(ctx context.Context, source *mongo.Store, opts Options) (*Store, error) {
	if opts.Dir == "" {
		return nil, errors.New("mirror: no directory")
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = DefaultPollInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	removeDownloads(opts.Dir)
	emb, err := embedded.Open(opts.Dir, embedded.Options{ReloadInterval: -1, Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	s := &Store{Store: emb, source: source, dir: opts.Dir, opts: opts, log: opts.Logger.With("component", "mirror"),
		held: make(map[search.Dataset]held), told: make(map[search.Dataset]bool), rejected: make(map[search.Dataset]string), stop: make(chan struct{})}
	for _, d := range search.Datasets {
		if sum, _, err := mongo.HashFile(emb.Path(d)); err == nil {
			s.held[d] = held{sha256: sum}
		}
	}
	_ = s.Sync(ctx) // a failure is logged, and retried every PollInterval
	if opts.PollInterval > 0 {
		s.done.Add(2)
		go s.poll()
	}
	return s, nil
}

// Sync brings every dataset's copy to MongoDB's current generation, and
// returns what kept one from it. A dataset that MongoDB has no snapshot of
// (never imported, or only by an older build) keeps its copy.
func (s *Store) Sync(ctx context.Context) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	snaps, err := s.source.CurrentSnapshots(ctx)
	if err == nil {
		var errs []error
		for _, d := range search.Datasets {
			if snap, ok := snaps[d]; ok {
				errs = append(errs, s.syncDataset(ctx, snap))
			} else if !s.told[d] {
				s.told[d] = true
				s.log.Warn("MongoDB holds no snapshot of this dataset: import it with this build (an older one wrote documents only)", "dataset", d)
			}
		}
		err = errors.Join(errs...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err == nil && s.err != nil:
		s.log.Info("in step with MongoDB again", "after", time.Since(s.since).Round(time.Millisecond))
	case err != nil && s.err == nil:
		s.since = time.Now()
		s.log.Warn("cannot sync with MongoDB: serving the generations held, in memory and in the data directory, and trying again",
			"dir", s.dir, "every", s.opts.PollInterval, "err", err)
	}
	s.err = err
	return err
}

// syncDataset brings the copy of snap's dataset to snap.
func (s *Store) syncDataset(ctx context.Context, snap mongo.Snapshot) error {
	d := snap.Dataset
	s.mu.Lock()
	h := s.held[d]
	s.mu.Unlock()
	if h.sha256 == snap.SHA256 {
		if h.gen != snap.Gen {
			s.mu.Lock()
			s.held[d] = held{sha256: snap.SHA256, gen: snap.Gen}
			s.mu.Unlock()
		}
		return nil
	}
	if snap.Format != embedded.FormatVersion {
		return fmt.Errorf("dataset %s generation %d is in snapshot format %d, this build reads %d: upgrade this replica, or import with this build",
			d, snap.Gen, snap.Format, embedded.FormatVersion)
	}
	if s.rejected[d] == snap.SHA256 {
		return fmt.Errorf("dataset %s generation %d cannot be read by this build: waiting for the next import", d, snap.Gen)
	}
	start := time.Now()
	final := s.Store.Path(d)
	backup := final + ".previous"
	os.Remove(backup)
	hadCopy := os.Link(final, backup) == nil
	if err := s.download(ctx, snap); err != nil {
		os.Remove(backup)
		return err
	}
	downloaded := time.Since(start)
	if err := readFailure(s.Store.Reload(), d); err != nil {
		// The embedded store still answers from the generation it had; the
		// directory gets its file back, and this generation is not
		// downloaded again: its bytes are the ones imported.
		if hadCopy {
			os.Rename(backup, final)
		} else {
			os.Remove(final)
		}
		s.rejected[d] = snap.SHA256
		return fmt.Errorf("read dataset %s generation %d: %w", d, snap.Gen, err)
	}
	os.Remove(backup)
	s.mu.Lock()
	s.held[d] = held{sha256: snap.SHA256, gen: snap.Gen}
	s.mu.Unlock()
	s.log.Info("dataset generation loaded from MongoDB", "dataset", d, "gen", snap.Gen, "cities", snap.Cities, "bytes", snap.Size,
		"download", downloaded.Round(time.Millisecond), "total", time.Since(start).Round(time.Millisecond))
	return nil
}

// readFailure is the error among those of the embedded store's Reload that
// concerns dataset d, if any.
func readFailure(err error, d search.Dataset) error {
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		var de *search.DatasetError
		if e != nil && (!errors.As(e, &de) || de.Dataset == d) {
			return e
		}
	}
	return nil
}

// downloadPrefix begins the names of the files that downloads write before
// they are checked and renamed into place.
const downloadPrefix = ".download-"

// download writes snap's file beside the copy in use, checks it, and
// renames it over that copy.
func (s *Store) download(ctx context.Context, snap mongo.Snapshot) error {
	f, err := os.CreateTemp(s.dir, downloadPrefix+string(snap.Dataset)+"-*")
	if err != nil {
		return fmt.Errorf("download dataset %s: %w", snap.Dataset, err)
	}
	tmp := f.Name()
	err = s.source.DownloadSnapshot(ctx, snap, f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, s.Store.Path(snap.Dataset))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("download dataset %s generation %d: %w", snap.Dataset, snap.Gen, err)
	}
	if d, err := os.Open(s.dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// removeDownloads deletes what downloads killed before their rename left.
func removeDownloads(dir string) {
	matches, _ := filepath.Glob(filepath.Join(dir, downloadPrefix+"*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// poll syncs every PollInterval, and whenever a change stream says a
// snapshot document changed.
func (s *Store) poll() {
	defer s.done.Done()
	wake := make(chan struct{}, 1)
	// A sync may take as long as a download; Close ends it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	go func() {
		defer s.done.Done()
		s.watch(ctx, wake)
	}()
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		case <-wake:
		}
		if err := s.Sync(ctx); err != nil && ctx.Err() == nil {
			s.log.Debug("sync with MongoDB", "err", err)
		}
	}
}

// watch turns a change stream's events into wakes, for as long as the
// server offers one; without one, the ticker alone drives the syncs.
func (s *Store) watch(ctx context.Context, wake chan<- struct{}) {
	for ctx.Err() == nil {
		err := s.source.WatchSnapshots(ctx, func() {
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		if ctx.Err() != nil {
			return
		}
		if !errors.Is(err, search.ErrUnavailable) {
			s.log.Debug("no change stream: polling MongoDB for new snapshots", "every", s.opts.PollInterval, "err", err)
			return
		}
		select { // MongoDB away: try the stream again later
		case <-ctx.Done():
		case <-time.After(s.opts.PollInterval):
		}
	}
}

// Health returns nil when the last sync reached MongoDB and brought every
// dataset up to date; otherwise an error saying since when the Store
// serves its copies, for /readyz.
func (s *Store) Health(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		return nil
	}
	var gens []string
	for _, d := range search.Datasets {
		switch h, ok := s.held[d]; {
		case ok && h.gen == 0:
			gens = append(gens, fmt.Sprintf("%s of an earlier run", d))
		case ok:
			gens = append(gens, fmt.Sprintf("%s generation %d", d, h.gen))
		}
	}
	what := "no copy"
	if len(gens) > 0 {
		what = strings.Join(gens, ", ")
	}
	return fmt.Errorf("not in step with MongoDB since %s, serving what this replica holds (%s): %w", s.since.UTC().Format(time.RFC3339), what, s.err)
}

// Generation returns the generation of dataset d that the Store serves: 0
// when it holds none, or a copy read from Dir that MongoDB has not
// confirmed yet.
func (s *Store) Generation(d search.Dataset) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[d].gen
}

// Reload syncs with MongoDB at once (serve does on SIGHUP).
func (s *Store) Reload() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.Sync(ctx)
}

// Load implements search.Store: it fails with ErrReadOnly.
func (s *Store) Load(context.Context, search.Dataset, search.CityReader, search.LoadOptions) (search.LoadStats, error) {
	return search.LoadStats{}, ErrReadOnly
}

// Close stops the syncing and closes the embedded store and MongoDB's.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		s.done.Wait()
		err = errors.Join(s.Store.Close(), s.source.Close())
	})
	return err
}
