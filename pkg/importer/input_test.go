package importer_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// mustWriteFile writes data to name in a fresh temporary directory.
func mustWriteFile(tb testing.TB, name string, data []byte) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

func mustGzip(tb testing.TB, data []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

func TestOpenDetectsGzipByMagicBytes(t *testing.T) {
	plain := []byte("name,country,subcountry,geonameid\nTirana,Albania,Tirana,3183875\n")
	tests := []struct {
		name     string
		file     string
		data     []byte
		wantGzip bool
	}{
		{"plain file", "cities.csv", plain, false},
		{"gzip named .gz", "cities.csv.gz", mustGzip(t, plain), true},
		{"gzip named without .gz", "cities.csv", mustGzip(t, plain), true},
		{"plain file named .gz", "cities.csv.gz", plain, false},
		{"empty file", "empty.csv", nil, false},
		{"one byte", "one.csv", []byte{0x1f}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := mustWriteFile(t, tt.file, tt.data)
			in, err := importer.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			if in.Gzipped() != tt.wantGzip {
				t.Errorf("Gzipped() = %v, want %v", in.Gzipped(), tt.wantGzip)
			}
			if in.Size() != int64(len(tt.data)) {
				t.Errorf("Size() = %d, want the raw file's %d", in.Size(), len(tt.data))
			}
			got, err := io.ReadAll(in)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.data
			if tt.wantGzip {
				want = plain
			}
			if !bytes.Equal(got, want) {
				t.Errorf("read %q, want %q", got, want)
			}
			if in.Consumed() != in.Size() {
				t.Errorf("Consumed() = %d after the whole file, want %d", in.Consumed(), in.Size())
			}
		})
	}
}

func TestOpenReadsTheGzipFixture(t *testing.T) {
	path := filepath.Join("testdata", "maxmind-gzipped.dat")
	in, err := importer.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r, err := importer.NewMaxMindReader(in, importer.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cities, err := search.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	got := names(cities)
	if want := "Aixàs|Andorra la Vella|Ðakovica"; strings.Join(got, "|") != want {
		t.Errorf("names = %q, want %q", got, want)
	}
}

func TestOpenFails(t *testing.T) {
	tests := []struct {
		name    string
		path    func(t *testing.T) string
		wantIs  error
		wantMsg string
	}{
		{
			name:    "missing file",
			path:    func(t *testing.T) string { return filepath.Join(t.TempDir(), "nope.csv") },
			wantIs:  fs.ErrNotExist,
			wantMsg: "open dataset ",
		},
		{
			name:    "gzip magic without a gzip header",
			path:    func(t *testing.T) string { return mustWriteFile(t, "x.gz", []byte{0x1f, 0x8b, 0x01}) },
			wantIs:  io.ErrUnexpectedEOF,
			wantMsg: "gzip",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := importer.Open(tt.path(t))
			if err == nil {
				in.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, tt.wantIs) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %v, want %v saying %q", err, tt.wantIs, tt.wantMsg)
			}
		})
	}
}

func TestNewInputHasNoSize(t *testing.T) {
	in, err := importer.NewInput(strings.NewReader("abc"))
	if err != nil {
		t.Fatal(err)
	}
	if in.Size() != -1 {
		t.Errorf("Size() = %d, want -1 for a stream", in.Size())
	}
	if b, err := io.ReadAll(in); err != nil || string(b) != "abc" || in.Consumed() != 3 {
		t.Errorf("read %q, %v, consumed %d; want abc, 3", b, err, in.Consumed())
	}
}
