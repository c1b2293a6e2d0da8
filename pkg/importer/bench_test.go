package importer_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"os"
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

func mustLoadPath(b *testing.B, path string) []byte {
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

func benchmarkFormat(b *testing.B, f importer.Format, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		r, err := newFormatReader(f, bytes.NewReader(data), importer.ReaderOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
	}
	reportRows(b, rows)
}

// BenchmarkMaxMindReader is the large import's parsing and decoding, to be
// read next to BenchmarkBareCSV: the budget is 3× its time.
func BenchmarkMaxMindReader(b *testing.B) {
	benchmarkFormat(b, importer.FormatMaxMind, maxmindBenchFile(b))
}

// BenchmarkBareCSV is a bare encoding/csv read loop over the same bytes as
// BenchmarkMaxMindReader: the floor an importer is measured against.
func BenchmarkBareCSV(b *testing.B) {
	data := maxmindBenchFile(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		r := csv.NewReader(bytes.NewReader(data))
		for {
			_, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			rows++
		}
	}
	reportRows(b, rows)
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
		sum, err := importer.ImportFile(b.Context(), memory.New(), path, importer.Options{Dataset: search.Large})
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
