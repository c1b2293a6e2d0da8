package importer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Format is a dataset file's format.
type Format string

// The formats the importer reads.
const (
	// FormatOKFN is the okfn world-cities CSV (see OKFNReader).
	FormatOKFN Format = "okfn"
	// FormatMaxMind is MaxMind's world cities file (see MaxMindReader).
	FormatMaxMind Format = "maxmind"
	// FormatGeoNames is the GeoNames dump's geoname table (see
	// GeoNamesReader).
	FormatGeoNames Format = "geonames"
)

// DetectFormat tells the format of a dataset file from its first line
// (decompressed, without its line ending; a UTF-8 BOM and a CR are
// ignored): the okfn header, the MaxMind header (both in any case), or a
// GeoNames row (19 tab-separated fields starting with a numeric id).
// Anything else is an error wrapping ErrFormat that quotes the line's start.
func DetectFormat(line []byte) (Format, error) {
	line = bytes.TrimPrefix(line, utf8BOM)
	line = bytes.TrimSuffix(line, []byte{'\r'})
	switch {
	case isGeoNamesRow(line):
		return FormatGeoNames, nil
	case len(line) > MaxLine: // no header is that long: not worth splitting
	case headerMatches(strings.Split(string(line), ","), okfnColumns):
		return FormatOKFN, nil
	case headerMatches(strings.Split(string(line), ","), maxmindColumns):
		return FormatMaxMind, nil
	}
	return "", fmt.Errorf("%w: the first line %s is neither an okfn or MaxMind header nor %s", ErrFormat, quote(line), geonamesRowShape)
}

// Format tells the format of the file from its first non-blank line (see
// DetectFormat) without consuming anything: the readers read the file from
// its start afterwards.
func (in *Input) Format() (Format, error) {
	b, err := in.out.Peek(in.out.Size())
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return "", fmt.Errorf("read the first line: %w", err)
	}
	b = bytes.TrimPrefix(b, utf8BOM)
	for {
		line, rest, found := bytes.Cut(b, []byte{'\n'})
		switch {
		case !found && len(b) == in.out.Size():
			return "", fmt.Errorf("%w: the first line is longer than %d bytes: %s", ErrFormat, MaxLine, quote(line))
		case len(bytes.TrimSuffix(line, []byte{'\r'})) > 0:
			return DetectFormat(line)
		case !found:
			return "", fmt.Errorf("%w: empty file", ErrFormat)
		}
		b = rest
	}
}
