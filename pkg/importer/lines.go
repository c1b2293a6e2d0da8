package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// Limits that every reader applies, so that a hostile file (a gzip of
// zeros, a line of hundreds of megabytes) costs one buffer of memory and one
// rejected row, never the whole file in memory.
const (
	// MaxLine is the longest line, its line ending included, that a reader
	// reads: longer lines are malformed rows (or, for a header, a fatal
	// ErrHeader) and are skipped without being kept. Real lines are under
	// 200 bytes (okfn, MaxMind) or 11 KB (GeoNames, whose alternate names
	// may take 10,000 characters).
	MaxLine = 64 << 10
	// MaxField is the longest field, and the longest GeoNames alternate
	// name, that a row may hold; a longer one makes the row malformed.
	// GeoNames caps names at 200 characters (800 bytes of UTF-8).
	MaxField = 1 << 10
)

// maxEcho bounds how much of a bad input a message quotes (see quote).
const maxEcho = 200

// lineReader cuts a stream into physical lines and numbers them, keeping no
// more of the stream than its buffer of MaxLine bytes. It drops a UTF-8 BOM
// at the start; lines may end in LF or CRLF, and the last one may lack its
// ending.
type lineReader struct {
	br   *bufio.Reader
	n    int    // physical line number of the last line returned
	head []byte // the start of the last over-long line, for its message
	skip bool   // the rest of that line is still to be dropped
	back bool   // next returns the last line again
	last []byte
}

func newLineReader(r io.Reader) *lineReader {
	var br *bufio.Reader
	if in, ok := r.(*Input); ok && in.out.Size() >= MaxLine {
		br = in.out // read the Input's buffer directly rather than copy it into another
	} else {
		br = bufio.NewReaderSize(r, MaxLine)
	}
	if b, _ := br.Peek(len(utf8BOM)); bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	return &lineReader{br: br}
}

// next returns the next line without its line ending, valid until the next
// call, or io.EOF after the last line. A line longer than MaxLine comes back
// with long set and only its first bytes (see tooLong); the next call drops
// the rest of it, so that a caller that gives up on it reads no further.
func (l *lineReader) next() (line []byte, long bool, err error) {
	if l.back {
		l.back = false
		l.n++
		return l.last, false, nil
	}
	if l.skip {
		l.skip = false
		if err := l.skipLine(); err != nil {
			return nil, false, err
		}
	}
	line, err = l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.head = append(l.head[:0], line[:maxEcho+utf8.UTFMax]...)
		l.skip = true
		l.n++
		return l.head, true, nil
	}
	if err != nil && (err != io.EOF || len(line) == 0) {
		return nil, false, err
	}
	l.n++
	// A missing final newline is fine: the next call gets io.EOF.
	line = bytes.TrimSuffix(line, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	l.last = line
	return line, false, nil
}

// skipLine reads and drops the rest of an over-long line; it returns
// io.EOF when the line was the last.
func (l *lineReader) skipLine() error {
	for {
		if _, err := l.br.ReadSlice('\n'); err != bufio.ErrBufferFull {
			return err
		}
	}
}

// unread makes next return the line it has just returned once more; the
// line must not be an over-long one.
func (l *lineReader) unread() {
	l.back = true
	l.n--
}

// tooLong says why the over-long line that next has just returned is
// malformed.
func (l *lineReader) tooLong() string {
	return fmt.Sprintf("line longer than %d bytes: %s", MaxLine, quote(l.head))
}

// firstLine skips blank lines and returns the first other one, for a header
// check; what names the format it wants (`the MaxMind header "Country,…"`).
// An empty file and an over-long first line are errors wrapping ErrHeader.
func (l *lineReader) firstLine(want string) ([]byte, error) {
	for {
		line, long, err := l.next()
		switch {
		case err == io.EOF:
			return nil, fmt.Errorf("%w: empty file, want %s", ErrHeader, want)
		case err != nil:
			return nil, fmt.Errorf("read the first line: %w", err)
		case long:
			return nil, fmt.Errorf("%w: line %d is longer than %d bytes (%s), want %s", ErrHeader, l.n, MaxLine, quote(l.head), want)
		case len(line) > 0:
			return line, nil
		}
	}
}

// rowScanner is what the readers share: bounded lines and the bookkeeping
// of malformed rows.
type rowScanner struct {
	lines *lineReader
	log   rowLog
}

// lineRows reads the rows that a parser makes of the lines of a file, on
// the caller's goroutine: what the okfn, MaxMind and GeoNames readers share
// (their constructor checks the file's start, their parser makes the rows).
// It counts the rows whose country code has no English name when the parser
// notes them (see unknownTaker).
type lineRows[T any, P rowParser[T]] struct {
	rows    rowScanner
	parse   P
	what    string // names the format in read errors
	unknown unknownCountries
	codes   []string // scratch for the parser's unknown codes
	err     error    // what ReadBatch returns from now on
}

// newLineRows reads lines with p; what names the format in read errors.
func newLineRows[T any, P rowParser[T]](lines *lineReader, opts ReaderOptions, what string, p P) lineRows[T, P] {
	return lineRows[T, P]{rows: rowScanner{lines: lines, log: newRowLog(opts)}, parse: p, what: what}
}

// ReadBatch appends the next well-formed rows to dst, at most batchLines,
// and returns the extended slice; see search.CityReader, whose contract it
// keeps for any T. It returns io.EOF after the last row.
func (r *lineRows[T, P]) ReadBatch(dst []T) ([]T, error) {
	ut, _ := any(r.parse).(unknownTaker)
	n := len(dst)
	for r.err == nil && len(dst)-n < batchLines {
		v, err := scanRow(&r.rows, r.what, r.parse)
		if ut != nil {
			r.codes = ut.takeUnknown(r.codes[:0])
			r.unknown.add(r.codes)
		}
		if err != nil {
			r.err = err
			break
		}
		dst = append(dst, v)
	}
	if len(dst) > n {
		return dst, nil
	}
	return dst, r.err
}

// Stats returns the counts so far.
func (r *lineRows[T, P]) Stats() ReadStats {
	st := r.rows.log.stats()
	r.unknown.addTo(&st)
	return st
}

// rowParser makes a row of a line, or says why the line is malformed, or
// says skipRow for a well-formed line that is not a row of the dataset.
type rowParser[T any] interface {
	parse(line []byte) (T, string)
}

// skipRow is what a rowParser says of a line to skip (see
// ReadStats.Skipped).
const skipRow = "\x00skip"

// scanRow returns the next well-formed row that p makes of a non-blank line,
// or io.EOF after the last. Malformed rows are counted and skipped, or end a
// strict read. what names the file format in read errors. (p is a type
// parameter rather than a func so that passing a method costs no
// allocation.)
func scanRow[T any, P rowParser[T]](s *rowScanner, what string, p P) (T, error) {
	var zero T
	for {
		line, long, err := s.lines.next()
		if err != nil {
			if err == io.EOF {
				return zero, io.EOF
			}
			return zero, fmt.Errorf("read %s: %w", what, err)
		}
		if !long && len(line) == 0 {
			continue
		}
		s.log.rows++
		var reason string
		if long {
			reason = s.lines.tooLong()
		} else {
			var v T
			if v, reason = p.parse(line); reason == "" {
				return v, nil
			}
			if reason == skipRow {
				s.log.skipped++
				continue
			}
		}
		if err := s.log.reject(s.lines.n, reason); err != nil {
			return zero, err
		}
	}
}

// fieldTooLong says which of fields is longer than MaxField, or "" when
// none is; names names the fields, and fields[skip] is not checked (-1
// checks every field).
func fieldTooLong(fields [][]byte, names []string, skip int) string {
	for i, f := range fields {
		if i != skip && len(f) > MaxField {
			return fmt.Sprintf("%s longer than %d bytes: %s", names[i], MaxField, quote(f))
		}
	}
	return ""
}

// quote returns s as a double-quoted Go string literal that is safe to
// print: invalid UTF-8, control and other non-printing characters escaped.
// It holds at most about maxEcho bytes; a cut is marked with "…" after the
// closing quote.
func quote[S ~string | ~[]byte](s S) string {
	p := []byte(s[:min(len(s), maxEcho)])
	b := make([]byte, 0, maxEcho+8)
	b = append(b, '"')
	i := 0
	for i < len(p) {
		if !utf8.FullRune(p[i:]) && len(s) > len(p) {
			break // a character that the first maxEcho bytes cut in two
		}
		_, size := utf8.DecodeRune(p[i:])
		q := strconv.Quote(string(p[i : i+size]))
		if len(b)+len(q)-1 > maxEcho {
			break
		}
		b = append(b, q[1:len(q)-1]...)
		i += size
	}
	b = append(b, '"')
	if i < len(s) {
		b = append(b, "…"...)
	}
	return string(b)
}
