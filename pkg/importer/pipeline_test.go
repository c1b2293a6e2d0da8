package importer_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// readResult is everything a reader says about a file: its cities, the
// error that ended them, then its stats.
type readResult struct {
	cities []search.City
	err    string // the error that ended the read, "" for io.EOF
	stats  importer.ReadStats
}

func readAllOf(tb testing.TB, r rowReader) readResult {
	tb.Helper()
	var res readResult
	cities, err := mustReadBatches(tb, r)
	if err != nil {
		res.err = err.Error()
	}
	res.cities, res.stats = cities, r.Stats()
	return res
}

// mustReadBatches reads r to its end, an error or io.EOF (returned as
// nil), and holds every call to search.CityReader's contract: a batch of
// one city or more appended after what dst held, or an error and dst as it
// was; and an error again after the first.
func mustReadBatches(tb testing.TB, r search.CityReader) ([]search.City, error) {
	tb.Helper()
	var cities []search.City
	for {
		var last search.City // of what dst holds: ReadBatch must leave it be
		if len(cities) > 0 {
			last = cities[len(cities)-1]
		}
		next, err := r.ReadBatch(cities)
		if len(cities) > 0 && (len(next) < len(cities) || !next[len(cities)-1].Equal(&last)) {
			tb.Fatalf("ReadBatch changed the cities dst held")
		}
		switch {
		case err == nil && len(next) == len(cities):
			tb.Fatalf("ReadBatch appended no city and returned no error")
		case err != nil && len(next) != len(cities):
			tb.Fatalf("ReadBatch appended %d cities with the error %v", len(next)-len(cities), err)
		case err != nil:
			if again, err2 := r.ReadBatch(nil); err2 == nil || len(again) > 0 {
				tb.Fatalf("ReadBatch after %v: %d cities, %v; want an error", err, len(again), err2)
			}
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return cities, err
		}
		cities = next
	}
}

// pipelineShapes are the worker counts and batch sizes the parallel
// reader is checked with: one line per batch, batches that cut a file
// anywhere, and the real size.
var pipelineShapes = []struct{ workers, lines int }{{1, 1}, {2, 3}, {3, 7}, {2, 1024}}

// mustReadAlike checks that the parallel reader of an import reads data
// exactly as the format's sequential reader does: the same cities in the
// same order, the same rejections, the same end and the same counts.
func mustReadAlike(t *testing.T, f importer.Format, data []byte, opts importer.ReaderOptions) readResult {
	t.Helper()
	shapes := pipelineShapes
	if len(data) > 1<<20 {
		shapes = shapes[len(shapes)-1:] // small batches take long on a large file
	}
	seq, seqErr := newFormatReader(f, bytes.NewReader(data), opts)
	var want readResult
	if seqErr == nil {
		want = readAllOf(t, seq)
	}
	for _, shape := range shapes {
		par, err := importer.NewParallelReader(f, bytes.NewReader(data), opts, shape.workers, shape.lines)
		if (err == nil) != (seqErr == nil) || (err != nil && err.Error() != seqErr.Error()) {
			t.Fatalf("%d workers, %d lines a batch: opening: %v, sequential: %v", shape.workers, shape.lines, err, seqErr)
		}
		if err != nil {
			continue
		}
		got := readAllOf(t, par)
		par.Close()
		if !sameRead(got, want) {
			t.Fatalf("%d workers, %d lines a batch: read\n%s\nthe sequential reader read\n%s", shape.workers, shape.lines, got, want)
		}
	}
	return want
}

func sameRead(a, b readResult) bool {
	if len(a.cities) != len(b.cities) || a.err != b.err || !reflect.DeepEqual(a.stats, b.stats) {
		return false
	}
	for i := range a.cities {
		if !a.cities[i].Equal(&b.cities[i]) {
			return false
		}
	}
	return true
}

func (r readResult) String() string {
	return fmt.Sprintf("%d cities, ending in %q, stats %+v", len(r.cities), r.err, r.stats)
}

func TestParallelReaderReadsAsTheSequentialOne(t *testing.T) {
	readAlikeFiles(t, []formatFile{
		{importer.FormatOKFN, "testdata/okfn-malformed.csv"},
		{importer.FormatOKFN, "testdata/okfn-bom-crlf.csv"},
		{importer.FormatOKFN, "testdata/okfn-duplicates.csv"},
		{importer.FormatOKFN, "testdata/okfn-bad-header.csv"},
		{importer.FormatMaxMind, "testdata/maxmind-malformed.txt"},
		{importer.FormatMaxMind, "testdata/maxmind-utf8.txt"},
		{importer.FormatMaxMind, "testdata/maxmind-gzipped.dat"},
		{importer.FormatOKFN, datasetPath(t, "world-cities.csv")},
		{importer.FormatOKFN, datasetPath(t, "world-cities-2016.csv")},
		{importer.FormatMaxMind, datasetPath(t, "worldcitiespop-excerpt-rs.txt")},
		{importer.FormatMaxMind, datasetPath(t, "worldcitiespop-sample.txt")},
	})
}

// The GeoNames dump (138,398 rows) on its own, so that make test runs it
// without the race detector: 15 s under it, where GeoNames rows go through
// the same workers in TestParallelReaderReadsHostileLinesAsTheSequentialOne.
func TestParallelReaderReadsTheGeoNamesDumpAsTheSequentialOne(t *testing.T) {
	readAlikeFiles(t, []formatFile{{importer.FormatGeoNames, datasetPath(t, "geonames-cities1000.txt.gz")}})
}

type formatFile struct {
	format importer.Format
	path   string
}

// readAlikeFiles reads each file with the parallel reader and the
// sequential one, and the fixtures of testdata (with malformed rows) also
// strictly and with few rows reported.
func readAlikeFiles(t *testing.T, files []formatFile) {
	t.Helper()
	for _, file := range files {
		data := mustLoadPath(t, file.path)
		options := []importer.ReaderOptions{{}, {Strict: true}, {MaxReported: 3}}
		if !strings.HasPrefix(file.path, "testdata/") {
			options = options[:1] // the real files have no malformed rows
		}
		for _, opts := range options {
			t.Run(fmt.Sprintf("%s strict=%v max=%d", file.path[strings.LastIndex(file.path, "/")+1:], opts.Strict, opts.MaxReported), func(t *testing.T) {
				mustReadAlike(t, file.format, data, opts)
			})
		}
	}
}

func TestParallelReaderReadsHostileLinesAsTheSequentialOne(t *testing.T) {
	long := strings.Repeat("x", importer.MaxLine+10)
	var unknown strings.Builder // more unknown country codes than a summary lists
	for c := 'a'; c <= 'z'; c++ {
		fmt.Fprintf(&unknown, "q%c,town,Town,01,,1,1\n", c)
	}
	for _, tt := range []struct {
		name   string
		format importer.Format
		data   string
	}{
		{"okfn with long and blank lines", importer.FormatOKFN,
			"name,country,subcountry,geonameid\n\nTirana,Albania,Tirana,1\n" + long + "\n\r\n\"Open,Albania\nDurrës,Albania,Durrës,2"},
		{"okfn with a long last line", importer.FormatOKFN, "name,country,subcountry,geonameid\nTirana,Albania,Tirana,1\n" + long},
		{"MaxMind with unknown countries", importer.FormatMaxMind,
			"Country,City,AccentCity,Region,Population,Latitude,Longitude\n" + unknown.String() + "zz,x,\n" + unknown.String()},
		{"GeoNames with bad rows", importer.FormatGeoNames,
			kolnRow().String() + "\n" + kolnRow().with("latitude", "x").String() + long + "\n" + kolnRow().with("country code", "QQ").String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, opts := range []importer.ReaderOptions{{}, {Strict: true}, {MaxReported: 1}} {
				mustReadAlike(t, tt.format, []byte(tt.data), opts)
			}
		})
	}
}

func TestParallelReaderStopsWhenClosed(t *testing.T) {
	data := mustLoadPath(t, datasetPath(t, "worldcitiespop-excerpt-rs.txt"))
	r, err := importer.NewParallelReader(importer.FormatMaxMind, bytes.NewReader(data), importer.ReaderOptions{}, 2, 16)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := r.ReadBatch(nil); err != nil {
			t.Fatal(err)
		}
	}
	r.Close()
	r.Close()
	if _, err := r.ReadBatch(nil); err == nil || errors.Is(err, io.EOF) {
		t.Errorf("ReadBatch after Close: %v, want an error", err)
	}
}
