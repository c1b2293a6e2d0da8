package embedded

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/search"
)

var update = flag.Bool("update", false, "rewrite testdata/snapshot.sha256 from the snapshot built now")

// goldenHash holds the sha256 of the snapshot that TestSnapshotBytes builds.
const goldenHash = "testdata/snapshot.sha256"

// The snapshot of a real dataset, with alternate names, populations,
// locations, duplicates and heavy prefixes, is byte for byte the one the
// format has always written for it (its import time aside): a refactor of
// the build or of the layout types must not move a byte. A change that
// means to change the file (a new version, another ranking) rewrites the
// hash with -update and says why in its commit.
func TestSnapshotBytes(t *testing.T) {
	t.Parallel()
	cities := geoNamesCities(t)
	path := filepath.Join(t.TempDir(), "large"+FileExt)
	b := build{scanLimit: DefaultScanLimit, listCap: search.MaxLimit, source: search.Source{Name: "cities1000.txt.gz", Size: 1234}, enter: func(string) {}}
	if _, err := buildFile(t.Context(), &search.SliceReader{Cities: cities}, path, b, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The 4-byte gram starts of a real dataset, while it is built.
	snap, err := parseSnapshot(data)
	if err != nil {
		t.Fatal(err)
	}
	assertGramsAgree(t, snap)
	binary.LittleEndian.PutUint64(data[hImported:], 0) // the only field that changes from run to run
	sum := sha256.Sum256(data)
	got := hex.EncodeToString(sum[:])
	t.Logf("%d cities, snapshot of %d bytes, sha256 %s", len(cities), len(data), got)
	if *update {
		if err := os.WriteFile(goldenHash, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenHash)
	if err != nil {
		t.Fatal(err)
	}
	if got != strings.TrimSpace(string(want)) {
		t.Errorf("snapshot sha256 %s, want %s: the bytes on disk changed (rerun with -update only if that is the point of the change)", got, strings.TrimSpace(string(want)))
	}
}

// sharedGeoNames is the shared GeoNames dump as readGeoNames reads it, read
// once for the tests that build it.
var sharedGeoNames struct {
	once   sync.Once
	cities []search.City
}

// geoNamesCities returns a copy of the cities of the shared GeoNames dump.
func geoNamesCities(t *testing.T) []search.City {
	t.Helper()
	path := shareddata.Path(t, "geonames-cities1000.txt.gz")
	sharedGeoNames.once.Do(func() { sharedGeoNames.cities = readGeoNames(t, path) })
	if sharedGeoNames.cities == nil {
		t.Fatal("the shared GeoNames dump could not be read")
	}
	return slices.Clone(sharedGeoNames.cities)
}

// readGeoNames reads a GeoNames cities dump simply, with none of the
// importer's rules: the bytes of the snapshot are the store's business.
func readGeoNames(tb testing.TB, path string) []search.City {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var cities []search.City
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 15 {
			tb.Fatalf("row %d: %d fields", len(cities)+1, len(f))
		}
		id, err1 := strconv.ParseUint(f[0], 10, 32)
		lat, err2 := strconv.ParseFloat(f[4], 64)
		lon, err3 := strconv.ParseFloat(f[5], 64)
		pop, err4 := strconv.ParseInt(f[14], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			tb.Fatalf("row %d: %q", len(cities)+1, sc.Text())
		}
		c := search.City{ID: uint32(id), Name: f[1], Slug: search.Slug(f[1]), Country: f[8], CountryCode: strings.ToLower(f[8]),
			Subcountry: f[10], Region: f[11], Population: pop, Lat: lat, Lon: lon, HasLocation: true}
		if c.Slug == "" {
			continue
		}
		if f[3] != "" {
			c.AltNames = strings.Split(f[3], ",")
		}
		cities = append(cities, c)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return cities
}

// The build keeps, of a real dataset's cities, exactly those that
// search.Collect keeps, in the same order: one most-populous-wins rule
// (search.KeepFirst after the order of search.Compare), whether a store
// sorts City values or records.
func TestBuildKeepsWhatCollectKeeps(t *testing.T) {
	t.Parallel()
	cities := geoNamesCities(t)
	want, _, err := search.Collect(t.Context(), &search.SliceReader{Cities: slices.Clone(cities)})
	if err != nil {
		t.Fatal(err)
	}
	dropped := len(cities) - len(want)
	if dropped == 0 {
		t.Fatal("no city of the dataset is a duplicate: the test shows nothing")
	}
	b := newBuilder()
	for i := range cities {
		if err := b.add(&cities[i]); err != nil {
			t.Fatal(err)
		}
	}
	src := b.asRead()
	got := sortCities(src)
	t.Logf("%d cities, %d duplicates dropped", len(cities), dropped)
	if len(got) != len(want) {
		t.Fatalf("the build keeps %d cities, search.Collect %d", len(got), len(want))
	}
	for i, rec := range got {
		if id, slug := src.rec(rec).id(), string(src.slug(rec)); id != want[i].ID || slug != want[i].Slug {
			t.Fatalf("city %d: the build keeps %d (%s), search.Collect %d (%s)", i, id, slug, want[i].ID, want[i].Slug)
		}
	}
}
