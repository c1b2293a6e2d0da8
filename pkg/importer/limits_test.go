package importer_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

// limitFormats are the three formats with a header (the first line of a
// GeoNames file is a row) and a way to make a row with a given name.
var limitFormats = []struct {
	format importer.Format
	header string
	row    func(name string) string
}{
	{importer.FormatOKFN, "name,country,subcountry,geonameid\n", func(name string) string { return name + ",Albania,Tirana,1\n" }},
	{importer.FormatMaxMind, maxmindHeader, func(name string) string { return "ad,x," + name + ",06,,42.5,1.5\n" }},
	{importer.FormatGeoNames, kolnRow().String(), func(name string) string { return kolnRow().with("name", name).String() }},
}

// mustBeShortAndSafe fails unless msg quotes little of the input and holds
// nothing a terminal would act on.
func mustBeShortAndSafe(tb testing.TB, msg string) {
	tb.Helper()
	if len(msg) > 400 || !utf8.ValidString(msg) || strings.ContainsFunc(msg, unicode.IsControl) {
		tb.Fatalf("message of %d bytes, want under 400 bytes of printable UTF-8: %.500q", len(msg), msg)
	}
}

func TestReadersBoundLinesAndFields(t *testing.T) {
	atField := strings.Repeat("a", importer.MaxField)
	tests := []struct {
		name       string
		rows       func(row func(string) string) string
		wantNames  []string
		wantReason string // of the one rejected row, at line 3
	}{
		{
			name:      "a name as long as a field may be",
			rows:      func(row func(string) string) string { return row(atField) + row("After") },
			wantNames: []string{atField, "After"},
		},
		{
			name:       "a name longer than a field may be",
			rows:       func(row func(string) string) string { return row("Before") + row(atField+"b") + row("After") },
			wantNames:  []string{"Before", "After"},
			wantReason: fmt.Sprintf("longer than %d bytes: \"aaaa", importer.MaxField),
		},
		{
			name: "a line longer than a line may be",
			rows: func(row func(string) string) string {
				return row("Before") + row(strings.Repeat("b", importer.MaxLine)) + row("After")
			},
			wantNames:  []string{"Before", "After"},
			wantReason: fmt.Sprintf("line longer than %d bytes: \"", importer.MaxLine),
		},
		{
			name: "a line of NUL bytes",
			rows: func(row func(string) string) string {
				return row("Before") + strings.Repeat("\x00", 3*importer.MaxLine) + "\n" + row("After")
			},
			wantNames:  []string{"Before", "After"},
			wantReason: `line longer than 65536 bytes: "\x00\x00`,
		},
		{
			name:       "an over-long last line without a newline",
			rows:       func(row func(string) string) string { return row("Before") + strings.Repeat("c", 2*importer.MaxLine) },
			wantNames:  []string{"Before"},
			wantReason: `line longer than 65536 bytes: "ccc`,
		},
		{
			name:       "terminal escapes in a bad field",
			rows:       func(row func(string) string) string { return row("Before") + row("\x1b[\x1b]\a") + row("After") },
			wantNames:  []string{"Before", "After"},
			wantReason: `name "\x1b[\x1b]\a" has no letters or digits`,
		},
	}
	for _, f := range limitFormats {
		for _, tt := range tests {
			t.Run(string(f.format)+"/"+tt.name, func(t *testing.T) {
				r, err := newFormatReader(f.format, stringsReader(f.header+tt.rows(f.row)), importer.ReaderOptions{})
				if err != nil {
					t.Fatal(err)
				}
				cities, err := search.ReadAll(r)
				if err != nil {
					t.Fatal(err)
				}
				got := names(cities)
				if f.format == importer.FormatGeoNames {
					got = got[1:] // the first line is Köln
				}
				if strings.Join(got, "|") != strings.Join(tt.wantNames, "|") {
					t.Errorf("names = %.80q, want %.80q", got, tt.wantNames)
				}
				st := r.Stats()
				if tt.wantReason == "" {
					if st.Rejected != 0 {
						t.Errorf("rejected %v, want none", st.Rejections)
					}
					return
				}
				if st.Rejected != 1 || st.Rejections[0].Line != 3 || !strings.Contains(st.Rejections[0].Reason, tt.wantReason) {
					t.Fatalf("rejected %d: %.300q; want line 3 saying %q", st.Rejected, st.Rejections, tt.wantReason)
				}
				mustBeShortAndSafe(t, st.Rejections[0].Error())
			})
		}
	}
}

func TestReadersRefuseAnOverlongFirstLine(t *testing.T) {
	for _, f := range limitFormats {
		for _, first := range []string{strings.Repeat("n", 3*importer.MaxLine), strings.Repeat("\x00", 3*importer.MaxLine)} {
			t.Run(string(f.format), func(t *testing.T) {
				_, err := newFormatReader(f.format, stringsReader(first+"\n"+f.header), importer.ReaderOptions{})
				if !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), "line 1 is longer than 65536 bytes") {
					t.Fatalf("err = %.300v, want ErrHeader saying line 1 is too long", err)
				}
				mustBeShortAndSafe(t, err.Error())
			})
		}
	}
}

func TestReadersQuoteLittleOfABadHeader(t *testing.T) {
	header := strings.Repeat("é", 30_000) + "\x1b[31m" // under MaxLine, far over what a message may quote
	for _, f := range limitFormats {
		t.Run(string(f.format), func(t *testing.T) {
			_, err := newFormatReader(f.format, stringsReader(header+"\n"), importer.ReaderOptions{})
			if !errors.Is(err, importer.ErrHeader) || !strings.Contains(err.Error(), `"éééé`) || !strings.Contains(err.Error(), `"…`) {
				t.Fatalf("err = %.300v, want ErrHeader quoting the header's start and marking the cut", err)
			}
			mustBeShortAndSafe(t, err.Error())
		})
	}
}
