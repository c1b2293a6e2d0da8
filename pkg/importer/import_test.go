package importer_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// mustSearch returns the names that the store finds for a prefix.
func mustSearch(tb testing.TB, store search.Store, d search.Dataset, prefix string) []string {
	tb.Helper()
	found, err := store.Search(tb.Context(), nil, search.Query{Dataset: d, Prefix: search.Slug(prefix), Limit: search.MaxLimit})
	if err != nil {
		tb.Fatalf("search %s %q: %v", d, prefix, err)
	}
	cities := make([]search.City, len(found))
	for i := range found {
		cities[i] = found[i].City
	}
	return names(cities)
}

// recorder is a Progress that remembers what it heard.
type recorder struct {
	calls int
	bytes int64
	rows  int
}

func (r *recorder) Advance(bytes int64, rows int) {
	r.calls++
	r.bytes += bytes
	r.rows += rows
}

func TestImportFile(t *testing.T) {
	tests := []struct {
		name      string
		dataset   search.Dataset
		file      string
		want      importer.Summary // Duration and Rejections' reasons not compared
		wantLines []int
		prefix    string
		wantFound []string
	}{
		{
			name:      "okfn with malformed rows",
			dataset:   search.Small,
			file:      "okfn-malformed.csv",
			want:      importer.Summary{Dataset: search.Small, Read: 11, Imported: 3, Rejected: 8},
			wantLines: []int{3, 4, 5, 6, 8, 9, 10, 13},
			prefix:    "sar",
			wantFound: []string{"Sarandë"},
		},
		{
			name:      "okfn with duplicates",
			dataset:   search.Small,
			file:      "okfn-duplicates.csv",
			want:      importer.Summary{Dataset: search.Small, Read: 4, Imported: 3, Duplicates: 1},
			prefix:    "tir",
			wantFound: []string{"Tirana", "Tiranë"},
		},
		{
			name:    "MaxMind with malformed rows",
			dataset: search.Large,
			file:    "maxmind-malformed.txt",
			want: importer.Summary{Dataset: search.Large, Read: 18, Imported: 11, Rejected: 7,
				UnknownCountries: 1, UnknownCodes: []string{"qq"}},
			wantLines: []int{3, 4, 8, 10, 16, 17, 18},
			prefix:    "lon",
			wantFound: []string{"London"},
		},
		{
			name:      "MaxMind gzip without .gz",
			dataset:   search.Large,
			file:      "maxmind-gzipped.dat",
			want:      importer.Summary{Dataset: search.Large, Read: 3, Imported: 3},
			prefix:    "dak",
			wantFound: []string{"Ðakovica"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			path := filepath.Join("testdata", tt.file)
			var p recorder
			got, err := importFile(t.Context(), store, path, importer.Request{Dataset: tt.dataset, Progress: following(&p), AllowShrink: true}) // the malformed fixtures are mostly bad rows
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(lines(got.Rejections), tt.wantLines) {
				t.Errorf("rejections at lines %v, want %v", lines(got.Rejections), tt.wantLines)
			}
			if got.Duration <= 0 {
				t.Errorf("Duration = %v, want it measured", got.Duration)
			}
			got.Rejections, got.Duration = nil, 0
			if !summariesEqual(got, tt.want) {
				t.Errorf("summary = %+v\nwant %+v", got, tt.want)
			}
			if found := mustSearch(t, store, tt.dataset, tt.prefix); !slices.Equal(found, tt.wantFound) {
				t.Errorf("search %q = %q, want %q", tt.prefix, found, tt.wantFound)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if p.bytes != fi.Size() || p.rows != tt.want.Read || p.calls == 0 {
				t.Errorf("progress heard %d bytes, %d rows in %d calls; want %d bytes, %d rows", p.bytes, p.rows, p.calls, fi.Size(), tt.want.Read)
			}
		})
	}
}

func summariesEqual(a, b importer.Summary) bool {
	return a.Dataset == b.Dataset && a.Read == b.Read && a.Imported == b.Imported && a.Rejected == b.Rejected &&
		a.Duplicates == b.Duplicates && a.UnknownCountries == b.UnknownCountries &&
		slices.Equal(a.UnknownCodes, b.UnknownCodes) && slices.Equal(a.Rejections, b.Rejections) && a.Duration == b.Duration
}

func TestImportSharedDatasets(t *testing.T) {
	tests := []struct {
		dataset   search.Dataset
		file      string
		rows      int
		prefix    string
		wantFirst string
	}{
		{search.Small, "world-cities-2016.csv", 23018, "istanbul", "İstanbul"},
		{search.Small, "world-cities.csv", 34032, "seoul", "Seoul"},
		{search.Large, "worldcitiespop-sample.txt", 99, "sant julia de l", "Sant Julià de Lòria"},
		{search.Large, "worldcitiespop-excerpt-rs.txt", 14844, "beograd", "Beograd"},
		{search.Large, "worldcitiespop-100k.txt.gz", 100000, "tokyo", "Tokyo"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := datasetPath(t, tt.file)
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			store := memory.New()
			var p recorder
			sum, err := importFile(t.Context(), store, path, importer.Request{Dataset: tt.dataset, Progress: following(&p), AllowShrink: true}) // the malformed fixtures are mostly bad rows
			if err != nil {
				t.Fatal(err)
			}
			if sum.Read != tt.rows || sum.Rejected != 0 || sum.Imported+sum.Duplicates != tt.rows || sum.Imported == 0 {
				t.Errorf("summary %v, want %d rows read, none rejected", sum, tt.rows)
			}
			if p.bytes != fi.Size() || p.rows != tt.rows {
				t.Errorf("progress heard %d bytes, %d rows; want %d, %d", p.bytes, p.rows, fi.Size(), tt.rows)
			}
			if max := fi.Size()/(32<<10) + 2; int64(p.calls) > max {
				t.Errorf("progress heard %d calls for %d bytes, want at most %d", p.calls, fi.Size(), max)
			}
			if found := mustSearch(t, store, tt.dataset, tt.prefix); len(found) == 0 || found[0] != tt.wantFirst {
				t.Errorf("search %q = %q, want %q first", tt.prefix, found, tt.wantFirst)
			}
		})
	}
}

func TestImportFailureKeepsThePreviousDataset(t *testing.T) {
	truncated, err := os.ReadFile(filepath.Join("testdata", "maxmind-gzipped.dat"))
	if err != nil {
		t.Fatal(err)
	}
	truncatedPath := mustWriteFile(t, "truncated.gz", truncated[:len(truncated)-20])

	tests := []struct {
		name    string
		dataset search.Dataset
		path    string
		opts    importer.Request
		check   func(t *testing.T, err error)
	}{
		{
			name:    "strict import with a malformed row",
			dataset: search.Small,
			path:    filepath.Join("testdata", "okfn-malformed.csv"),
			opts:    importer.Request{Strict: true},
			check: func(t *testing.T, err error) {
				mustRowError(t, err, 3)
				if !strings.Contains(err.Error(), "okfn-malformed.csv") {
					t.Errorf("err = %v, want it to name the file", err)
				}
			},
		},
		{
			name:    "wrong header",
			dataset: search.Small,
			path:    filepath.Join("testdata", "okfn-bad-header.csv"),
			check: func(t *testing.T, err error) {
				if !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), `"name,country,subcountry,geonameid"`) {
					t.Errorf("err = %v, want ErrHeader naming the expected header", err)
				}
			},
		},
		{
			name:    "an okfn file as the large dataset",
			dataset: search.Large,
			path:    filepath.Join("testdata", "okfn-bom-crlf.csv"),
			check: func(t *testing.T, err error) {
				if !errors.Is(err, importer.ErrHeader) {
					t.Errorf("err = %v, want ErrHeader", err)
				}
			},
		},
		{
			name:    "truncated gzip",
			dataset: search.Large,
			path:    truncatedPath,
			check: func(t *testing.T, err error) {
				if err == nil || !strings.Contains(err.Error(), "truncated.gz") {
					t.Errorf("err = %v, want a read error naming the file", err)
				}
			},
		},
		{
			name:    "missing file",
			dataset: search.Small,
			path:    filepath.Join(t.TempDir(), "missing.csv"),
			check: func(t *testing.T, err error) {
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("err = %v, want ErrNotExist", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := memory.New()
			previous := []search.City{{Name: "Previous", Slug: "previous", Country: "Nowhere"}}
			if _, err := store.Load(t.Context(), tt.dataset, &search.SliceReader{Cities: previous}, search.LoadOptions{}); err != nil {
				t.Fatal(err)
			}
			opts := tt.opts
			opts.Dataset = tt.dataset
			sum, err := importFile(t.Context(), store, tt.path, opts)
			if err == nil {
				t.Fatalf("import succeeded: %v", sum)
			}
			tt.check(t, err)
			if sum.Imported != 0 {
				t.Errorf("Imported = %d after a failure, want 0", sum.Imported)
			}
			if found := mustSearch(t, store, tt.dataset, "prev"); !slices.Equal(found, []string{"Previous"}) {
				t.Errorf("after the failed import the store finds %q, want the previous content", found)
			}
		})
	}
}

// The large dataset's format is told from the file's first line, not its
// name: a MaxMind file or a GeoNames dump, whatever they are called.
func TestImportDetectsTheLargeDatasetsFormat(t *testing.T) {
	maxmind, err := os.ReadFile(filepath.Join("testdata", "maxmind-gzipped.dat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		rows       int
	}{
		{"a gzipped MaxMind file", mustWriteFile(t, "cities.zip", maxmind), 3},
		{"a GeoNames dump in a zip", mustZip(t, "worldcitiespop.txt.gz", zip.Deflate, "cities500.txt", kolnRow().String()), 1},
		{"a plain GeoNames dump", mustWriteFile(t, "worldcitiespop.txt", []byte(kolnRow().String())), 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sum, err := importFile(t.Context(), memory.New(), tt.path, importer.Request{Dataset: search.Large})
			if err != nil || sum.Imported != tt.rows {
				t.Errorf("import: %v, %v; want %d cities", sum, err, tt.rows)
			}
		})
	}
}

func TestImportReadsStreams(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "maxmind-gzipped.dat"))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	var p recorder
	sum, err := importStream(t.Context(), store, bytes.NewReader(data), importer.Request{Dataset: search.Large, Progress: following(&p)})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Imported != 3 || p.bytes != int64(len(data)) {
		t.Errorf("imported %d, progress %d bytes; want 3 cities and %d bytes of the compressed stream", sum.Imported, p.bytes, len(data))
	}
}

func TestImportRejectsUnknownDataset(t *testing.T) {
	_, err := importStream(t.Context(), memory.New(), strings.NewReader("name\n"), importer.Request{Dataset: "medium"})
	if !errors.Is(err, search.ErrUnknownDataset) {
		t.Fatalf("err = %v, want ErrUnknownDataset", err)
	}
}

func TestImportStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := importFile(ctx, memory.New(), filepath.Join("testdata", "okfn-bom-crlf.csv"), importer.Request{Dataset: search.Small})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSummaryString(t *testing.T) {
	tests := []struct {
		name string
		sum  importer.Summary
		want string
	}{
		{
			name: "small",
			sum:  importer.Summary{Dataset: search.Small, Read: 23018, Imported: 23016, Rejected: 2, Duration: 410 * time.Millisecond},
			want: "imported 23,016 of 23,018 rows into small (2 rejected, 0 duplicates) in 0.41s",
		},
		{
			name: "unknown countries",
			sum: importer.Summary{Dataset: search.Large, Read: 10, Imported: 8, Duplicates: 2, UnknownCountries: 3,
				UnknownCodes: []string{"qq", "xx"}, Duration: 1500 * time.Millisecond},
			want: "imported 8 of 10 rows into large (0 rejected, 2 duplicates, 3 with unknown country codes qq xx) in 1.50s",
		},
		{
			name: "enriched",
			sum: importer.Summary{Dataset: search.Small, Read: 34032, Imported: 33886, Duplicates: 146, Enriched: 25535, EnrichedByID: 25272,
				EnrichedByName: 263, Duration: 700 * time.Millisecond},
			want: "imported 33,886 of 34,032 rows into small (0 rejected, 146 duplicates, 25,535 enriched from GeoNames (25,272 by id, 263 by name)) in 0.70s",
		},
		{
			name: "region names",
			sum: importer.Summary{Dataset: search.Large, Read: 138398, Imported: 134916, Duplicates: 3482, Regions: 2671, Named: 134753,
				Duration: 1520 * time.Millisecond},
			want: "imported 134,916 of 138,398 rows into large (0 rejected, 3,482 duplicates, 134,753 with region names) in 1.52s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sum.String(); got != tt.want {
				t.Errorf("String() = %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSummaryWriteRejections(t *testing.T) {
	tests := []struct {
		name string
		sum  importer.Summary
		want string
	}{
		{"none", importer.Summary{}, ""},
		{
			name: "all kept",
			sum:  importer.Summary{Rejected: 1, Rejections: []importer.RowError{{Line: 17, Reason: "wrong number of fields (3, want 4)"}}},
			want: "line 17: wrong number of fields (3, want 4)\n",
		},
		{
			name: "more than kept",
			sum:  importer.Summary{Rejected: 1202, Rejections: []importer.RowError{{Line: 3, Reason: "empty name"}, {Line: 9, Reason: `invalid latitude "x"`}}},
			want: "line 3: empty name\nline 9: invalid latitude \"x\"\nand 1,200 more rejected rows\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := tt.sum.WriteRejections(&b); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("wrote %q, want %q", b.String(), tt.want)
			}
		})
	}
}
