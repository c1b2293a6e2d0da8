package importer

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// bufSize is the read buffer of an Input; it holds the longest line a
// reader accepts (MaxLine), so that readers read it directly.
const bufSize = MaxLine

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zipMagic  = []byte("PK\x03\x04")
)

// Input is a dataset file opened for import: it reads the file's content,
// decompressed when the file is gzip or a zip archive (both recognised by
// their magic bytes, not the file's name), and tells how far into the raw
// file reading has got, which is what progress is measured in.
//
// A zip archive must hold the dataset as a .txt member named like the
// archive (GeoNames' cities500.zip holds cities500.txt), or as its only .txt
// member. Its directory is at its end, so an archive on a pipe is copied to
// a temporary file before it is read (see NewInput).
type Input struct {
	raw    countingReader // the raw file, or the zip member's compressed bytes
	out    *bufio.Reader  // the content, buffered so that Format can peek at it
	gz     *gzip.Reader
	member string // the zip member read, "" for other files
	closer io.Closer
	closeZ io.Closer // the zip member's decompressor
	// spooled is the temporary copy of a zip archive read from a stream.
	spooled *os.File
	size    int64
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
	size := int64(-1)
	if fi.Mode().IsRegular() {
		size = fi.Size()
	}
	in, err := newInput(f, filepath.Base(path), size)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open dataset %s: %w", path, err)
	}
	in.closer = f
	return in, nil
}

// NewInput wraps a stream of a dataset file (a pipe, a response body) the way
// Open wraps a file; its Size is unknown (-1). A zip archive is read in
// place when r is also an io.ReaderAt with a Size method (bytes.Reader,
// io.SectionReader); from any other stream, whose end holds the archive's
// directory, it is first copied to a temporary file, which Close removes.
// Close does not close r.
func NewInput(r io.Reader) (*Input, error) {
	return newInput(r, "", -1)
}

// newInput sniffs r's magic bytes; name is the file's base name, "" when
// unknown.
func newInput(r io.Reader, name string, size int64) (*Input, error) {
	in := &Input{raw: countingReader{r: r}, size: size}
	br := bufio.NewReaderSize(&in.raw, bufSize)
	magic, err := br.Peek(len(zipMagic))
	if err != nil && err != io.EOF {
		return nil, err
	}
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		in.gz, in.out = gz, bufio.NewReaderSize(gz, bufSize)
	case bytes.Equal(magic, zipMagic):
		ra, ok := r.(io.ReaderAt)
		if s, ok := r.(interface{ Size() int64 }); ok && size < 0 {
			size = s.Size()
		}
		if !ok || size < 0 {
			// A stream: the archive's directory is at its end.
			f, n, err := spool(br)
			if err != nil {
				return nil, fmt.Errorf("zip archive: %w", err)
			}
			in.spooled, in.size = f, n
			ra, size = f, n
		}
		if err := in.openZip(ra, name, size); err != nil {
			in.Close()
			return nil, fmt.Errorf("zip archive: %w", err)
		}
	default:
		in.out = br
	}
	return in, nil
}

// openZip opens the archive's dataset member and reads it from now on.
func (in *Input) openZip(ra io.ReaderAt, name string, size int64) error {
	zr, err := zip.NewReader(ra, size)
	if err != nil {
		return err
	}
	f, err := zipMember(zr.File, name)
	if err != nil {
		return err
	}
	off, err := f.DataOffset()
	if err != nil {
		return fmt.Errorf("%s: %w", quote(f.Name), err)
	}
	raw, err := f.OpenRaw()
	if err != nil {
		return fmt.Errorf("%s: %w", quote(f.Name), err)
	}
	in.raw = countingReader{r: raw, n: off}
	var content io.Reader
	switch f.Method {
	case zip.Store:
		content = &in.raw
	case zip.Deflate:
		fr := flate.NewReader(&in.raw)
		content, in.closeZ = fr, fr
	default:
		return fmt.Errorf("%s: unsupported compression method %d", quote(f.Name), f.Method)
	}
	in.member = f.Name
	in.out = bufio.NewReaderSize(&checkedReader{r: content, f: f, crc: crc32.NewIEEE(), raw: &in.raw, size: size}, bufSize)
	return nil
}

// zipMember picks the dataset member of an archive named archive: the .txt
// member named like it, else its only .txt member.
func zipMember(files []*zip.File, archive string) (*zip.File, error) {
	want := strings.TrimSuffix(archive, filepath.Ext(archive)) + ".txt"
	var txt []*zip.File
	for _, f := range files {
		if f.FileInfo().IsDir() || !strings.EqualFold(path.Ext(f.Name), ".txt") {
			continue
		}
		if archive != "" && strings.EqualFold(path.Base(f.Name), want) {
			return f, nil
		}
		txt = append(txt, f)
	}
	switch len(txt) {
	case 1:
		return txt[0], nil
	case 0:
		return nil, fmt.Errorf("no .txt member among its %d files", len(files))
	}
	names := make([]string, 0, 3)
	for _, f := range txt[:min(len(txt), 3)] {
		names = append(names, quote(f.Name))
	}
	if len(txt) > 3 {
		names = append(names, "…")
	}
	if archive == "" {
		return nil, fmt.Errorf("%d .txt members (%s): cannot tell which one holds the data", len(txt), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%d .txt members (%s) and none named %s", len(txt), strings.Join(names, ", "), quote(want))
}

// checkedReader reads a zip member's content and checks its size and
// checksum at the end, as zip.File.Open does; at the end, it counts the
// whole archive (size bytes) as consumed.
type checkedReader struct {
	r    io.Reader
	f    *zip.File
	crc  hash.Hash32
	n    uint64
	raw  *countingReader
	size int64
}

func (c *checkedReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.crc.Write(p[:n])
	c.n += uint64(n)
	if err == io.EOF {
		if c.n != c.f.UncompressedSize64 || c.crc.Sum32() != c.f.CRC32 {
			return n, fmt.Errorf("zip member %s: %w", quote(c.f.Name), zip.ErrChecksum)
		}
		c.raw.n = c.size
	}
	return n, err
}

// Read reads the decompressed bytes of the file.
func (in *Input) Read(p []byte) (int, error) {
	return in.out.Read(p)
}

// Size is the size in bytes of the raw (for gzip and zip, compressed) file,
// or -1 when it is not known; it is the total that Consumed grows to.
func (in *Input) Size() int64 { return in.size }

// Consumed is how many bytes of the raw file have been read so far. It runs
// ahead of the rows returned by up to two buffers (128 KiB). For a zip
// archive it starts at the member's data and jumps to Size at its end.
func (in *Input) Consumed() int64 { return in.raw.n }

// Gzipped reports whether the file is gzip-compressed.
func (in *Input) Gzipped() bool { return in.gz != nil }

// Member is the name of the zip member being read, or "" when the file is
// not a zip archive.
func (in *Input) Member() string { return in.member }

// Close closes the file that Open opened.
func (in *Input) Close() error {
	var err error
	if in.gz != nil {
		err = in.gz.Close()
	}
	if in.closeZ != nil {
		err = in.closeZ.Close()
	}
	if in.closer != nil {
		if cerr := in.closer.Close(); err == nil {
			err = cerr
		}
	}
	if in.spooled != nil {
		in.spooled.Close()
		os.Remove(in.spooled.Name())
	}
	return err
}

// spool copies a stream to a temporary file and returns the file and its
// size.
func spool(r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "cityfinder-*.zip")
	if err != nil {
		return nil, 0, err
	}
	n, err := io.Copy(f, r)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, fmt.Errorf("copy to %s: %w", f.Name(), err)
	}
	return f, n, nil
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
