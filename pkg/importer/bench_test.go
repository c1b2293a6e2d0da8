package importer_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/memory"
)

// mustLoad returns a shared dataset file's bytes, decompressed.
func mustLoad(b *testing.B, name string) []byte {
	b.Helper()
	return mustLoadPath(b, datasetPath(b, name))
}

// maxmindBenchFile is the MaxMind file the reader benchmarks read: the 100k
// sample, or the file named by $CITYFINDER_BENCH_MAXMIND (for example the
// full-size output of gen-maxmind.py).
func maxmindBenchFile(b *testing.B) []byte {
	b.Helper()
	if p := os.Getenv("CITYFINDER_BENCH_MAXMIND"); p != "" {
		return mustLoadPath(b, p)
	}
	return mustLoad(b, "worldcitiespop-100k.txt.gz")
}

func mustLoadPath(b testing.TB, path string) []byte {
	b.Helper()
	in, err := importer.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	data, err := io.ReadAll(in)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// reportRows reports rows per second over the whole benchmark.
func reportRows(b *testing.B, rows int) {
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}

// benchmarkRead reads data to its end with a reader that open makes, as
// many times as the benchmark wants.
func benchmarkRead[T any, R interface{ ReadBatch([]T) ([]T, error) }](b *testing.B, data []byte, open func(io.Reader) (R, error)) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rows := 0
	var batch []T
	for b.Loop() {
		r, err := open(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			batch, err = r.ReadBatch(batch[:0])
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows += len(batch)
		}
	}
	reportRows(b, rows)
}

// csvRecords reads an encoding/csv reader a record per batch, for
// benchmarkRead.
type csvRecords struct{ r *csv.Reader }

func (c csvRecords) ReadBatch(dst [][]string) ([][]string, error) {
	rec, err := c.r.Read()
	if err != nil {
		return dst, err
	}
	return append(dst, rec), nil
}

func benchmarkFormat(b *testing.B, f importer.Format, data []byte) {
	benchmarkRead(b, data, func(r io.Reader) (rowReader, error) { return newFormatReader(f, r, importer.ReaderOptions{}) })
}

// BenchmarkMaxMindReader is the large import's parsing and decoding, to be
// read next to BenchmarkBareCSV: the budget is 3× its time.
func BenchmarkMaxMindReader(b *testing.B) {
	benchmarkFormat(b, importer.FormatMaxMind, maxmindBenchFile(b))
}

// BenchmarkImportReader is the import's parallel reading of the same bytes
// as BenchmarkMaxMindReader: parsing, decoding and folding on every CPU,
// rows handed back in file order. The budget is 2× BenchmarkBareCSV.
func BenchmarkImportReader(b *testing.B) {
	benchmarkRead(b, maxmindBenchFile(b), func(r io.Reader) (importer.ParallelReader, error) {
		return importer.NewParallelReader(importer.FormatMaxMind, r, importer.ReaderOptions{}, runtime.GOMAXPROCS(0), 1024)
	})
}

// BenchmarkBareCSV is a bare encoding/csv read loop over the same bytes as
// BenchmarkMaxMindReader: the floor an importer is measured against.
func BenchmarkBareCSV(b *testing.B) {
	benchmarkRead(b, maxmindBenchFile(b), func(r io.Reader) (csvRecords, error) { return csvRecords{csv.NewReader(r)}, nil })
}

func BenchmarkOKFNReader(b *testing.B) {
	benchmarkFormat(b, importer.FormatOKFN, mustLoad(b, "world-cities.csv"))
}

// BenchmarkImportLarge is the whole import of the compressed file into the
// memory store: gunzip, parse, sort and dedupe.
func BenchmarkImportLarge(b *testing.B) {
	path := datasetPath(b, "worldcitiespop-100k.txt.gz")
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		sum, err := importFile(b.Context(), memory.New(), path, importer.Request{Dataset: search.Large})
		if err != nil {
			b.Fatal(err)
		}
		rows += sum.Read
	}
	reportRows(b, rows)
}

// BenchmarkGeoNamesReader reads the GeoNames cities1000 dump as cities:
// alternate names split and deduplicated, countries named.
func BenchmarkGeoNamesReader(b *testing.B) {
	benchmarkFormat(b, importer.FormatGeoNames, mustLoad(b, "geonames-cities1000.txt.gz"))
}

// BenchmarkOpenGazetteer reads and indexes the GeoNames cities1000 dump
// that enriches an import: part of the budget of an enriched small import
// (1 s in all).
func BenchmarkOpenGazetteer(b *testing.B) {
	path := datasetPath(b, "geonames-cities1000.txt.gz")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := importer.OpenGazetteer(path); err != nil {
			b.Fatal(err)
		}
	}
}
