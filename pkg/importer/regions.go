package importer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

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

// Subcountries are the division names (the subcountry column) of the okfn
// CSV's cities, by geonameid: what names the regions of a GeoNames dump or
// a MaxMind file (see Request.RegionNames). Read-only once read, and safe
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
	var batch []search.City
	for {
		batch, err = or.ReadBatch(batch[:0])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range batch {
			if c := &batch[i]; c.ID != 0 && c.Subcountry != "" {
				s.byID[c.ID] = c.Subcountry
			}
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

// sameCountryRun reports whether c joins the run of n cities that starts
// with first: one of a country, at most maxRegionRun cities.
func sameCountryRun(first, c *search.City, n int) bool {
	return c.CountryCode == first.CountryCode && n < maxRegionRun
}

// heldCities hands out, in order and in batches, the cities that a region
// namer held back until it knew the names of their regions, and counts
// those that have one.
type heldCities struct {
	run   []search.City
	next  int // the next of run to return
	named int
}

// take appends the next held cities to dst, at most batchLines of them,
// and returns the extended slice, as long as dst when none is left.
func (h *heldCities) take(dst []search.City) []search.City {
	batch := h.run[h.next:min(len(h.run), h.next+batchLines)]
	for i := range batch {
		if batch[i].Subcountry != "" {
			h.named++
		}
	}
	dst = append(dst, batch...)
	clear(batch) // let the run forget them
	h.next += len(batch)
	return dst
}

// geonamesRegions names the regions of the cities of a GeoNames dump as
// they stream past, reading the dump once: a city that the okfn CSV names
// by id votes for the name of its division (see RegionNames), and every
// city is held back until the last is read, when the votes are counted and
// each city takes its own name or its division's. The store holds every
// city until it builds anyway; this holds them a little earlier, packed
// (see heldRows) at about half the memory of the cities themselves.
//
// Every city votes, but a duplicate that the store would drop is not held
// (see distinctReader): one with the Key and id of an earlier city, which
// will take the same name, that does not outrank it. So the cities held
// follow the distinct ones, not the rows.
type geonamesRegions struct {
	r     search.CityReader
	subs  *Subcountries
	names *RegionNames // once the dump is read
	held  heldRows
	keys  keyTable
	drops int // duplicates not held
	named int
	err   error // what ReadBatch returns after the held cities
}

// ReadBatch appends the next batch of cities to dst, each with its
// region's name as Subcountry when one is known (see search.CityReader).
// The first call reads the whole dump.
func (g *geonamesRegions) ReadBatch(dst []search.City) ([]search.City, error) {
	if g.names == nil && g.err == nil {
		g.readAll()
	}
	n := len(dst)
	for len(dst)-n < batchLines {
		c, ok := g.held.take()
		if !ok {
			break
		}
		if c.Subcountry = g.names.Name(c.ID, c.CountryCode, c.Region); c.Subcountry != "" {
			g.named++
		}
		dst = append(dst, c)
	}
	if len(dst) > n {
		return dst, nil
	}
	return dst, g.err
}

// readAll reads and votes on every city, holding each back; on a read
// error it keeps that error and hands out nothing.
func (g *geonamesRegions) readAll() {
	v := newRegionVoter(g.subs)
	var batch []search.City
	for {
		var err error
		if batch, err = g.r.ReadBatch(batch[:0]); err != nil {
			if g.err = err; !errors.Is(err, io.EOF) {
				g.held = heldRows{}
				return
			}
			break
		}
		for i := range batch {
			c := &batch[i]
			v.add(c.ID, countryCode(c.CountryCode), c.Region)
			if g.keys.better(c) {
				g.held.add(c)
			} else {
				g.drops++
			}
		}
	}
	g.keys = keyTable{}
	g.names = v.names()
}

// heldRows keeps GeoNames cities packed in large byte blocks while they wait
// for their region names, rather than as City values: a City's string
// headers, its slice of alternate names and their allocations weigh more
// than its text. A GeoNames city has no Subcountry to keep.
type heldRows struct {
	blocks [][]byte
	// areas are the (country, code, region) triples of the cities, by the
	// index each record holds.
	areas  []heldArea
	areaOf map[heldArea]uint32
	// next is the block and offset of the next record to take.
	nextBlock, nextOff int
}

type heldArea struct{ country, code, region string }

// heldBlock is the size of a block of records; a longer record gets a
// block of its own.
const heldBlock = 1 << 20

// A record: the fixed fields, then the name, the slug and each alternate
// name, each after its length (uint16).
const (
	heldFixed = 4 + 4 + 8 + 8 + 8 + 1 + 2 // id, area, population, lat, lon, has location, alternate names
	heldLen   = 2
)

// add packs c.
func (h *heldRows) add(c *search.City) {
	size := heldFixed + heldLen + len(c.Name) + heldLen + len(c.Slug)
	for _, n := range c.AltNames {
		size += heldLen + len(n)
	}
	if len(h.blocks) == 0 || cap(h.blocks[len(h.blocks)-1])-len(h.blocks[len(h.blocks)-1]) < size {
		h.blocks = append(h.blocks, make([]byte, 0, max(heldBlock, size)))
	}
	if h.areaOf == nil {
		h.areaOf = make(map[heldArea]uint32)
	}
	a := heldArea{c.Country, c.CountryCode, c.Region}
	ai, ok := h.areaOf[a]
	if !ok {
		ai = uint32(len(h.areas))
		h.areas = append(h.areas, a)
		h.areaOf[a] = ai
	}
	b := h.blocks[len(h.blocks)-1]
	b = binary.LittleEndian.AppendUint32(b, c.ID)
	b = binary.LittleEndian.AppendUint32(b, ai)
	b = binary.LittleEndian.AppendUint64(b, uint64(c.Population))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Lat))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(c.Lon))
	var located byte
	if c.HasLocation {
		located = 1
	}
	b = append(b, located)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(c.AltNames)))
	for _, text := range append([]string{c.Name, c.Slug}, c.AltNames...) {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
		b = append(b, text...)
	}
	h.blocks[len(h.blocks)-1] = b
}

// take unpacks the next city, or returns false when none is left. Each
// block goes once its records are taken.
func (h *heldRows) take() (search.City, bool) {
	for h.nextBlock < len(h.blocks) && h.nextOff == len(h.blocks[h.nextBlock]) {
		h.blocks[h.nextBlock] = nil
		h.nextBlock, h.nextOff = h.nextBlock+1, 0
	}
	if h.nextBlock == len(h.blocks) {
		return search.City{}, false
	}
	b := h.blocks[h.nextBlock][h.nextOff:]
	var c search.City
	c.ID = binary.LittleEndian.Uint32(b)
	a := h.areas[binary.LittleEndian.Uint32(b[4:])]
	c.Country, c.CountryCode, c.Region = a.country, a.code, a.region
	c.Population = int64(binary.LittleEndian.Uint64(b[8:]))
	c.Lat = math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
	c.Lon = math.Float64frombits(binary.LittleEndian.Uint64(b[24:]))
	c.HasLocation = b[32] == 1
	alts := int(binary.LittleEndian.Uint16(b[33:]))
	// One string for the record's text, which its names share.
	var offs [][2]int
	var text []byte
	rest := b[heldFixed:]
	for range 2 + alts {
		n := int(binary.LittleEndian.Uint16(rest))
		offs = append(offs, [2]int{len(text), len(text) + n})
		text = append(text, rest[heldLen:heldLen+n]...)
		rest = rest[heldLen+n:]
	}
	h.nextOff = len(h.blocks[h.nextBlock]) - len(rest)
	all := string(text)
	c.Name, c.Slug = all[offs[0][0]:offs[0][1]], all[offs[1][0]:offs[1][1]]
	if alts > 0 {
		c.AltNames = make([]string, alts)
		for i := range alts {
			c.AltNames[i] = all[offs[2+i][0]:offs[2+i][1]]
		}
	}
	return c, true
}

// maxmindRegions names the regions of the cities of a MaxMind file, whose
// codes are not GeoNames' own: a city that enrichment joined with a
// GeoNames place comes with the name of the place's region (see
// EnrichedReader), and the cities of a country are held back until its
// codes are learnt from them.
type maxmindRegions struct {
	in    runReader
	names *RegionNames
	held  heldCities
}

// runReader reads the cities of a reader in runs.
type runReader struct {
	r search.CityReader
	// read are the cities of the last batch read, from next on not yet in
	// a run.
	read []search.City
	next int
	err  error // what ReadBatch returns after the last run
}

// readRun appends to run the next cities of r while joins(first, c, n)
// says that c belongs with the n cities before it, which start with
// first, and returns the extended slice; merge, when not nil, is asked of
// each city that joins, and one it merges into an earlier city of the run
// is not appended. On a read error (io.EOF included), it keeps the error
// and returns the cities read.
func (rr *runReader) readRun(run []search.City, joins func(first, c *search.City, n int) bool, merge func(run []search.City, c *search.City) bool) []search.City {
	start := len(run)
	for {
		if rr.next == len(rr.read) {
			var err error
			rr.read, err = rr.r.ReadBatch(rr.read[:0])
			if rr.next = 0; err != nil {
				rr.err = err
				return run
			}
		}
		c := &rr.read[rr.next]
		if len(run) > start && !joins(&run[start], c, len(run)-start) {
			return run
		}
		if merge == nil || !merge(run, c) {
			run = append(run, *c)
		}
		*c = search.City{}
		rr.next++
	}
}

// ReadBatch appends the next batch of cities to dst, each with its
// region's name as Subcountry when one is known (see search.CityReader).
func (m *maxmindRegions) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	if dst = m.held.take(dst); len(dst) > n {
		return dst, nil
	}
	if m.in.err == nil {
		m.readRun()
	}
	if dst = m.held.take(dst); len(dst) > n {
		return dst, nil
	}
	return dst, m.in.err
}

// readRun reads the next run of cities of one country (at most
// maxRegionRun), and names their regions: each code takes the name of the
// GeoNames division of that code, as MaxMind's codes are mostly GeoNames'
// own, else the name that its cities joined with a GeoNames place agree on
// (see votes.winner): codes of another system, such as the FIPS codes of
// British counties, or codes that GeoNames changed since its dump was
// made. A city joined with a place keeps its place's region name when its
// code names nothing, or is no code ("00").
func (m *maxmindRegions) readRun() {
	run := m.in.readRun(m.held.run[:0], sameCountryRun, nil)
	m.held.run, m.held.next = run, 0
	if len(run) == 0 {
		return
	}
	country := countryCode(run[0].CountryCode)
	learnt := make(votes[string])
	for i := range run {
		if c := &run[i]; c.Subcountry != "" && knownDivision(country, c.Region) {
			learnt.add(c.Region, c.Subcountry)
		}
	}
	byCode := make(map[string]string) // the name of each code, once decided
	for i := range run {
		c := &run[i]
		if !knownDivision(country, c.Region) {
			continue
		}
		name, ok := byCode[c.Region]
		if !ok {
			if name = m.names.division(country, c.Region); name == "" {
				name, _ = learnt.winner(c.Region)
			}
			byCode[c.Region] = name
		}
		if name != "" {
			c.Subcountry = name
		}
	}
}
