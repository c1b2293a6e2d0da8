package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"golang.org/x/text/language"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// alternateNamesShape is what the first line of an alternate names file
// must look like.
const alternateNamesShape = "GeoNames alternate names (alternateNameId, geonameid, isolanguage, alternate name, " +
	"isPreferredName, isShortName, isColloquial, isHistoric[, from, to], tab-separated)"

// The columns of GeoNames' alternateNamesV2.txt; alternateNames.txt has
// the first eight.
var alternateNameColumns = []string{"alternateNameId", "geonameid", "isolanguage", "alternate name",
	"isPreferredName", "isShortName", "isColloquial", "isHistoric", "from", "to"}

// LocalNames are the names of places in particular languages, read from
// GeoNames' alternate names file (alternateNamesV2.txt, or the older
// alternateNames.txt): per place and language the one name to show (the
// preferred one, else the first that is no short name), and the names the
// place no longer goes by (historic ones, and those used only until a
// date). Colloquial names, names without a language that are not
// historic (the cities file has those) and the file's pseudo-languages
// (post codes, links, airport codes: "post", "link", "iata"…) are left
// out. Read-only once read.
type LocalNames struct {
	// Source names the file in messages.
	Source string
	// Stats counts the file's rows: Skipped those left out as above,
	// Rejected the malformed ones, with their line numbers.
	Stats  ReadStats
	byCity map[uint32][]localName
}

// localName is a search.LocalName with the rank that picks the one name
// of a language to show.
type localName struct {
	search.LocalName
	rank int
}

// The ranks of a language's names: the one GeoNames prefers, then any
// other, then a short one ("Frisco"), which is shown only when it is the
// only one.
const (
	rankShort = iota + 1
	rankPlain
	rankPreferred
)

// Len is how many places have local names.
func (n *LocalNames) Len() int { return len(n.byCity) }

// ReadLocalNames reads a GeoNames alternate names file from r (plain; the
// Importer opens .gz and .zip ones). A file more than MaxRejected of whose
// rows are malformed is refused (ErrMalformedRow), and one that does not
// start like an alternate names file (ErrHeader).
func ReadLocalNames(r io.Reader, opts ReaderOptions) (*LocalNames, error) {
	lines := newLineReader(r)
	line, err := lines.firstLine(alternateNamesShape)
	if err != nil {
		return nil, err
	}
	if !isAlternateNameRow(line) {
		return nil, fmt.Errorf("%w: the first line %s, want %s", ErrHeader, quote(line), alternateNamesShape)
	}
	lines.unread()
	p := &altNameParser{langs: make(map[string]string)}
	rows := newLineRows(lines, opts, "alternate names file", p)
	names := &LocalNames{byCity: make(map[uint32][]localName)}
	var batch []altNameRow
	for {
		batch, err = rows.ReadBatch(batch[:0])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range batch {
			names.add(&batch[i])
		}
	}
	names.Stats = rows.Stats()
	if err := tooManyRejected(names.Stats); err != nil {
		return nil, err
	}
	return names, nil
}

// add keeps row's name if it is the best of its language so far, or a
// former name not yet listed.
func (n *LocalNames) add(row *altNameRow) {
	list := n.byCity[row.city]
	for i := range list {
		l := &list[i]
		if l.Former != row.name.Former || (l.Former && l.Name != row.name.Name) || (!l.Former && l.Lang != row.name.Lang) {
			continue
		}
		if row.rank > l.rank {
			*l = localName{row.name, row.rank}
		}
		return
	}
	n.byCity[row.city] = append(list, localName{row.name, row.rank})
}

// altNameRow is one row of the file that names a place.
type altNameRow struct {
	city uint32
	name search.LocalName
	rank int
}

// altNameParser makes rows of lines; langs interns the canonical tags.
type altNameParser struct {
	langs  map[string]string
	fields [][]byte
}

// isAlternateNameRow reports whether line has the shape of a row: 8 or
// 10 tab-separated fields, the first two numbers.
func isAlternateNameRow(line []byte) bool {
	n := bytes.Count(line, []byte{'\t'}) + 1
	if n != 8 && n != len(alternateNameColumns) {
		return false
	}
	id, rest, _ := bytes.Cut(line, []byte{'\t'})
	city, _, _ := bytes.Cut(rest, []byte{'\t'})
	return isNumber(id) && isNumber(city)
}

// isNumber reports whether b is a whole number written in digits alone.
func isNumber(b []byte) bool {
	_, err := strconv.ParseUint(string(b), 10, 64)
	return err == nil
}

func (p *altNameParser) parse(line []byte) (altNameRow, string) {
	p.fields = bytes.Split(line, []byte{'\t'})
	f := p.fields
	if len(f) != 8 && len(f) != len(alternateNameColumns) {
		return altNameRow{}, fmt.Sprintf("wrong number of fields (%d, want 8 or %d)", len(f), len(alternateNameColumns))
	}
	if why := fieldTooLong(f, alternateNameColumns, -1); why != "" {
		return altNameRow{}, why
	}
	if !isNumber(f[0]) {
		return altNameRow{}, fmt.Sprintf("alternateNameId %s is not a number", quote(f[0]))
	}
	city, ok := parseID(f[1])
	if !ok {
		return altNameRow{}, fmt.Sprintf("geonameid %s is not a number from 1 to %d", quote(f[1]), uint32(math.MaxUint32))
	}
	name := f[3]
	if len(bytes.TrimSpace(name)) == 0 || !utf8.Valid(name) {
		return altNameRow{}, fmt.Sprintf("alternate name %s is empty or not UTF-8", quote(name))
	}
	var flags [4]bool // isPreferredName, isShortName, isColloquial, isHistoric
	for i := range flags {
		switch v := f[4+i]; string(v) {
		case "1":
			flags[i] = true
		case "", "0":
		default:
			return altNameRow{}, fmt.Sprintf("%s %s is not 1, 0 or empty", alternateNameColumns[4+i], quote(v))
		}
	}
	preferred, short, colloquial, historic := flags[0], flags[1], flags[2], flags[3]
	if len(f) == len(alternateNameColumns) && len(f[9]) > 0 {
		historic = true // used only until then
	}
	lang, known := p.lang(f[2])
	if colloquial || (len(f[2]) > 0 && !known) || (lang == "" && !historic) {
		return altNameRow{}, skipRow
	}
	row := altNameRow{city: city, name: search.LocalName{Lang: lang, Name: string(name), Former: historic}, rank: rankPlain}
	switch {
	case preferred:
		row.rank = rankPreferred
	case short:
		row.rank = rankShort
	}
	return row, ""
}

// parseID reads a geonameid, a whole number from 1 up.
func parseID(b []byte) (uint32, bool) {
	v, err := strconv.ParseUint(string(b), 10, 32)
	return uint32(v), err == nil && v > 0
}

// lang returns the canonical BCP 47 form of a GeoNames isolanguage, and
// whether it is a language at all: "" and the file's pseudo-languages
// ("post", "link", "fr_1793") are none.
func (p *altNameParser) lang(code []byte) (string, bool) {
	if len(code) == 0 {
		return "", false
	}
	if tag, ok := p.langs[string(code)]; ok {
		return tag, tag != ""
	}
	tag := ""
	if t, err := language.Parse(string(code)); err == nil && t != language.Und {
		tag = t.String()
	}
	p.langs[string(code)] = tag
	return tag, tag != ""
}

// Localize returns a reader of the cities of r with their local names:
// each city whose ID is a place of n gets them as LocalNames, and those
// of their names that are no key of the city yet (see search.AltKey)
// among its AltNames, so that queries find it by them, but for those that
// read as codes or machine transliterations, which the cities file's
// names leave out too (see nameTidier).
func (n *LocalNames) Localize(r search.CityReader) *LocalizedReader {
	return &LocalizedReader{r: r, names: n}
}

// LocalizedReader is the reader that LocalNames.Localize returns.
type LocalizedReader struct {
	r         search.CityReader
	names     *LocalNames
	localized int
	keys      []string
}

// Localized is how many cities read so far got local names.
func (lr *LocalizedReader) Localized() int { return lr.localized }

// ReadBatch reads the next cities of its reader and gives them their
// local names.
func (lr *LocalizedReader) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	dst, err := lr.r.ReadBatch(dst)
	for i := n; i < len(dst); i++ {
		c := &dst[i]
		if c.ID == 0 {
			continue
		}
		if list, ok := lr.names.byCity[c.ID]; ok {
			lr.localize(c, list)
		}
	}
	return dst, err
}

// localize gives c its local names; AltNames is replaced, never written
// into (see search.CityReader).
func (lr *LocalizedReader) localize(c *search.City, list []localName) {
	c.LocalNames = make([]search.LocalName, len(list))
	lr.keys = lr.keys[:0]
	for _, alt := range c.AltNames {
		lr.keys = append(lr.keys, search.AltKey(alt))
	}
	alts := c.AltNames
	for i := range list {
		c.LocalNames[i] = list[i].LocalName
		name := list[i].Name
		key := search.AltKey(name)
		if key == "" || key == c.Slug || slices.Contains(lr.keys, key) || utf8.RuneCountInString(name) > MaxAltNameRunes ||
			codeLike(name) || uncapitalised(name) { // as the cities file's names are tidied
			continue
		}
		if len(alts) == len(c.AltNames) {
			alts = slices.Clip(alts)
		}
		alts = append(alts, name)
		lr.keys = append(lr.keys, key)
	}
	c.AltNames = alts
	lr.localized++
}
