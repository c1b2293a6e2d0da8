package importer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Region names: GeoNames and MaxMind give a city's first-level division as
// a code ("40", "ENG", "Q6"), which means nothing to people. The okfn CSV,
// which is built from GeoNames, names the division of each of its cities
// and gives the city's geonameid; a GeoNames dump gives the admin1 code of
// each geonameid. Joined, they name the divisions by code.
const (
	// regionAgreement is the share of a division's votes that its name
	// needs: a code whose cities disagree (a division merged or split since
	// one of the files was made) gets no name rather than a wrong one.
	regionAgreement = 2.0 / 3
	// maxRegionRun bounds the rows of one country that a MaxMind import
	// holds back while it learns what its region codes stand for (the
	// largest country of MaxMind's file, China, has 239 thousand).
	maxRegionRun = 1 << 18
)

// PhaseRegionNames is the step of an import that reads a GeoNames dump's
// codes to name its regions, before it reads the rows (see Options.Phase).
const PhaseRegionNames = "reading the region names"

// Subcountries are the division names (the subcountry column) of the okfn
// CSV's cities, by geonameid: what names the regions of a GeoNames dump or
// a MaxMind file (see Options.Subcountries). Read-only once read, and safe
// for concurrent use.
type Subcountries struct {
	byID map[uint32]string
	// Source is the file they come from, for messages.
	Source string
}

// OpenSubcountries reads the okfn CSV at path (see ReadSubcountries).
// Errors name the file.
func OpenSubcountries(path string) (*Subcountries, error) {
	s, err := readFile(path, "okfn file", ReadSubcountries)
	if err != nil {
		return nil, err
	}
	s.Source = path
	return s, nil
}

// ReadSubcountries reads an okfn CSV (see OKFNReader): the subcountry of
// each row with a geonameid and a subcountry. A file with another header
// is an error wrapping ErrHeader; one with more than MaxRejected of its
// rows malformed, one wrapping ErrMalformedRow.
func ReadSubcountries(r io.Reader) (*Subcountries, error) {
	or, err := NewOKFNReader(r, ReaderOptions{})
	if err != nil {
		return nil, err
	}
	s := &Subcountries{byID: make(map[uint32]string)}
	for {
		c, err := or.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if c.ID != 0 && c.Subcountry != "" {
			s.byID[c.ID] = c.Subcountry
		}
	}
	if err := tooManyRejected(or.Stats()); err != nil {
		return nil, err
	}
	return s, nil
}

// Len is how many cities s names the division of.
func (s *Subcountries) Len() int { return len(s.byID) }

// tooManyRejected fails a file whose rows are more than MaxRejected
// malformed: it is most likely not the file it claims to be.
func tooManyRejected(st ReadStats) error {
	if float64(st.Rejected) <= MaxRejected*float64(st.Rows) {
		return nil
	}
	first := ""
	if len(st.Rejections) > 0 {
		first = ", the first at " + st.Rejections[0].Error()
	}
	return fmt.Errorf("%w: %d of its %d rows%s", ErrMalformedRow, st.Rejected, st.Rows, first)
}

// RegionNames names the first-level divisions of GeoNames places by country
// and admin1 code: each division takes the subcountry that at least two
// thirds of its okfn cities agree on, and each okfn city keeps its own
// (see Name). The codes "" and "00" (unknown) name nothing. Read-only once
// built, and safe for concurrent use.
type RegionNames struct {
	byDivision map[regionKey]string
	byID       map[uint32]string
}

// regionKey is a first-level division: a country and an admin1 code.
type regionKey struct {
	country code
	admin1  string
}

// votes counts, for each group of cities, the names they stand for.
type votes[K comparable] map[K]map[string]int

func (v votes[K]) add(k K, name string) {
	if v[k] == nil {
		v[k] = make(map[string]int, 1)
	}
	v[k][name]++
}

// winner is the name that at least regionAgreement of group k's votes
// agree on; "" and false when there is none.
func (v votes[K]) winner(k K) (string, bool) {
	total, best, name := 0, 0, ""
	for n, count := range v[k] {
		total += count
		if count > best || count == best && n < name {
			best, name = count, n
		}
	}
	if best == 0 || float64(best) < regionAgreement*float64(total) {
		return "", false
	}
	return name, true
}

// regionVoter builds RegionNames from the places of a GeoNames dump.
type regionVoter struct {
	s     *Subcountries
	votes votes[regionKey]
}

func newRegionVoter(s *Subcountries) *regionVoter {
	return &regionVoter{s: s, votes: make(votes[regionKey])}
}

// add counts the place id of country in division admin1.
func (v *regionVoter) add(id uint32, country code, admin1 string) {
	if name, ok := v.s.byID[id]; ok && knownDivision(country, admin1) {
		v.votes.add(regionKey{country, admin1}, name)
	}
}

func (v *regionVoter) names() *RegionNames {
	r := &RegionNames{byDivision: make(map[regionKey]string, len(v.votes)), byID: v.s.byID}
	for k := range v.votes {
		if name, ok := v.votes.winner(k); ok {
			r.byDivision[k] = name
		}
	}
	return r
}

// knownDivision reports whether admin1 is the code of a division of
// country rather than none at all.
func knownDivision(country code, admin1 string) bool {
	return country != (code{}) && admin1 != "" && admin1 != "00"
}

// RegionNames names the divisions of g's places with s.
func (g *Gazetteer) RegionNames(s *Subcountries) *RegionNames {
	v := newRegionVoter(s)
	for i := range g.places {
		p := &g.places[i]
		v.add(p.id, p.country, g.admin1s[p.admin1])
	}
	return v.names()
}

// OpenRegionNames reads the GeoNames dump at path (plain, .gz or .zip; see
// Open) and names the divisions of its places with s (see
// ReadRegionNames). Errors name the file.
func OpenRegionNames(path string, s *Subcountries) (*RegionNames, error) {
	return readFile(path, "GeoNames file", func(r io.Reader) (*RegionNames, error) { return ReadRegionNames(r, s) })
}

// ReadRegionNames reads the ids, country and admin1 codes of the places of
// a GeoNames dump (see NewGeoNamesReader) and names their divisions with
// s. It reads nothing else of a row, and leaves malformed rows to the
// import to count: only a file that is no GeoNames dump fails (ErrHeader).
func ReadRegionNames(r io.Reader, s *Subcountries) (*RegionNames, error) {
	lines, err := geonamesLines(r)
	if err != nil {
		return nil, err
	}
	pl := pipeline{workers: max(1, runtime.GOMAXPROCS(0)), batchLines: batchLines}
	pr := newParallelReader(lines, ReaderOptions{}, "GeoNames file", pl, func() *divisionParser { return &divisionParser{s: s} })
	defer pr.Close()
	v := newRegionVoter(s)
	for {
		p, err := pr.Read()
		if errors.Is(err, io.EOF) {
			return v.names(), nil
		}
		if err != nil {
			return nil, err
		}
		v.add(p.id, p.country, p.admin1)
	}
}

// placeDivision is a place of a GeoNames dump and its division.
type placeDivision struct {
	id      uint32
	country code
	admin1  string
}

// divisionParser reads the division of the places of a GeoNames dump that
// the okfn file names, and skips every other line.
type divisionParser struct {
	s      *Subcountries
	code   []byte
	values interner
}

func (p *divisionParser) parse(line []byte) (placeDivision, string) {
	first, _, _ := bytes.Cut(line, []byte{'\t'})
	id, ok := parseID(first)
	if _, named := p.s.byID[id]; !ok || !named {
		return placeDivision{}, skipRow
	}
	var f [gnAdmin1 + 1][]byte
	if splitFields(f[:], line, '\t') != len(geonamesColumns) {
		return placeDivision{}, skipRow
	}
	if p.code, ok = appendCountryCode(p.code[:0], bytes.TrimSpace(f[gnCountry]), false); !ok {
		return placeDivision{}, skipRow
	}
	return placeDivision{id: id, country: code{p.code[0], p.code[1]}, admin1: p.values.get(bytes.TrimSpace(f[gnAdmin1]))}, ""
}

// parseID parses a geonameid: 1 to 10 digits, less than 2³².
func parseID(b []byte) (uint32, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return uint32(n), n > 0 && n <= math.MaxUint32
}

// Len is how many divisions r names.
func (r *RegionNames) Len() int { return len(r.byDivision) }

// Name returns the name of a place's first-level division: the okfn
// subcountry of the place with geonameid id when there is one (0 for
// none), else the name of division admin1 of the country (a lower-case ISO
// code), else "".
func (r *RegionNames) Name(id uint32, country, admin1 string) string {
	return r.name(id, countryCode(country), admin1)
}

func (r *RegionNames) name(id uint32, country code, admin1 string) string {
	if name, ok := r.byID[id]; ok {
		return name
	}
	return r.division(country, admin1)
}

func (r *RegionNames) division(country code, admin1 string) string {
	if !knownDivision(country, admin1) {
		return ""
	}
	return r.byDivision[regionKey{country, admin1}]
}

// regionReader gives the cities of another reader the names of their
// regions, and counts the cities that have one.
type regionReader struct {
	r     search.CityReader
	names *RegionNames
	// learn says that the cities' Region codes are not GeoNames' (MaxMind
	// rows): a city that was joined with a GeoNames place comes with the
	// name of the place's region (see locatedEnricher), and the cities of
	// a country are held back until its codes are learnt from them.
	learn bool
	named int

	run     []search.City // a country's cities, held back
	next    int           // the next of run to return
	pending search.City   // the first city of the next run
	held    bool          // pending holds a city
	err     error         // what Read returns after run
}

// Read returns the next city, with its region's name as Subcountry when
// one is known.
func (r *regionReader) Read() (search.City, error) {
	if !r.learn {
		c, err := r.r.Read()
		if err == nil && c.Subcountry == "" {
			c.Subcountry = r.names.Name(c.ID, c.CountryCode, c.Region)
		}
		if err == nil && c.Subcountry != "" {
			r.named++
		}
		return c, err
	}
	if r.next == len(r.run) {
		if r.err != nil {
			return search.City{}, r.err
		}
		r.readRun()
	}
	if r.next == len(r.run) {
		return search.City{}, r.err
	}
	c := r.run[r.next]
	r.run[r.next] = search.City{} // let the run forget it
	r.next++
	if c.Subcountry != "" {
		r.named++
	}
	return c, nil
}

// readRun reads the next run of cities of one country (at most
// maxRegionRun), and names their regions: each code takes the name of the
// GeoNames division of that code, as MaxMind's codes are mostly GeoNames'
// own, else the name that its cities joined with a GeoNames place agree on
// (see votes.winner): codes of another system, such as the FIPS codes of
// British counties, or codes that GeoNames changed since its dump was
// made. A city joined with a place keeps its place's region name when its
// code names nothing, or is no code ("00").
func (r *regionReader) readRun() {
	r.run, r.next = r.run[:0], 0
	if r.held {
		r.run, r.held = append(r.run, r.pending), false
	}
	for len(r.run) < maxRegionRun {
		c, err := r.r.Read()
		if err != nil {
			r.err = err
			break
		}
		if len(r.run) > 0 && c.CountryCode != r.run[0].CountryCode {
			r.pending, r.held = c, true
			break
		}
		r.run = append(r.run, c)
	}
	if len(r.run) == 0 {
		return
	}
	country := countryCode(r.run[0].CountryCode)
	learnt := make(votes[string])
	for i := range r.run {
		if c := &r.run[i]; c.Subcountry != "" && knownDivision(country, c.Region) {
			learnt.add(c.Region, c.Subcountry)
		}
	}
	byCode := make(map[string]string) // the name of each code, once decided
	for i := range r.run {
		c := &r.run[i]
		if !knownDivision(country, c.Region) {
			continue
		}
		name, ok := byCode[c.Region]
		if !ok {
			if name = r.names.division(country, c.Region); name == "" {
				name, _ = learnt.winner(c.Region)
			}
			byCode[c.Region] = name
		}
		if name != "" {
			c.Subcountry = name
		}
	}
}
