package search

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// City is one place of a dataset.
type City struct {
	// ID is the place's id in its source (the GeoNames id for okfn rows);
	// 0 when the source has none.
	ID uint32
	// Name is the display name in UTF-8, with its diacritics.
	Name string
	// Slug is Slug(Name): the key that queries match by prefix.
	Slug string
	// Country is the English country name.
	Country string
	// CountryCode is the ISO 3166 alpha-2 code in lower case, when known.
	CountryCode string
	// Subcountry is the first-level division's name: okfn rows give it,
	// and an import names the divisions of GeoNames and MaxMind rows where
	// it can; empty when unknown.
	Subcountry string
	// Region is the first-level division's code (GeoNames and MaxMind rows,
	// e.g. "A8"), which means little to people: show Subcountry.
	Region string
	// Population is 0 when the source does not know it: a missing
	// population is never reported as 0.
	Population int64
	// Lat and Lon are decimal degrees, meaningful when HasLocation is set.
	Lat, Lon    float64
	HasLocation bool
	// AltNames are other names of the place, in any language and script
	// ("Cologne", "Кёльн", "ケルン" for Köln), from GeoNames. Queries match
	// them by prefix like Name; none repeats Name or another's slug.
	AltNames []string
	// LocalNames are its names in particular languages, from GeoNames'
	// alternate names file (see LocalName): what Request.Languages shows
	// instead of Name, and its former names; empty without that file. The
	// import adds those that read as names to AltNames too, unless Name or
	// an alternate name has their slug, so that queries find the city by
	// them.
	LocalNames []LocalName
}

// LocalName is a name of a place in one language: the one that GeoNames
// prefers for that language, or one the place no longer goes by.
type LocalName struct {
	// Lang is a BCP 47 tag in its canonical form ("de", "zh-Hant", "yue").
	Lang string
	Name string
	// Former marks a historic name ("Bombay" for Mumbai): a query finds
	// the place by it, and the answer says so, but it is never shown
	// instead of Name. Lang may be empty for one.
	Former bool
}

// Equal reports whether c and o hold the same values (no alternate or
// local names and an empty list of them are the same).
func (c *City) Equal(o *City) bool {
	return c.ID == o.ID && c.Name == o.Name && c.Slug == o.Slug && c.Country == o.Country &&
		c.CountryCode == o.CountryCode && c.Subcountry == o.Subcountry && c.Region == o.Region &&
		c.Population == o.Population && c.Lat == o.Lat && c.Lon == o.Lon && c.HasLocation == o.HasLocation &&
		slices.Equal(c.AltNames, o.AltNames) && slices.Equal(c.LocalNames, o.LocalNames)
}

// Key identifies duplicates: two cities with the same Key are the same place
// listed twice, and a store keeps only one of them.
type Key struct {
	Slug, CountryCode, Country, Subcountry, Region string
}

// Key returns the duplicate key of c.
func (c *City) Key() Key {
	return Key{Slug: c.Slug, CountryCode: c.CountryCode, Country: c.Country, Subcountry: c.Subcountry, Region: c.Region}
}

// cityJSON is the wire form of a City, and with Match of a Hit; optional
// fields are left out when the dataset does not have them.
type cityJSON struct {
	Name        string       `json:"name"`
	Label       string       `json:"label,omitempty"`
	Slug        string       `json:"slug"`
	Country     string       `json:"country"`
	CountryCode string       `json:"country_code,omitempty"`
	Subcountry  string       `json:"subcountry,omitempty"`
	Region      string       `json:"region,omitempty"`
	Population  int64        `json:"population,omitempty"`
	Lat         *float64     `json:"lat,omitempty"`
	Lon         *float64     `json:"lon,omitempty"`
	ID          uint32       `json:"id,omitempty"`
	Match       *Span        `json:"match,omitempty"`
	Matched     *matchedJSON `json:"matched,omitempty"`
	Edits       int          `json:"edits,omitempty"`
	Corrected   string       `json:"corrected,omitempty"`
	DistanceKm  *float64     `json:"distance_km,omitempty"`
}

// matchedJSON is the wire form of a NameMatch.
type matchedJSON struct {
	Name     string `json:"name"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	Formerly bool   `json:"formerly,omitempty"`
}

// MarshalJSON writes the API's object for c, without a match span.
func (c City) MarshalJSON() ([]byte, error) {
	return append(c.appendFields(append([]byte(nil), '{'), ""), '}'), nil
}

// UnmarshalJSON reads the API's object back into c.
func (c *City) UnmarshalJSON(data []byte) error {
	var j cityJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*c = j.city()
	return nil
}

func (j *cityJSON) city() City {
	c := City{
		ID: j.ID, Name: j.Name, Slug: j.Slug, Country: j.Country, CountryCode: j.CountryCode,
		Subcountry: j.Subcountry, Region: j.Region, Population: j.Population,
	}
	if j.Lat != nil && j.Lon != nil {
		c.Lat, c.Lon, c.HasLocation = *j.Lat, *j.Lon, true
	}
	return c
}

// MarshalJSON writes the API's object for h: its city and its match span.
func (h Hit) MarshalJSON() ([]byte, error) {
	return h.appendJSON(nil), nil
}

// UnmarshalJSON reads the API's object back into h. Edits is not on the
// wire and stays 0.
func (h *Hit) UnmarshalJSON(data []byte) error {
	var j cityJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*h = Hit{City: j.city(), Label: j.Label}
	if j.Match != nil {
		h.Match = *j.Match
	}
	if m := j.Matched; m != nil {
		h.Matched = &NameMatch{Name: m.Name, Span: Span{Start: m.Start, End: m.End}, Former: m.Formerly}
	}
	h.Edits, h.Corrected = j.Edits, j.Corrected
	if j.DistanceKm != nil {
		h.DistanceKm, h.HasDistance = *j.DistanceKm, true
	}
	return nil
}

// AppendJSON appends the API's JSON array of hits to dst: the same bytes
// as encoding/json with HTML escaping off, without reflection, so the
// /search handler does not spend its time encoding.
func AppendJSON(dst []byte, hits []Hit) []byte {
	dst = append(dst, '[')
	for i := range hits {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = hits[i].appendJSON(dst)
	}
	return append(dst, ']')
}

func (h *Hit) appendJSON(dst []byte) []byte {
	dst = h.appendFields(append(dst, '{'), h.Label)
	if h.Match != (Span{}) {
		dst = append(dst, `,"match":{`...)
		dst = append(appendSpanFields(dst, h.Match), '}')
	}
	if m := h.Matched; m != nil {
		dst = append(dst, `,"matched":{"name":`...)
		dst = appendJSONString(dst, m.Name)
		dst = appendSpanFields(append(dst, ','), m.Span)
		if m.Former {
			dst = append(dst, `,"formerly":true`...)
		}
		dst = append(dst, '}')
	}
	if h.Edits > 0 {
		dst = append(dst, `,"edits":`...)
		dst = strconv.AppendInt(dst, int64(h.Edits), 10)
		dst = append(dst, `,"corrected":`...)
		dst = appendJSONString(dst, h.Corrected)
	}
	if h.HasDistance {
		dst = append(dst, `,"distance_km":`...)
		dst = appendJSONFloat(dst, math.Round(h.DistanceKm*10)/10)
	}
	return append(dst, '}')
}

// AppendGeoJSON appends hits to dst as a GeoJSON FeatureCollection (RFC
// 7946): one Feature per hit, a Point at [lon, lat] (a null geometry for a
// city without a location), with the hit's JSON object (see AppendJSON) as
// its properties, so that map clients such as Leaflet and MapLibre draw
// the answer as it is.
func AppendGeoJSON(dst []byte, hits []Hit) []byte {
	dst = append(dst, `{"type":"FeatureCollection","features":[`...)
	for i := range hits {
		if i > 0 {
			dst = append(dst, ',')
		}
		h := &hits[i]
		dst = append(dst, `{"type":"Feature","geometry":`...)
		if h.HasLocation {
			dst = append(dst, `{"type":"Point","coordinates":[`...)
			dst = appendJSONFloat(dst, h.Lon)
			dst = append(dst, ',')
			dst = appendJSONFloat(dst, h.Lat)
			dst = append(dst, `]}`...)
		} else {
			dst = append(dst, "null"...)
		}
		dst = append(dst, `,"properties":`...)
		dst = append(h.appendJSON(dst), '}')
	}
	return append(dst, `]}`...)
}

// appendSpanFields writes "start":N,"end":M.
func appendSpanFields(dst []byte, sp Span) []byte {
	dst = append(dst, `"start":`...)
	dst = strconv.AppendInt(dst, int64(sp.Start), 10)
	dst = append(dst, `,"end":`...)
	return strconv.AppendInt(dst, int64(sp.End), 10)
}

// appendFields writes the city's fields of cityJSON in its order, with a
// hit's label after the name, leaving out the empty optional ones as its
// omitempty tags do.
func (c *City) appendFields(dst []byte, label string) []byte {
	dst = append(dst, `"name":`...)
	dst = appendJSONString(dst, c.Name)
	if label != "" {
		dst = append(dst, `,"label":`...)
		dst = appendJSONString(dst, label)
	}
	dst = append(dst, `,"slug":`...)
	dst = appendJSONString(dst, c.Slug)
	dst = append(dst, `,"country":`...)
	dst = appendJSONString(dst, c.Country)
	if c.CountryCode != "" {
		dst = append(dst, `,"country_code":`...)
		dst = appendJSONString(dst, c.CountryCode)
	}
	if c.Subcountry != "" {
		dst = append(dst, `,"subcountry":`...)
		dst = appendJSONString(dst, c.Subcountry)
	}
	if c.Region != "" {
		dst = append(dst, `,"region":`...)
		dst = appendJSONString(dst, c.Region)
	}
	if c.Population != 0 {
		dst = append(dst, `,"population":`...)
		dst = strconv.AppendInt(dst, c.Population, 10)
	}
	if c.HasLocation {
		dst = append(dst, `,"lat":`...)
		dst = appendJSONFloat(dst, c.Lat)
		dst = append(dst, `,"lon":`...)
		dst = appendJSONFloat(dst, c.Lon)
	}
	if c.ID != 0 {
		dst = append(dst, `,"id":`...)
		dst = strconv.AppendUint(dst, uint64(c.ID), 10)
	}
	return dst
}

// appendJSONFloat formats like encoding/json: shortest representation,
// exponent only for very large or small magnitudes.
func appendJSONFloat(dst []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...) // stores never hold these; stay valid JSON
	}
	abs := f
	if abs < 0 {
		abs = -abs
	}
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b, _ := json.Marshal(f)
		return append(dst, b...)
	}
	if abs != 0 && abs < maxFixed {
		// Coordinates have at most fixedDigits decimals: when f is the
		// double nearest to n / 10^fixedDigits, the decimal of n is what
		// the shortest formatting writes (no decimal of fewer digits is
		// nearer f than 10^-fixedDigits, far more than half f's ulp), and
		// writing an integer costs a fraction of the search for it.
		if n := math.Round(f * fixedScale); n/fixedScale == f {
			return appendFixed(dst, int64(n))
		}
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// Numbers below maxFixed with at most fixedDigits decimals are written by
// appendFixed: their n = f × 10^fixedDigits is exact in a float64.
const (
	fixedDigits = 7
	fixedScale  = 1e7
	maxFixed    = 1e8
)

// appendFixed appends n / 10^fixedDigits in decimal, without trailing
// zeros (nor the point when nothing follows it), as strconv's shortest
// formatting writes it.
func appendFixed(dst []byte, n int64) []byte {
	if n < 0 {
		dst = append(dst, '-')
		n = -n
	}
	dst = strconv.AppendInt(dst, n/fixedScale, 10)
	frac := n % fixedScale
	if frac == 0 {
		return dst
	}
	digits := fixedDigits
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	var buf [fixedDigits + 1]byte
	buf[0] = '.'
	for i := digits; i > 0; i-- {
		buf[i] = byte('0' + frac%10)
		frac /= 10
	}
	return append(dst, buf[:digits+1]...)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, U+2028 and
// U+2029 escaped (as encoding/json does), everything else verbatim.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
