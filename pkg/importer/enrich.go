package importer

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Enrichment joins the rows of a dataset that lacks population, location
// or other names (the okfn CSV, MaxMind's file) with the places of a
// GeoNames dump.
const (
	// MaxJoinKm is how far a located city (a MaxMind row) may lie from the
	// GeoNames place of its name to be joined with it.
	MaxJoinKm = 20
	// MaxAltNameRunes bounds an alternate name: longer ones are official
	// titles that nobody types ("Ciudad de la Santísima Trinidad y Puerto
	// de Santa María del Buen Ayre").
	MaxAltNameRunes = search.MaxQueryRunes
)

// Gazetteer is the populated places (feature class P) of a GeoNames dump,
// indexed to enrich the cities of another dataset as they are imported
// (see Options.Enrich and Enrich). It is read-only once loaded, and safe
// for concurrent use.
//
// It holds no pointer but to a few large blocks (every name is in one
// string), so that the garbage collector, which marks the whole heap in
// each cycle of an import, spends no time on it.
type Gazetteer struct {
	places []gazPlace
	// text holds the names of every place, each followed by its slug;
	// names locates them.
	text  string
	names []gazName
	// admin1s are the admin1 codes, by gazPlace.admin1.
	admin1s []string
	byID    map[uint32]int32
	// byName finds places by country and folded name or ASCII name,
	// byAlt by country and folded alternate name.
	byName, byAlt nameIndex
	// Source is the file the places come from, for messages.
	Source string
	// Rows and Rejected count the dump's rows and its malformed rows.
	Rows, Rejected int
}

// gazPlace is what enrichment takes from a place.
type gazPlace struct {
	id         uint32
	country    code // none when the place is in no country
	admin1     uint32
	population int64
	lat, lon   float64
	// Its names are names[first:first+count]: its name first, then its
	// ASCII and alternate names, one per slug, the tidy ones (see
	// nameTidier).
	first, count uint32
}

// code is a lower-case ISO 3166 alpha-2 country code.
type code [2]byte

// countryCode is the code of s, or none when s is not two characters.
func countryCode(s string) code {
	if len(s) != 2 {
		return code{}
	}
	return code{s[0], s[1]}
}

// gazName is one name of a place: text[off:off+nameLen], then its slug.
type gazName struct {
	off              uint32
	nameLen, slugLen uint16
	// byName tells the place's name and ASCII name from its alternate
	// names.
	byName bool
}

func (g *Gazetteer) name(k uint32) string {
	n := &g.names[k]
	return g.text[n.off : n.off+uint32(n.nameLen)]
}

func (g *Gazetteer) slug(k uint32) string {
	n := &g.names[k]
	start := n.off + uint32(n.nameLen)
	return g.text[start : start+uint32(n.slugLen)]
}

// nameIndex finds places by country and slug. It keys a map by a hash of
// the two, and chains the places of a hash, so that neither holds a
// pointer for the garbage collector to scan; lookups check each candidate's
// names, which also sorts out hash collisions.
type nameIndex struct {
	heads map[uint64]int32 // first link of a hash
	links []nameLink
	// seen is a Bloom filter of the hashes held (two bits each, 8 bits a
	// name), small enough to stay in a CPU cache: most names looked up are
	// not in the index (3 million MaxMind rows, 140 thousand places), and
	// it answers for them without a cache miss in the map.
	seen  []uint64
	shift uint
}

type nameLink struct{ place, next int32 }

var nameSeed = maphash.MakeSeed()

func nameHash(country code, slug string) uint64 {
	h := maphash.String(nameSeed, slug)
	for _, c := range country {
		h = (h ^ uint64(c)) * 0x100000001b3
	}
	return h
}

// init makes room for about n names.
func (x *nameIndex) init(n int) {
	x.heads = make(map[uint64]int32, n)
	x.links = make([]nameLink, 0, n)
	bits := uint(10)
	for 1<<bits < 8*n {
		bits++
	}
	x.seen, x.shift = make([]uint64, 1<<bits/64), 64-bits
}

// seenBits are the two bits of the Bloom filter that stand for h.
func (x *nameIndex) seenBits(h uint64) (uint64, uint64) {
	return h >> x.shift, (h * 0x9e3779b97f4a7c15) >> x.shift
}

func (x *nameIndex) add(country code, slug string, place int32) {
	h := nameHash(country, slug)
	next, ok := x.heads[h]
	if !ok {
		next = -1
	}
	x.heads[h] = int32(len(x.links))
	x.links = append(x.links, nameLink{place: place, next: next})
	a, b := x.seenBits(h)
	x.seen[a/64] |= 1 << (a % 64)
	x.seen[b/64] |= 1 << (b % 64)
}

// each calls fn with every place that x holds under a hash of country and
// slug, latest added first; fn checks that the place has that name.
func (x *nameIndex) each(country code, slug string, fn func(i int32)) {
	if x.heads == nil {
		return
	}
	h := nameHash(country, slug)
	if a, b := x.seenBits(h); x.seen[a/64]&(1<<(a%64)) == 0 || x.seen[b/64]&(1<<(b%64)) == 0 {
		return
	}
	l, ok := x.heads[h]
	for ok && l >= 0 {
		fn(x.links[l].place)
		l = x.links[l].next
	}
}

// OpenGazetteer reads the GeoNames dump at path (plain, .gz or .zip; see
// Open). Errors name the file: one that cannot be read, that is not a
// GeoNames dump (ErrHeader), or whose rows are more than MaxRejected
// malformed (ErrMalformedRow).
func OpenGazetteer(path string) (*Gazetteer, error) {
	g, err := readFile(path, "GeoNames file", ReadGazetteer)
	if err != nil {
		return nil, err
	}
	g.Source = path
	return g, nil
}

// readFile opens the file at path (plain, .gz or .zip; see Open) and reads
// it with read. Errors name the file as what it should be ("GeoNames
// file"), and say what went wrong without Open's "open dataset PATH: open
// PATH: ".
func readFile[T any](path, what string, read func(io.Reader) (T, error)) (T, error) {
	var zero T
	in, err := Open(path)
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return zero, fmt.Errorf("%s %s: %w", what, path, err)
	}
	defer in.Close()
	v, err := read(in)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return v, nil
}

// ReadGazetteer reads a GeoNames dump from r (see NewGeoNamesReader); see
// OpenGazetteer.
func ReadGazetteer(r io.Reader) (*Gazetteer, error) {
	lines, err := geonamesLines(r)
	if err != nil {
		return nil, err
	}
	pl := pipeline{workers: max(1, runtime.GOMAXPROCS(0)), batchLines: batchLines}
	pr := newParallelReader(lines, ReaderOptions{}, "GeoNames file", pl, newGazParser)
	defer pr.Close()
	g := &Gazetteer{}
	var text []byte
	admin1s := make(map[string]uint32)
	for {
		p, err := pr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		a, ok := admin1s[p.admin1]
		if !ok {
			a = uint32(len(g.admin1s))
			admin1s[p.admin1] = a
			g.admin1s = append(g.admin1s, p.admin1)
		}
		p.place.admin1 = a
		p.place.first, p.place.count = uint32(len(g.names)), uint32(len(p.names))
		for k, name := range p.names {
			g.names = append(g.names, gazName{
				off: uint32(len(text)), nameLen: uint16(len(name)), slugLen: uint16(len(p.slugs[k])),
				byName: p.slugs[k] == p.main || p.slugs[k] == p.ascii,
			})
			text = append(append(text, name...), p.slugs[k]...)
		}
		g.places = append(g.places, p.place)
	}
	g.text = string(text)
	g.index()
	st := pr.Stats()
	g.Rows, g.Rejected = st.Rows, st.Rejected
	if err := tooManyRejected(st); err != nil {
		return nil, err
	}
	return g, nil
}

// Len is how many places g holds.
func (g *Gazetteer) Len() int { return len(g.places) }

// gazParser makes the places of a gazetteer of GeoNames lines; each
// reading goroutine has its own. It skips places that are not populated
// places (feature class P).
type gazParser struct {
	places geonamesParser
	tidy   nameTidier
}

// parsedPlace is a place as a worker makes it: what gazPlace holds, and its
// admin1 code and names until they are stored in the Gazetteer.
type parsedPlace struct {
	place        gazPlace
	admin1       string
	names, slugs []string
	// main and ascii are the slugs of the name and ASCII name.
	main, ascii string
}

func newGazParser() *gazParser { return &gazParser{} }

func (gp *gazParser) parse(line []byte) (parsedPlace, string) {
	p, reason := gp.places.parse(line)
	if reason != "" {
		return parsedPlace{}, reason
	}
	if p.FeatureClass != "P" {
		return parsedPlace{}, skipRow
	}
	names, slugs := gp.tidy.tidy(p.Name, p.ASCIIName, p.AlternateNames)
	// The name and ASCII name come first when they are tidy (usually).
	main, ascii := gp.tidy.slug(p.Name, names, slugs, 0), ""
	if p.ASCIIName != p.Name {
		ascii = gp.tidy.slug(p.ASCIIName, names, slugs, 1)
	}
	return parsedPlace{
		place:  gazPlace{id: p.ID, country: countryCode(p.CountryCode), population: p.Population, lat: p.Lat, lon: p.Lon},
		admin1: p.Admin1, names: names, slugs: slugs, main: main, ascii: ascii,
	}, ""
}

// index builds the indexes of g.places: by id on one goroutine, by name on
// another, each map sized once. A place's name and ASCII name are found
// by name only when they are tidy (see nameTidier), as they are unless
// they are absurdly long.
func (g *Gazetteer) index() {
	var wg sync.WaitGroup
	wg.Go(func() {
		g.byID = make(map[uint32]int32, len(g.places))
		for i := range g.places {
			g.byID[g.places[i].id] = int32(i)
		}
	})
	byName := 0
	for i := range g.names {
		if g.names[i].byName {
			byName++
		}
	}
	g.byName.init(byName)
	g.byAlt.init(len(g.names) - byName)
	for i := range g.places {
		p := &g.places[i]
		if p.country == (code{}) {
			continue
		}
		for k := p.first; k < p.first+p.count; k++ {
			if strings.HasPrefix(g.slug(k), string(search.ScriptMark)) {
				continue // the rows joined are in Latin letters
			}
			if g.names[k].byName {
				g.byName.add(p.country, g.slug(k), int32(i))
			} else {
				g.byAlt.add(p.country, g.slug(k), int32(i))
			}
		}
	}
	wg.Wait()
}

// nameTidier keeps the names of a place worth matching: one per key (see
// search.AltKey), the first given; none whose key is empty, none longer
// than MaxAltNameRunes, no links, and no alternate name that reads as a
// code or a machine transliteration (see codeLike, uncapitalised). Every
// script is kept: "Москва" beside "Moskva".
type nameTidier struct {
	buf []byte
}

// tidy returns the names of a place worth matching and their keys.
func (t *nameTidier) tidy(name, ascii string, alternates []string) (names, keys []string) {
	keep := func(n string) {
		if n == "" || strings.Contains(n, "://") || utf8.RuneCountInString(n) > MaxAltNameRunes {
			return
		}
		t.buf = search.AppendAltKey(t.buf[:0], n)
		if len(t.buf) == 0 || slices.Contains(keys, string(t.buf)) {
			return
		}
		names = append(names, n)
		keys = append(keys, string(t.buf))
	}
	keep(name)
	if ascii != name {
		keep(ascii)
	}
	for _, n := range alternates {
		if !codeLike(n) && !uncapitalised(n) {
			keep(n)
		}
	}
	return slices.Clip(names), slices.Clip(keys)
}

// codeLike reports whether an alternate name reads as a code rather than a
// name: 2 to 4 capital ASCII letters, as GeoNames lists airport and
// abbreviated names ("LON", "NYC", "SP"). A query would find London as
// "LON" before any place whose name starts so.
func codeLike(name string) bool {
	if len(name) < 2 || len(name) > 4 {
		return false
	}
	for i := range len(name) {
		if name[i] < 'A' || name[i] > 'Z' {
			return false
		}
	}
	return true
}

// uncapitalised reports whether an alternate name is in Latin letters
// none of which is a capital: GeoNames lists machine transliterations so
// ("toripori" for Tripoli, "bei luo ao li cang te" for Belo Horizonte),
// which no one types, where the names people use are capitalised.
func uncapitalised(name string) bool {
	if search.OtherScript(name) {
		return false
	}
	letters := false
	for _, r := range name {
		if unicode.IsUpper(r) || unicode.IsTitle(r) {
			return false
		}
		letters = letters || unicode.IsLetter(r)
	}
	return letters
}

// slug returns the slug of name: that of names[k], whose key is keys[k],
// when it is name.
func (t *nameTidier) slug(name string, names, keys []string, k int) string {
	if k < len(names) && names[k] == name {
		return search.Unmarked(keys[k])
	}
	return search.Slug(name)
}

// otherNames are the names of a place (see nameTidier) for a city whose
// slug is slug: every name but the one whose key is slug. The slice may be
// shared between the cities of the place, and has no room to grow, so that
// appending to it copies.
func otherNames(names, slugs []string, slug string) []string {
	for k, s := range slugs {
		if s != slug {
			continue
		}
		if k == 0 {
			return clip(names[1:])
		}
		out := make([]string, 0, len(names)-1)
		return append(append(out, names[:k]...), names[k+1:]...)
	}
	return clip(names)
}

func clip(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s[:len(s):len(s)]
}

// EnrichedReader completes the cities of another reader with the places of
// a Gazetteer, and counts the cities it completed.
type EnrichedReader struct {
	r        search.CityReader
	g        *Gazetteer
	enriched int
	// located is false when the cities with a location are completed
	// before they reach the reader (see locatedEnricher).
	located bool
	// Of the cities matched by id: the (country, admin1 code) pairs of
	// their places, and which of them stood for which subcountry.
	admin1   map[division]bool
	admin1Of map[divisionName]bool
}

// division is a first-level division: a country and an admin1 code (an
// index in Gazetteer.admin1s).
type division struct {
	country code
	admin1  uint32
}

// divisionName pairs a division with a subcountry of the dataset.
type divisionName struct {
	division
	subcountry string
}

var _ search.CityReader = (*EnrichedReader)(nil)

// Enrich returns a reader of r's cities, each completed from the place of g
// that it matches:
//
//   - a city with an id takes the place with that geonameid;
//   - a city with a location (a MaxMind row) takes the nearest place of its
//     country whose name or ASCII name folds to its slug, within MaxJoinKm;
//   - any other city with a country takes a place of its country whose name
//     or ASCII name (else an alternate name) folds to its slug: never one
//     in another subcountry than the city's, as the cities matched by id
//     tell the subcountries of admin1 codes; one in the city's subcountry
//     if there is one, else the most populous.
//
// A matched city gains the place's population and location where it has
// none, the place's admin1 code as Region when it came with a location but
// no region (or MaxMind's "00" for unknown), and the place's names other
// than the city's own as AltNames (see search.City). Other cities are left
// as they are: no population, so they rank after the matched ones.
func (g *Gazetteer) Enrich(r search.CityReader) *EnrichedReader {
	return g.enrich(r, true)
}

func (g *Gazetteer) enrich(r search.CityReader, located bool) *EnrichedReader {
	return &EnrichedReader{r: r, g: g, located: located, admin1: make(map[division]bool), admin1Of: make(map[divisionName]bool)}
}

// Read returns the next city, completed when it matches a place.
func (e *EnrichedReader) Read() (search.City, error) {
	c, err := e.r.Read()
	if err != nil {
		return c, err
	}
	if c.ID == 0 && c.HasLocation {
		if e.located && e.g.enrichLocated(&c) != nil {
			e.enriched++
		}
		return c, nil
	}
	if i := e.match(&c); i >= 0 {
		e.g.enrichFrom(&c, &e.g.places[i])
		e.enriched++
	}
	return c, nil
}

// Enriched is how many cities were completed so far.
func (e *EnrichedReader) Enriched() int { return e.enriched }

// match returns the index of the place of c, a city without a location
// or with an id, or -1.
func (e *EnrichedReader) match(c *search.City) int32 {
	g := e.g
	if c.ID != 0 {
		if i, ok := g.byID[c.ID]; ok {
			p := &g.places[i]
			if c.Subcountry != "" {
				d := division{p.country, p.admin1}
				e.admin1[d] = true
				e.admin1Of[divisionName{d, c.Subcountry}] = true
			}
			return i
		}
	}
	if c.CountryCode == "" || c.HasLocation {
		return -1
	}
	if i := e.best(c, &g.byName); i >= 0 {
		return i
	}
	return e.best(c, &g.byAlt)
}

// enrichLocated completes c, a city with a location, from the place of its
// country and name nearest to it, and returns that place, or nil when
// there is none. It is safe for concurrent use.
func (g *Gazetteer) enrichLocated(c *search.City) *gazPlace {
	if c.CountryCode == "" {
		return nil
	}
	i := g.nearest(c)
	if i < 0 {
		return nil
	}
	g.enrichFrom(c, &g.places[i])
	return &g.places[i]
}

// locatedEnricher completes the cities with a location (MaxMind rows) that
// its parser makes, so that an import joins them on every worker. With
// regions, a city joined with a place takes the name of the place's region
// as Subcountry (see regionReader).
type locatedEnricher struct {
	rowParser[search.City]
	g       *Gazetteer
	n       *atomic.Int64 // cities completed
	regions *RegionNames
}

func (p *locatedEnricher) parse(line []byte) (search.City, string) {
	c, reason := p.rowParser.parse(line)
	if reason != "" || c.ID != 0 || !c.HasLocation {
		return c, reason
	}
	if place := p.g.enrichLocated(&c); place != nil {
		p.n.Add(1)
		if p.regions != nil {
			c.Subcountry = p.regions.name(place.id, place.country, p.g.admin1s[place.admin1])
		}
	}
	return c, reason
}

func (p *locatedEnricher) takeUnknown(dst []string) []string {
	if u, ok := p.rowParser.(unknownTaker); ok {
		return u.takeUnknown(dst)
	}
	return dst
}

// named reports whether place i is in country and has a name that folds
// to slug.
func (g *Gazetteer) named(i int32, country code, slug string) bool {
	p := &g.places[i]
	if p.country != country {
		return false
	}
	for k := p.first; k < p.first+p.count; k++ {
		if g.slug(k) == slug {
			return true
		}
	}
	return false
}

// nearest returns the place of c's country and name closest to c, within
// MaxJoinKm, or -1.
func (g *Gazetteer) nearest(c *search.City) int32 {
	best, bestKm := int32(-1), math.Inf(1)
	cc := countryCode(c.CountryCode)
	g.byName.each(cc, c.Slug, func(i int32) {
		if !g.named(i, cc, c.Slug) {
			return
		}
		p := &g.places[i]
		if km := distanceKm(c.Lat, c.Lon, p.lat, p.lon); km <= MaxJoinKm && (km < bestKm || km == bestKm && i < best) {
			best, bestKm = i, km
		}
	})
	return best
}

// best returns the place of x that has c's country and name, for a city
// without a location: not one in another subcountry (as far as the cities
// matched by id tell), one in its subcountry if there is one, else the
// most populous, the first in the file on a tie; or -1.
func (e *EnrichedReader) best(c *search.City, x *nameIndex) int32 {
	best, bestSame := int32(-1), false
	cc := countryCode(c.CountryCode)
	x.each(cc, c.Slug, func(i int32) {
		if !e.g.named(i, cc, c.Slug) {
			return
		}
		p := &e.g.places[i]
		d := division{p.country, p.admin1}
		same := e.admin1Of[divisionName{d, c.Subcountry}]
		if !same && c.Subcountry != "" && e.admin1[d] {
			return // the place lies in another subcountry
		}
		if best >= 0 {
			b := &e.g.places[best]
			switch {
			case same != bestSame:
				if !same {
					return
				}
			case p.population != b.population:
				if p.population < b.population {
					return
				}
			case i > best:
				return
			}
		}
		best, bestSame = i, same
	})
	return best
}

// enrichFrom completes c from its place p.
func (g *Gazetteer) enrichFrom(c *search.City, p *gazPlace) {
	if c.Population == 0 {
		c.Population = p.population
	}
	if !c.HasLocation {
		// okfn rows: they name their division already (Subcountry).
		c.Lat, c.Lon, c.HasLocation = p.lat, p.lon, true
	} else if admin1 := g.admin1s[p.admin1]; (c.Region == "" || c.Region == "00") && admin1 != "00" {
		c.Region = admin1
	}
	// Every name but the one that folds like the city's.
	names := make([]string, 0, p.count)
	for k := p.first; k < p.first+p.count; k++ {
		if g.slug(k) != c.Slug {
			names = append(names, g.name(k))
		}
	}
	c.AltNames = clip(names)
}

// distanceKm is the great-circle distance between two points in degrees,
// by the haversine formula.
func distanceKm(lat1, lon1, lat2, lon2 float64) float64 {
	const earthKm = 6371.0
	rad := math.Pi / 180
	dlat := (lat2 - lat1) * rad / 2
	dlon := (lon2 - lon1) * rad / 2
	a := math.Sin(dlat)*math.Sin(dlat) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dlon)*math.Sin(dlon)
	return 2 * earthKm * math.Asin(math.Sqrt(min(1, a)))
}
