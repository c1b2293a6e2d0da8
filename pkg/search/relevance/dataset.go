package relevance

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// Sources are the files that `make run` imports its datasets from.
type Sources struct {
	// SmallCSV is the okfn world-cities CSV: the small dataset, and the
	// names of the large dataset's regions.
	SmallCSV string
	// GeoNames, when set, is the GeoNames dump that completes the small
	// dataset's rows (import --geonames).
	GeoNames string
	// LargeFile is the large dataset's file (GeoNames' cities1000 when
	// the mirror has it).
	LargeFile string
}

// Request returns the import of dataset d from src, as `make run` asks
// for it: small from the okfn CSV enriched with GeoNames, large from its
// file with the okfn CSV naming its regions.
func (src Sources) Request(d search.Dataset) importer.Request {
	if d == search.Large {
		return importer.Request{Dataset: d, Source: importer.Source{Name: src.LargeFile},
			RegionNames: importer.Source{Name: src.SmallCSV}}
	}
	req := importer.Request{Dataset: d, Source: importer.Source{Name: src.SmallCSV}}
	if src.GeoNames != "" {
		req.GeoNames = importer.Source{Name: src.GeoNames}
	}
	return req
}

// Import imports dataset d from src into store (see Sources.Request) and
// returns the baseline over the cities that the import handed the store,
// knowing the sections of populated places of the GeoNames dump that
// names d's places (see Baseline.Largest).
func Import(ctx context.Context, store search.Store, d search.Dataset, src Sources) (*Baseline, error) {
	rec := &recorder{Store: store}
	if _, err := (&importer.Importer{Store: rec}).Import(ctx, src.Request(d)); err != nil {
		return nil, fmt.Errorf("relevance: %w", err)
	}
	b := NewBaseline(rec.cities)
	dump := src.GeoNames
	if d == search.Large {
		dump = src.LargeFile
	}
	if dump == "" {
		return b, nil
	}
	var err error
	if b.sections, err = ReadSections(dump); err != nil {
		return nil, fmt.Errorf("relevance: %w", err)
	}
	return b, nil
}

// SectionCode is GeoNames' feature code of a section of a populated place:
// a district of a city, such as Zagreb - Centar or the St Petersburg
// district Kalininskiy.
const SectionCode = "PPLX"

// ReadSections returns the ids of the sections of populated places (see
// SectionCode) in the GeoNames dump at path; none for a file of another
// format (a MaxMind file has no feature codes).
func ReadSections(path string) (map[uint32]bool, error) {
	in, err := importer.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	r, err := importer.NewGeoNamesReader(in, importer.ReaderOptions{})
	switch {
	case errors.Is(err, importer.ErrHeader):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	sections := map[uint32]bool{}
	var batch []importer.Place
	for {
		batch, err = r.ReadBatch(batch[:0])
		for i := range batch {
			if batch[i].FeatureCode == SectionCode {
				sections[batch[i].ID] = true
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return sections, nil
		case err != nil:
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
}

// recorder is a store that keeps a copy of the cities it loads: only for
// the import, as it hides the typo search of the store it wraps.
type recorder struct {
	search.Store
	cities []search.City
}

func (r *recorder) Load(ctx context.Context, d search.Dataset, cr search.CityReader, opts search.LoadOptions) (search.LoadStats, error) {
	r.cities = r.cities[:0]
	return r.Store.Load(ctx, d, &recording{r: cr, to: r}, opts)
}

// recording is a CityReader that hands its recorder every city it reads.
type recording struct {
	r  search.CityReader
	to *recorder
}

func (r *recording) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	dst, err := r.r.ReadBatch(dst)
	r.to.cities = append(r.to.cities, dst[n:]...)
	return dst, err
}
