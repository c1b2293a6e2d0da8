package importer

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// An import reads its file in parallel: one goroutine cuts the decompressed
// stream into lines (numbered, blank ones dropped) and packs them into
// batches, several workers parse the batches, each with a parser of its own
// (parsers keep scratch buffers and caches), and the reader hands the rows
// back in file order. Malformed rows are counted and reported by the
// reader as it reaches them, so their line numbers, the first ones kept and
// the end of a strict read are those of a sequential read.
const (
	// batchLines and batchBytes bound a batch: enough work to make the
	// hand-over cheap, small enough to keep every worker busy.
	batchLines = 1024
	batchBytes = 64 << 10
)

// errClosed is what a parallelReader's ReadBatch returns once it is closed.
var errClosed = errors.New("reader closed")

// cutLine is one line of a batch: buf[start:end], its physical line number,
// and why it is malformed when it was too long to keep.
type cutLine struct {
	start, end int
	num        int
	tooLong    string
}

// batch is a run of lines and, once ready is closed, their rows.
type batch[T any] struct {
	buf   []byte
	lines []cutLine
	// What the parsers made of lines[i]: rows[i] when reasons[i] is "".
	rows    []T
	reasons []string
	// The country codes with no English name of the rows, in order;
	// unknownRow[k] is the line index of unknown[k].
	unknown    []string
	unknownRow []int
	// consumed is how far into the raw file reading had got when the batch
	// was cut; end is io.EOF or the read error that ended the file after
	// these lines, nil when more follow.
	consumed int64
	end      error
	ready    chan struct{}
}

// unknownTaker is a parser that names countries and notes the codes it
// cannot name (see countryNames.takeUnknown).
type unknownTaker interface {
	takeUnknown(dst []string) []string
}

// parallelReader reads rows of type T from lines in parallel; see above.
// It must be closed, so that its goroutines end, unless ReadBatch has returned
// an error.
type parallelReader[T any] struct {
	what    string
	lines   int // most lines in a batch
	maxRows int // 0: no limit
	log     rowLog
	unknown unknownCountries

	queue chan *batch[T] // cut batches, in file order
	work  chan *batch[T] // cut batches, for the workers
	free  chan *batch[T] // batches to cut into
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup

	cur      *batch[T]
	next     int // next line of cur
	nextCode int // next code of cur.unknown
	consumed int64
	err      error // what ReadBatch returns from now on
}

// pipeline says how to read in parallel.
type pipeline struct {
	// workers is how many goroutines parse, batchLines the most lines in
	// a batch.
	workers, batchLines int
	// maxRows, when positive, is the most rows the file may have: one more
	// ends the read with an error wrapping ErrTooManyRows.
	maxRows int
	// consumed tells how far into the raw file reading has got (nil when
	// unknown).
	consumed func() int64
}

// defaultPipeline reads with a worker per CPU, at most maxRows rows (see
// Request.MaxRows).
func defaultPipeline(in *Input, maxRows int) pipeline {
	return pipeline{workers: max(1, runtime.GOMAXPROCS(0)), batchLines: batchLines, consumed: in.Consumed, maxRows: rowLimit(maxRows)}
}

// newParallelReader starts reading lines with a parser made by newParser
// for each worker; what names the format in read errors.
func newParallelReader[T any, P rowParser[T]](lines *lineReader, opts ReaderOptions, what string, pl pipeline, newParser func() P) *parallelReader[T] {
	n := max(1, pl.workers)
	batches := 2*n + 2
	r := &parallelReader[T]{
		what:    what,
		lines:   max(1, pl.batchLines),
		maxRows: pl.maxRows,
		log:     newRowLog(opts),
		queue:   make(chan *batch[T], batches),
		work:    make(chan *batch[T], batches),
		free:    make(chan *batch[T], batches),
		stop:    make(chan struct{}),
	}
	for range batches {
		r.free <- &batch[T]{buf: make([]byte, 0, batchBytes+MaxLine)}
	}
	r.wg.Add(1 + n)
	go r.cut(lines, pl.consumed)
	for range n {
		go r.parse(newParser())
	}
	return r
}

// cut packs lines into batches and hands them to the workers and, in the
// same order, to ReadBatch. Both channels hold every batch there is, so that
// sending never blocks.
func (r *parallelReader[T]) cut(lines *lineReader, consumed func() int64) {
	defer r.wg.Done()
	defer close(r.work)
	for {
		var b *batch[T]
		select {
		case b = <-r.free:
		case <-r.stop:
			return
		}
		b.buf, b.lines, b.end = b.buf[:0], b.lines[:0], nil
		for len(b.lines) < r.lines && len(b.buf) < batchBytes {
			line, long, err := lines.next()
			if err != nil {
				b.end = err
				break
			}
			if !long && len(line) == 0 {
				continue
			}
			l := cutLine{start: len(b.buf), num: lines.n}
			if long {
				l.tooLong = lines.tooLong()
			} else {
				b.buf = append(b.buf, line...)
			}
			l.end = len(b.buf)
			b.lines = append(b.lines, l)
		}
		if consumed != nil {
			b.consumed = consumed()
		}
		b.ready = make(chan struct{})
		r.queue <- b
		r.work <- b
		if b.end != nil {
			return
		}
	}
}

// parse parses batches until there are no more.
func (r *parallelReader[T]) parse(p rowParser[T]) {
	defer r.wg.Done()
	ut, _ := p.(unknownTaker)
	for b := range r.work {
		b.rows, b.reasons = b.rows[:0], b.reasons[:0]
		b.unknown, b.unknownRow = b.unknown[:0], b.unknownRow[:0]
		select {
		case <-r.stop: // nobody will read it
			close(b.ready)
			continue
		default:
		}
		var zero T
		for i, l := range b.lines {
			if l.tooLong != "" {
				b.rows, b.reasons = append(b.rows, zero), append(b.reasons, l.tooLong)
				continue
			}
			v, reason := p.parse(b.buf[l.start:l.end])
			b.rows, b.reasons = append(b.rows, v), append(b.reasons, reason)
			if ut != nil {
				k := len(b.unknown)
				for b.unknown = ut.takeUnknown(b.unknown); k < len(b.unknown); k++ {
					b.unknownRow = append(b.unknownRow, i)
				}
			}
		}
		close(b.ready)
	}
}

// ReadBatch appends to dst the well-formed rows of the next batch in file
// order (of the next batches, when one has none), and returns the extended
// slice; see search.CityReader, whose contract it keeps for any T. It
// returns io.EOF after the last row. Malformed rows are counted and
// skipped, or end a strict read: the rows before the one that ends it
// come first, and the error with the next call.
func (r *parallelReader[T]) ReadBatch(dst []T) ([]T, error) {
	n := len(dst)
	for r.err == nil && len(dst) == n {
		if r.cur == nil {
			r.cur, r.next, r.nextCode = <-r.queue, 0, 0
			<-r.cur.ready
			r.consumed = r.cur.consumed
		}
		dst = r.take(dst)
		b := r.cur
		switch {
		case r.err != nil:
		case b.end == io.EOF:
			r.finish(io.EOF)
		case b.end != nil:
			r.finish(fmt.Errorf("read %s: %w", r.what, b.end))
		default:
			clear(b.rows) // let the batch forget the rows it handed over
			r.cur = nil
			r.free <- b
		}
	}
	if len(dst) > n {
		return dst, nil
	}
	return dst, r.err
}

// take appends the well-formed rows of the current batch to dst, up to
// the malformed row that ends a strict read, if any.
func (r *parallelReader[T]) take(dst []T) []T {
	b := r.cur
	for r.next < len(b.lines) {
		i := r.next
		r.next++
		if r.log.rows == r.maxRows && r.maxRows > 0 {
			r.finish(tooManyRows(r.maxRows))
			break
		}
		r.log.rows++
		for r.nextCode < len(b.unknown) && b.unknownRow[r.nextCode] == i {
			r.unknown.add(b.unknown[r.nextCode : r.nextCode+1])
			r.nextCode++
		}
		switch b.reasons[i] {
		case "":
			dst = append(dst, b.rows[i])
			continue
		case skipRow:
			r.log.skipped++
			continue
		}
		if err := r.log.reject(b.lines[i].num, b.reasons[i]); err != nil {
			r.finish(err)
			break
		}
	}
	return dst
}

// finish makes ReadBatch return err from now on and stops the goroutines.
func (r *parallelReader[T]) finish(err error) {
	r.err = err
	r.Close()
}

// Stats returns the counts so far.
func (r *parallelReader[T]) Stats() ReadStats {
	st := r.log.stats()
	r.unknown.addTo(&st)
	return st
}

// Consumed is how far into the raw file reading had got when the batch of
// the last row returned was cut.
func (r *parallelReader[T]) Consumed() int64 { return r.consumed }

// Close stops the goroutines and waits for them; ReadBatch returns an error
// afterwards. It may be called more than once.
func (r *parallelReader[T]) Close() {
	r.once.Do(func() {
		close(r.stop)
		r.wg.Wait()
		if r.err == nil {
			r.err = fmt.Errorf("read %s: %w", r.what, errClosed)
		}
	})
}
