package importer

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
)

// bufSize is the read buffer of an Input and of the row readers above it.
const bufSize = 64 << 10

// Input is a dataset file opened for import: it reads the file's bytes,
// decompressed when the file is gzip (recognised by its magic bytes, not its
// name), and tells how far into the raw file reading has got, which is what
// progress is measured in.
type Input struct {
	raw    countingReader
	r      io.Reader // what Read serves: the buffered raw bytes or gzip's output
	gz     *gzip.Reader
	closer io.Closer
	size   int64
}

// Open opens the dataset file at path for import.
func Open(path string) (*Input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open dataset %s: %w", path, err)
	}
	in, err := NewInput(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open dataset %s: %w", path, err)
	}
	in.closer = f
	if fi.Mode().IsRegular() {
		in.size = fi.Size()
	}
	return in, nil
}

// NewInput wraps a stream of a dataset file (a pipe, a response body) the way
// Open wraps a file; its Size is unknown (-1). Close does not close r.
func NewInput(r io.Reader) (*Input, error) {
	in := &Input{raw: countingReader{r: r}, size: -1}
	br := bufio.NewReaderSize(&in.raw, bufSize)
	in.r = br
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		in.gz, in.r = gz, gz
	}
	return in, nil
}

// Read reads the decompressed bytes of the file.
func (in *Input) Read(p []byte) (int, error) {
	return in.r.Read(p)
}

// Size is the size in bytes of the raw (for gzip, compressed) file, or -1
// when it is not known; it is the total that Consumed grows to.
func (in *Input) Size() int64 { return in.size }

// Consumed is how many bytes of the raw file have been read so far. It runs
// ahead of the rows returned by up to a buffer (64 KiB).
func (in *Input) Consumed() int64 { return in.raw.n }

// Gzipped reports whether the file is gzip-compressed.
func (in *Input) Gzipped() bool { return in.gz != nil }

// Close closes the file that Open opened.
func (in *Input) Close() error {
	var err error
	if in.gz != nil {
		err = in.gz.Close()
	}
	if in.closer != nil {
		if cerr := in.closer.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// countingReader counts the bytes read through it. One goroutine reads an
// import at a time, so the count needs no atomics.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
