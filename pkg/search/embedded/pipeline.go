package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// readBuffers is how many batches readInto has in flight: one being read,
// one being added, one waiting between.
const readBuffers = 3

// readInto reads r into b. Reading (the reader's parsing and the stages
// after it, such as enrichment) runs on a goroutine of its own, the
// checks and ids of search.LoadReader on another, each handing batches
// over, so that they and the copying into b spread over the cores.
func readInto(ctx context.Context, r search.CityReader, b *builder) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	ahead := readAhead(ctx, r)
	defer func() {
		cancel()
		<-ahead.done // r is the caller's again
	}()
	lr := search.NewLoadReader(ahead)
	// Each channel can hold every buffer, so that sending never blocks.
	full := make(chan []search.City, readBuffers)
	free := make(chan []search.City, readBuffers)
	for range readBuffers {
		free <- nil
	}
	var readErr error
	go func() {
		defer close(full)
		for {
			var batch []search.City
			select {
			case batch = <-free:
			case <-ctx.Done():
				readErr = ctx.Err()
				return
			}
			if batch, readErr = lr.ReadBatch(ctx, batch[:0]); readErr != nil {
				return
			}
			full <- batch
		}
	}()
	var addErr error
	for batch := range full {
		for i := range batch {
			if addErr == nil {
				addErr = b.add(&batch[i])
			}
		}
		if addErr != nil {
			cancel() // stop the reader; drain until it closes full
		}
		clear(batch) // let the strings go once they are in the arena
		free <- batch
	}
	switch {
	case addErr != nil:
		return lr.Count(), addErr
	case errors.Is(readErr, io.EOF):
		return lr.Count(), nil
	}
	return lr.Count(), readErr
}

// aheadReader reads another reader on a goroutine of its own, up to
// readBuffers batches ahead of its caller.
type aheadReader struct {
	ctx  context.Context
	full chan aheadBatch
	free chan []search.City
	done chan struct{} // closed once the goroutine no longer reads
	err  error         // what ReadBatch returns from now on
}

// aheadBatch is one ReadBatch of the reader read ahead.
type aheadBatch struct {
	cities []search.City
	err    error
}

// readAhead starts reading r ahead until it fails or ctx is done.
func readAhead(ctx context.Context, r search.CityReader) *aheadReader {
	a := &aheadReader{
		ctx: ctx,
		// Each channel can hold every buffer, so that sending never blocks.
		full: make(chan aheadBatch, readBuffers),
		free: make(chan []search.City, readBuffers),
		done: make(chan struct{}),
	}
	for range readBuffers {
		a.free <- nil
	}
	go func() {
		defer close(a.done)
		defer close(a.full)
		for {
			var buf []search.City
			select {
			case buf = <-a.free:
			case <-ctx.Done():
				return
			}
			buf, err := r.ReadBatch(buf[:0])
			a.full <- aheadBatch{buf, err}
			if err != nil {
				return
			}
		}
	}()
	return a
}

// ReadBatch appends the next batch of the reader to dst (see
// search.CityReader). Given an empty dst it hands over the batch's own
// slice, as append may, and keeps dst to read into.
func (a *aheadReader) ReadBatch(dst []search.City) ([]search.City, error) {
	if a.err != nil {
		return dst, a.err
	}
	b, ok := <-a.full
	switch {
	case !ok:
		a.err = a.ctx.Err()
		return dst, a.err
	case b.err != nil:
		a.err = b.err
		return dst, a.err
	case len(dst) == 0:
		a.free <- dst
		return b.cities, nil
	}
	dst = append(dst, b.cities...)
	clear(b.cities)
	a.free <- b.cities
	return dst, nil
}

// buildFile reads r into a snapshot file at path (which must not exist).
func buildFile(ctx context.Context, r search.CityReader, path string, b build, log *slog.Logger) (search.LoadStats, error) {
	start := time.Now()
	lap := func() time.Duration {
		now := time.Now()
		d := now.Sub(start)
		start = now
		return d
	}
	bld := newBuilder()
	n, err := readInto(ctx, r, bld)
	read := lap()
	stats := search.LoadStats{Read: n}
	if err != nil {
		return stats, err
	}
	b.enter(search.PhaseSorting)
	s, err := bld.build(ctx)
	if err != nil {
		return stats, err
	}
	stats.Stored = s.cities
	bld = nil // let the unsorted copy go before the lists are built
	sorted := lap()
	b.enter(search.PhaseIndexing)
	s.index(b.scanLimit, b.listCap)
	ranked := lap()
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	b.enter(search.PhaseWriting)
	f, err := createFile(path)
	if err != nil {
		return stats, err
	}
	if err := s.write(f, b); err != nil {
		f.Close()
		return stats, fileError("write", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return stats, fileError("sync", path, err)
	}
	log.Debug("snapshot built", "cities", s.cities, "name_keys", s.count, "word_keys", s.snapshot.words.n,
		"alternate_names", s.alts, "alternate_name_keys", s.altNameKeys, "heavy_prefixes", len(s.heavy)+len(s.wordHeavy),
		"read", read, "sort", sorted, "index", ranked, "write", lap())
	return stats, f.Close()
}

// snapshotFile is what buildFile writes a snapshot to: an *os.File, or in
// tests a file that fails as a full disk does.
type snapshotFile interface {
	io.WriteSeeker
	Sync() error
	Close() error
}

// createFile creates the new snapshot file at path, which must not exist.
var createFile = func(path string) (snapshotFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}

// fileError names op and path in err, unless err is the file's own error
// (an *fs.PathError), which names them already: "write PATH: no space left
// on device", not "write PATH: write PATH: …".
func fileError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}
