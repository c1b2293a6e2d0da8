package importer_test

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

const serviceOKFN = "name,country,subcountry,geonameid\nKöln,Germany,North Rhine-Westphalia,2886242\nBerlin,Germany,Berlin,2950159\n"

// An input that the source's format cannot use is refused before it is
// read, naming its role, and the dataset keeps its content.
func TestImportRefusesInputsTheFormatCannotUse(t *testing.T) {
	dump := writeTemp(t, "cities500.txt", kolnRow().String())
	okfn := writeTemp(t, "world-cities.csv", serviceOKFN)
	never := importer.Source{Name: filepath.Join(t.TempDir(), "never-read")}
	for _, tc := range []struct {
		name    string
		req     importer.Request
		role    importer.Role
		message string
	}{
		{"a gazetteer for a GeoNames dump", importer.Request{Dataset: search.Large, Source: importer.Source{Name: dump}, GeoNames: never},
			importer.RoleGeoNames, "is itself a GeoNames dump"},
		{"region names for an okfn CSV", importer.Request{Dataset: search.Small, Source: importer.Source{Name: okfn}, RegionNames: never},
			importer.RoleRegionNames, "name their regions themselves"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newRecordingStore(t)
			_, err := (&importer.Importer{Store: store}).Import(t.Context(), tc.req)
			var ie *importer.InputError
			if !errors.As(err, &ie) || ie.Role != tc.role || !errors.Is(err, importer.ErrUnusedInput) || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("err = %v, want an InputError of %s wrapping ErrUnusedInput that says %q", err, tc.role, tc.message)
			}
			if st, err := store.Stats(t.Context(), tc.req.Dataset); !errors.Is(err, search.ErrEmptyDataset) {
				t.Errorf("the refused import loaded %d cities (%v)", st.Cities, err)
			}
		})
	}

	// An input that cannot be read names its role and file.
	_, err := (&importer.Importer{Store: newRecordingStore(t)}).Import(t.Context(),
		importer.Request{Dataset: search.Small, Source: importer.Source{Name: okfn}, GeoNames: importer.Source{Name: okfn}})
	var ie *importer.InputError
	if !errors.As(err, &ie) || ie.Role != importer.RoleGeoNames || !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), "GeoNames file "+okfn) {
		t.Errorf("an okfn CSV as the gazetteer: err = %v, want an InputError of GeoNames naming it", err)
	}
}

// A source is a path, "-" for the Importer's Stdin, a reader, or a URL
// downloaded once into Download.Dir; each reads the same rows, and a zip
// archive on a stream too.
func TestImportSources(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		io.WriteString(w, serviceOKFN)
	}))
	defer srv.Close()
	zipped := mustZip(t, "cities500.zip", zip.Deflate, "cities500.txt", kolnRow().String())
	zipData, err := os.ReadFile(zipped)
	if err != nil {
		t.Fatal(err)
	}
	downloads := filepath.Join(t.TempDir(), "downloads")
	for _, tc := range []struct {
		name    string
		dataset search.Dataset
		source  importer.Source
		stdin   io.Reader
		want    []string
	}{
		{"a path", search.Small, importer.Source{Name: writeTemp(t, "world-cities.csv", serviceOKFN)}, nil, []string{"Köln", "Berlin"}},
		{"standard input", search.Small, importer.Source{Name: "-"}, strings.NewReader(serviceOKFN), []string{"Köln", "Berlin"}},
		{"a reader", search.Small, importer.Source{Reader: stringsReader(serviceOKFN)}, nil, []string{"Köln", "Berlin"}},
		{"a URL", search.Small, importer.Source{Name: srv.URL + "/data/world-cities.csv"}, nil, []string{"Köln", "Berlin"}},
		{"the URL again, from its copy", search.Small, importer.Source{Name: srv.URL + "/data/world-cities.csv"}, nil, []string{"Köln", "Berlin"}},
		{"a zip on a stream", search.Large, importer.Source{Reader: io.MultiReader(bytes.NewReader(zipData))}, nil, []string{"Köln"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := newRecordingStore(t)
			var stages []importer.Stage
			im := importer.Importer{Store: store, Stdin: tc.stdin}
			_, err := im.Import(t.Context(), importer.Request{Dataset: tc.dataset, Source: tc.source, Download: importer.DownloadOptions{Dir: downloads},
				Progress: func(s importer.Stage) importer.Progress { stages = append(stages, s); return nil }})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(store.cities); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("cities %q, want %q", got, tc.want)
			}
			if len(stages) == 0 || stages[len(stages)-1].URL != "" {
				t.Errorf("stages %+v, want the reading last", stages)
			}
		})
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d downloads, want 1", n)
	}
	if _, err := os.Stat(filepath.Join(downloads, "world-cities.csv")); err != nil {
		t.Errorf("no copy of the download: %v", err)
	}

	// Without a directory to download into, a URL is refused.
	_, err = (&importer.Importer{Store: newRecordingStore(t)}).Import(t.Context(), importer.Request{Dataset: search.Small, Source: importer.Source{Name: srv.URL + "/x.csv"}})
	if err == nil || !strings.Contains(err.Error(), "no directory to download into") {
		t.Errorf("a URL without Download.Dir: err = %v", err)
	}
}

// The URL of a copy behind basic authentication carries a password, which
// neither the download's stage nor its error shows.
func TestImportNeverShowsADownloadsPassword(t *testing.T) {
	const password = "S3cr%3Fet"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such file", http.StatusNotFound)
	}))
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://user:"+password+"@", 1) + "/world-cities.csv"
	var stages []importer.Stage
	im := importer.Importer{Store: newRecordingStore(t)}
	_, err := im.Import(t.Context(), importer.Request{Dataset: search.Small, Source: importer.Source{Name: u},
		Download: importer.DownloadOptions{Dir: t.TempDir()},
		Progress: func(s importer.Stage) importer.Progress { stages = append(stages, s); return nil }})
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err = %v, want the server's 404", err)
	}
	shown := fmt.Sprint(err, stages, importer.Source{Name: u})
	for _, secret := range []string{password, "S3cr?et"} {
		if strings.Contains(shown, secret) {
			t.Errorf("the password shows in %q", shown)
		}
	}
	if !strings.Contains(shown, "user:xxxxx@") {
		t.Errorf("%q does not name the URL, its password masked", shown)
	}
}
