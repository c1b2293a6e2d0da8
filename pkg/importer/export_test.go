package importer

import (
	"io"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// GeoNamesColumns lets the tests name a GeoNames row's columns as the
// reader does.
var GeoNamesColumns = geonamesColumns

// ParallelReader is the reader an import reads a file with.
type ParallelReader interface {
	search.CityReader
	Stats() ReadStats
	Close()
}

// NewParallelReader returns the reader an import reads format f with, with
// n workers and batches of at most lines lines.
func NewParallelReader(f Format, r io.Reader, opts ReaderOptions, n, lines int) (ParallelReader, error) {
	return newImportReader(f, r, opts, pipeline{workers: n, batchLines: lines})
}
