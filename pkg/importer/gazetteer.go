package importer

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"runtime"
	"strings"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Gazetteer is the populated places (feature class P) of a GeoNames dump,
// indexed to enrich the cities of another dataset as they are imported
// (see Request.GeoNames and Enrich). It is read-only once loaded, and safe
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
	// admin1s are the admin1 codes, by gazPlace.admin1; codes are the
	// divisions that hold a place.
	admin1s []string
	codes   map[regionKey]bool
	byID    map[uint32]int32
	// byName finds places by country and folded name or ASCII name,
	// byAlt by country and folded alternate name.
	byName, byAlt nameIndex
	// Source is the file the places come from, for messages.
	Source string
	// Rows and Rejected count the dump's rows and its malformed rows;
	// Rejections are the first DefaultMaxReported of those.
	Rows, Rejected int
	Rejections     []RowError
	// Duplicates is how many places were skipped as they were read, as an
	// earlier place of the dump had their geonameid: a dump's memory
	// follows its distinct places, not its rows.
	Duplicates int
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
// it with read (see readFrom).
func readFile[T any](path, what string, read func(io.Reader) (T, error)) (T, error) {
	return readFrom(path, what, func() (*Input, error) { return Open(path) }, read)
}

// readFrom opens the input named name with open and reads it with read.
// Errors name the input as what it should be ("GeoNames file"), and say
// what went wrong without Open's "open dataset PATH: open PATH: ".
func readFrom[T any](name, what string, open func() (*Input, error), read func(io.Reader) (T, error)) (T, error) {
	var zero T
	in, err := open()
	if err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return zero, fmt.Errorf("%s %s: %w", what, name, err)
	}
	defer in.Close()
	v, err := read(in)
	if err != nil {
		return zero, fmt.Errorf("%s %s: %w", what, name, err)
	}
	return v, nil
}

// ReadGazetteer reads a GeoNames dump from r (see NewGeoNamesReader); see
// OpenGazetteer. A dump of more than DefaultMaxRows rows is an error
// wrapping ErrTooManyRows.
func ReadGazetteer(r io.Reader) (*Gazetteer, error) {
	return readGazetteer(r, DefaultMaxRows)
}

// readGazetteer is ReadGazetteer of a dump of at most maxRows rows (see
// Request.MaxRows).
func readGazetteer(r io.Reader, maxRows int) (*Gazetteer, error) {
	lines, err := geonamesLines(r)
	if err != nil {
		return nil, err
	}
	pl := pipeline{workers: max(1, runtime.GOMAXPROCS(0)), batchLines: batchLines, maxRows: rowLimit(maxRows)}
	pr := newParallelReader(lines, ReaderOptions{}, "GeoNames file", pl, newGazParser)
	defer pr.Close()
	g := &Gazetteer{}
	var text []byte
	admin1s := make(map[string]uint32)
	var batch []parsedPlace
	g.byID = make(map[uint32]int32)
	for {
		batch, err = pr.ReadBatch(batch[:0])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		for i := range batch {
			p := &batch[i]
			if _, dup := g.byID[p.place.id]; dup {
				g.Duplicates++
				continue
			}
			g.byID[p.place.id] = int32(len(g.places))
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
	}
	g.text = string(text)
	g.index()
	st := pr.Stats()
	g.Rows, g.Rejected, g.Rejections = st.Rows, st.Rejected, st.Rejections
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

// index builds the indexes of g.places by name (those by id are built as
// the places are read), each map sized once. A place's name and ASCII
// name are found by name only when they are tidy (see nameTidier), as
// they are unless they are absurdly long.
func (g *Gazetteer) index() {
	byName := 0
	for i := range g.names {
		if g.names[i].byName {
			byName++
		}
	}
	g.byName.init(byName)
	g.byAlt.init(len(g.names) - byName)
	g.codes = make(map[regionKey]bool)
	for i := range g.places {
		p := &g.places[i]
		if p.country == (code{}) {
			continue
		}
		g.codes[regionKey{p.country, g.admin1s[p.admin1]}] = true
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
}
