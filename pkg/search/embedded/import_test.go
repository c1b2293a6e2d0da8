package embedded_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/internal/shareddata"
	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/embedded"
)

// importGolden holds, a line per import of TestImportSnapshotBytes, its
// name and the sha256 of the snapshot it writes.
const importGolden = "testdata/import.sha256"

// An import of a real file through the importer (parsing, Latin-1
// decoding, regions, duplicates) writes the snapshot byte for byte as it
// always has (its import time aside): a change to the importer or to the
// build that means to be faster must not move a byte. A change that means
// to change the file rewrites the hashes with -update and says why in its
// commit.
func TestImportSnapshotBytes(t *testing.T) {
	t.Parallel()
	imports := []struct {
		name    string
		dataset search.Dataset
		file    string
	}{
		{"maxmind-100k", search.Large, "worldcitiespop-100k.txt.gz"},
		{"okfn", search.Small, "world-cities.csv"},
	}
	got := make(map[string]string)
	for _, im := range imports {
		path := shareddata.Path(t, im.file)
		got[im.name] = importedHash(t, im.dataset, path)
		t.Logf("%s: sha256 %s", im.name, got[im.name])
	}
	if *embedded.Update {
		var out strings.Builder
		for _, im := range imports {
			fmt.Fprintf(&out, "%s %s\n", im.name, got[im.name])
		}
		if err := os.WriteFile(importGolden, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readImportGolden(t)
	for _, im := range imports {
		if got[im.name] != want[im.name] {
			t.Errorf("%s: snapshot sha256 %s, want %s: the bytes on disk changed (rerun with -update only if that is the point of the change)", im.name, got[im.name], want[im.name])
		}
	}
}

// importedHash imports the file at path into dataset d of a new store and
// returns the sha256 of the snapshot written, its import time zeroed.
func importedHash(t *testing.T, d search.Dataset, path string) string {
	t.Helper()
	dir := t.TempDir()
	s := mustOpen(t, dir, embedded.Options{ReloadInterval: -1, Lazy: true})
	req := importer.Request{Dataset: d, Source: importer.Source{Name: path}}
	if _, err := (&importer.Importer{Store: s}).Import(t.Context(), req); err != nil {
		t.Fatalf("import %s: %v", path, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, string(d)+embedded.FileExt))
	if err != nil {
		t.Fatal(err)
	}
	embedded.ZeroImportTime(data)
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// readImportGolden returns the hashes of importGolden by import name.
func readImportGolden(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(importGolden)
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, sum, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("%s: line %q is not a name and a hash", importGolden, sc.Text())
		}
		want[name] = sum
	}
	return want
}
