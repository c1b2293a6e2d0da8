package embedded

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/search"
	"github.com/cityfinder/cityfinder/pkg/search/storetest"
)

// The header reads back as written, and a damaged one is refused with the
// same words whether the snapshot is read into memory (parseSnapshot) or
// through a buffer (readStats): both decode and validate it the same way.
func TestHeader(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{ReloadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.MustLoad(t, s, search.Large, storetest.ReferenceCities(300)...)
	data, err := os.ReadFile(s.Path(search.Large))
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeHeader(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.validate(uint64(len(data))); err != nil {
		t.Fatal(err)
	}
	var again [headerSize]byte
	h.put(again[:])
	if string(again[:]) != string(data[:headerSize]) {
		t.Fatal("a decoded header does not encode to the bytes it was read from")
	}

	put32 := func(off int, v uint32) func([]byte) []byte {
		return func(b []byte) []byte { binary.LittleEndian.PutUint32(b[off:], v); return b }
	}
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"too short for a magic", func(b []byte) []byte { return b[:5] }, "not a cityfinder snapshot"},
		{"another magic", func(b []byte) []byte { b[0] = 'X'; return b }, "not a cityfinder snapshot"},
		{"another version", put32(hVersion, version+1), "this build reads"},
		{"header cut short", func(b []byte) []byte { return b[:headerSize-1] }, "header cut short"},
		{"a section past the end", put32(hSections+16*secTrie, uint32(len(data))), "outside file"},
		{"more records than the section holds", put32(hRecords, h.records+1), "section sizes"},
		{"more cities than records", put32(hCities, h.records+1), "section sizes"},
		{"more word keys than the section holds", put32(hWords, h.words+1), "words section"},
		{"more alternate names than their section holds", put32(hAlts, h.alts+1), "alternate names sections"},
		{"more heavy prefixes than their section holds", put32(hHeavy, h.heavy+1), "heavy section"},
		{"a source name past the blob", put32(hSourceLen, uint32(h.sections[secBlob].len)+1), "source name outside the blob"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			damaged := tc.damage(slices.Clone(data))
			_, parseErr := parseSnapshot(damaged)
			path := filepath.Join(t.TempDir(), "damaged"+FileExt)
			if err := os.WriteFile(path, damaged, 0o644); err != nil {
				t.Fatal(err)
			}
			_, statsErr := readStats(path)
			for _, err := range []error{parseErr, statsErr} {
				if !errors.Is(err, errCorrupt) || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("err = %v, want errCorrupt saying %q", err, tc.want)
				}
			}
			if parseErr != nil && statsErr != nil && parseErr.Error() != statsErr.Error() {
				t.Errorf("parseSnapshot says %q, readStats %q", parseErr, statsErr)
			}
		})
	}
}
