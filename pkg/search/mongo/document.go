package mongo

import (
	"crypto/sha256"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// PrefixLen is how many leading bytes of each slug the ranking index holds
// as prefixes: every prefix of up to PrefixLen bytes is one index key, and
// a longer query prefix is looked up by its first PrefixLen bytes.
const PrefixLen = 5

// schemaVersion is the version of the documents' layout; a dataset written
// with another version must be imported again.
const schemaVersion = 4

// Index names.
const (
	// indexRank serves the other matches of a prefix in rank order:
	// equality on prefixes, then the sort, then the slug range and the
	// country filter checked in the index keys, so that the top matches are
	// read without a sort and only they are fetched.
	indexRank = "prefixes_population_slug_len_slug_country_code"
	// indexSlug serves the whole-name matches of a prefix, the dataset
	// document and the tie groups.
	indexSlug = "slug_population"
	// indexAltRank serves the matches of a prefix through alternate names
	// by population; indexAltSlug the whole alternate-name matches.
	indexAltRank = "key_prefixes_population"
	indexAltSlug = "keys_population"
)

// metaID is the _id of the dataset document.
const metaID = "dataset"

// cityDoc is a city as stored.
type cityDoc struct {
	ID          []byte        `bson:"_id"`
	Gen         bson.ObjectID `bson:"gen"`
	Name        string        `bson:"name"`
	Slug        string        `bson:"slug"`
	SlugLen     int32         `bson:"slug_len"`
	Prefixes    []string      `bson:"prefixes,omitempty"`
	Country     string        `bson:"country"`
	CountryCode string        `bson:"country_code,omitempty"`
	Subcountry  string        `bson:"subcountry,omitempty"`
	Region      string        `bson:"region,omitempty"`
	Population  int64         `bson:"population"`
	Lat         *float64      `bson:"lat,omitempty"`
	Lon         *float64      `bson:"lon,omitempty"`
	AltNames    []string      `bson:"alt_names,omitempty"`
	// LocalNames are the city's search.LocalNames; queries never match
	// them (their keys are among Keys, through AltNames).
	LocalNames []localNameDoc `bson:"local_names,omitempty"`
	// Keys are the city's keys besides its slug (see search.Keys: its
	// alternate names and later words), KeyAlt and KeyOffset which name
	// each folds and from where (search.NameKey): parallel arrays rather
	// than one of documents, as FerretDB matches ranges on the elements
	// of arrays of scalars only. KeyPrefixes are their first
	// 1..PrefixLen bytes, for their ranking index.
	Keys        []string `bson:"keys,omitempty"`
	KeyAlt      []int32  `bson:"key_alt,omitempty"`
	KeyOffset   []int32  `bson:"key_offset,omitempty"`
	KeyPrefixes []string `bson:"key_prefixes,omitempty"`
	// AreaSlugs are the city's subcountry and region folded, for the
	// region filter.
	AreaSlugs []string `bson:"area_slugs,omitempty"`
	SourceID  int64    `bson:"id,omitempty"`
}

// localNameDoc is a search.LocalName as stored.
type localNameDoc struct {
	Lang   string `bson:"lang,omitempty"`
	Name   string `bson:"name"`
	Former bool   `bson:"former,omitempty"`
}

// metaDoc describes the import that wrote a collection.
type metaDoc struct {
	ID         string        `bson:"_id"`
	Slug       string        `bson:"slug"` // "", so that the slug index finds it with the whole-name matches
	Gen        bson.ObjectID `bson:"gen"`
	Schema     int32         `bson:"schema"`
	Dataset    string        `bson:"dataset"`
	Count      int64         `bson:"count"`
	Read       int64         `bson:"read"`
	ImportedAt time.Time     `bson:"imported_at"`
	SourceName string        `bson:"source_name,omitempty"`
	SourceSize int64         `bson:"source_size,omitempty"`
}

// stats describes the dataset that m heads.
func (m *metaDoc) stats() search.DatasetStats {
	return search.DatasetStats{
		Cities:   int(m.Count),
		Imported: m.ImportedAt,
		Source:   search.Source{Name: m.SourceName, Size: m.SourceSize},
	}
}

func newCityDoc(c *search.City, gen bson.ObjectID) cityDoc {
	d := cityDoc{
		ID:          keyID(c.Key()),
		Gen:         gen,
		Name:        c.Name,
		Slug:        c.Slug,
		SlugLen:     int32(len(c.Slug)),
		Prefixes:    prefixes(c.Slug),
		Country:     c.Country,
		CountryCode: c.CountryCode,
		Subcountry:  c.Subcountry,
		Region:      c.Region,
		Population:  c.Population,
		SourceID:    int64(c.ID),
		AltNames:    c.AltNames,
	}
	if c.HasLocation {
		// Copies: the document outlives the reader's batch that c is in
		// (see settleDuplicates), whose memory the next batch reuses.
		lat, lon := c.Lat, c.Lon
		d.Lat, d.Lon = &lat, &lon
	}
	for _, n := range c.LocalNames {
		d.LocalNames = append(d.LocalNames, localNameDoc{Lang: n.Lang, Name: n.Name, Former: n.Former})
	}
	for _, k := range search.Keys(c)[1:] {
		d.Keys = append(d.Keys, k.Slug)
		d.KeyAlt = append(d.KeyAlt, int32(k.Alt))
		d.KeyOffset = append(d.KeyOffset, int32(k.Offset))
		for _, p := range prefixes(k.Slug) {
			if !slices.Contains(d.KeyPrefixes, p) {
				d.KeyPrefixes = append(d.KeyPrefixes, p)
			}
		}
	}
	for _, a := range []string{c.Subcountry, c.Region} {
		if slug := search.Slug(a); slug != "" && !slices.Contains(d.AreaSlugs, slug) {
			d.AreaSlugs = append(d.AreaSlugs, slug)
		}
	}
	return d
}

// found returns the city of d with its best key that starts with q's
// prefix (see search.CompareFound), keys of later words only with q.Words;
// ok is false when no key does.
func (d *cityDoc) found(q *search.Query) (f search.Found, ok bool) {
	prefix := q.Prefix
	f.City = d.city()
	if strings.HasPrefix(d.Slug, prefix) {
		f.Key, ok = search.NameKey{Slug: d.Slug}, true
	}
	for i, slug := range d.Keys {
		if i >= len(d.KeyAlt) || i >= len(d.KeyOffset) {
			break // not written by Load
		}
		key := search.NameKey{Slug: slug, Alt: int(d.KeyAlt[i]), Offset: int(d.KeyOffset[i])}
		if key.Word() && !q.Words {
			continue
		}
		if strings.HasPrefix(slug, prefix) && (!ok || search.CompareKeys(prefix, key, d.Population, prefix, f.Key, d.Population) < 0) {
			f.Key, ok = key, true
		}
	}
	return f, ok
}

func (d *cityDoc) city() search.City {
	c := search.City{
		ID:          uint32(d.SourceID),
		Name:        d.Name,
		Slug:        d.Slug,
		Country:     d.Country,
		CountryCode: d.CountryCode,
		Subcountry:  d.Subcountry,
		Region:      d.Region,
		Population:  d.Population,
		AltNames:    d.AltNames,
	}
	if d.Lat != nil && d.Lon != nil {
		c.Lat, c.Lon, c.HasLocation = *d.Lat, *d.Lon, true
	}
	if len(d.LocalNames) > 0 {
		c.LocalNames = make([]search.LocalName, len(d.LocalNames))
		for i, n := range d.LocalNames {
			c.LocalNames[i] = search.LocalName{Lang: n.Lang, Name: n.Name, Former: n.Former}
		}
	}
	return c
}

// keyID is the _id of every city with key k: duplicates collide on it.
func keyID(k search.Key) []byte {
	h := sha256.New()
	for _, s := range []string{k.Slug, k.CountryCode, k.Country, k.Subcountry, k.Region} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum(nil)[:16]
}

// prefixes returns slug's prefixes of 1..PrefixLen bytes.
func prefixes(slug string) []string {
	n := min(len(slug), PrefixLen)
	out := make([]string, n)
	for i := range n {
		out[i] = slug[:i+1]
	}
	return out
}

// successor returns the least string greater than every string that starts
// with p, or "" when there is none (p is all 0xff bytes).
func successor(p string) string {
	b := []byte(p)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < 0xff {
			b[i]++
			return string(b[:i+1])
		}
	}
	return ""
}
