package importer_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cityfinder/cityfinder/pkg/importer"
	"github.com/cityfinder/cityfinder/pkg/search"
)

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    importer.Format
		wantErr string
	}{
		{"okfn header", "name,country,subcountry,geonameid", importer.FormatOKFN, ""},
		{"okfn header with BOM and CR, other case", "\ufeffName,Country,Subcountry,GeonameID\r", importer.FormatOKFN, ""},
		{"MaxMind header", "Country,City,AccentCity,Region,Population,Latitude,Longitude", importer.FormatMaxMind, ""},
		{"MaxMind header in lower case", "country,city,accentcity,region,population,latitude,longitude", importer.FormatMaxMind, ""},
		{"GeoNames row", kolnRow().first(19), importer.FormatGeoNames, ""},
		{"GeoNames row with empty columns", "1" + strings.Repeat("\t", 18), importer.FormatGeoNames, ""},
		{"an okfn row", "Tirana,Albania,Tirana,3183875", "", `the first line "Tirana,Albania,Tirana,3183875" is neither an okfn or MaxMind header nor a GeoNames row`},
		{"GeoNames row with 18 fields", kolnRow().first(18), "", "is neither"},
		{"GeoNames row without an id", kolnRow().with("geonameid", "x").first(19), "", "is neither"},
		{"GeoNames' 7-column extract", "country_code\tname\tascii_name\tadmin1\tpopulation\tlat\tlon", "", "is neither"},
		{"empty", "", "", `the first line ""`},
		{"binary", "\x1f\x8b\x08\x00\x00", "", `the first line "\x1f\x8b\b\x00\x00"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := importer.DetectFormat([]byte(tt.line))
			if tt.wantErr == "" {
				if err != nil || got != tt.want {
					t.Fatalf("DetectFormat = %q, %v; want %q", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, importer.ErrFormat) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("DetectFormat = %q, %v; want ErrFormat saying %q", got, err, tt.wantErr)
			}
			mustBeShortAndSafe(t, err.Error())
		})
	}
}

func TestInputFormat(t *testing.T) {
	okfn := "name,country,subcountry,geonameid\nTirana,Albania,Tirana,3183875\n"
	tests := []struct {
		name    string
		file    string
		data    func(t *testing.T) []byte
		want    importer.Format
		rows    int // what the format's reader reads afterwards
		wantErr string
	}{
		{"okfn", "a.csv", func(*testing.T) []byte { return []byte(okfn) }, importer.FormatOKFN, 1, ""},
		{"okfn gzipped", "a", func(t *testing.T) []byte { return mustGzip(t, []byte(okfn)) }, importer.FormatOKFN, 1, ""},
		{"MaxMind after blank lines", "b.txt", func(*testing.T) []byte { return []byte("\n\r\n" + maxmindHeader + "ad,x,X,00,,1,1\n") }, importer.FormatMaxMind, 1, ""},
		{"MaxMind header alone without a newline", "b.txt", func(*testing.T) []byte { return []byte(strings.TrimSuffix(maxmindHeader, "\n")) }, importer.FormatMaxMind, 0, ""},
		{"GeoNames gzipped", "c.gz", func(t *testing.T) []byte { return mustGzip(t, []byte(kolnRow().String())) }, importer.FormatGeoNames, 1, ""},
		{"empty", "d", func(*testing.T) []byte { return nil }, "", 0, "empty file"},
		{"blank lines only", "d", func(*testing.T) []byte { return []byte("\n\n") }, "", 0, "empty file"},
		{"something else", "e", func(*testing.T) []byte { return []byte("<html>\n") }, "", 0, `the first line "<html>" is neither`},
		{"a first line longer than a line may be", "f.gz", func(t *testing.T) []byte {
			return mustGzip(t, make([]byte, 10*importer.MaxLine))
		}, "", 0, `the first line is longer than 65536 bytes: "\x00\x00`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := importer.Open(mustWriteFile(t, tt.file, tt.data(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer in.Close()
			got, err := in.Format()
			if tt.wantErr != "" {
				if !errors.Is(err, importer.ErrFormat) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Format() = %q, %v; want ErrFormat saying %q", got, err, tt.wantErr)
				}
				mustBeShortAndSafe(t, err.Error())
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Format() = %q, %v; want %q", got, err, tt.want)
			}
			// Nothing was consumed: the format's reader reads every row.
			r, err := newFormatReader(got, in, importer.ReaderOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cities, err := search.ReadAll(r)
			if err != nil || len(cities) != tt.rows {
				t.Errorf("read %d rows after Format (%v), want %d", len(cities), err, tt.rows)
			}
		})
	}
}
