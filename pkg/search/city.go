package search

import (
	"encoding/json"
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
	// Subcountry is the first-level division's name (okfn rows).
	Subcountry string
	// Region is the first-level division's code (MaxMind rows, e.g. "A8").
	Region string
	// Population is 0 when the source does not know it: a missing
	// population is never reported as 0.
	Population int64
	// Lat and Lon are decimal degrees, meaningful when HasLocation is set.
	Lat, Lon    float64
	HasLocation bool
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

// cityJSON is the wire form of a City; optional fields are left out when
// the dataset does not have them.
type cityJSON struct {
	Name        string   `json:"name"`
	Slug        string   `json:"slug"`
	Country     string   `json:"country"`
	CountryCode string   `json:"country_code,omitempty"`
	Subcountry  string   `json:"subcountry,omitempty"`
	Region      string   `json:"region,omitempty"`
	Population  int64    `json:"population,omitempty"`
	Lat         *float64 `json:"lat,omitempty"`
	Lon         *float64 `json:"lon,omitempty"`
	ID          uint32   `json:"id,omitempty"`
}

// MarshalJSON writes the API's object for c.
func (c City) MarshalJSON() ([]byte, error) {
	j := cityJSON{
		Name: c.Name, Slug: c.Slug, Country: c.Country, CountryCode: c.CountryCode,
		Subcountry: c.Subcountry, Region: c.Region, Population: c.Population, ID: c.ID,
	}
	if c.HasLocation {
		j.Lat, j.Lon = &c.Lat, &c.Lon
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the API's object back into c.
func (c *City) UnmarshalJSON(data []byte) error {
	var j cityJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*c = City{
		ID: j.ID, Name: j.Name, Slug: j.Slug, Country: j.Country, CountryCode: j.CountryCode,
		Subcountry: j.Subcountry, Region: j.Region, Population: j.Population,
	}
	if j.Lat != nil && j.Lon != nil {
		c.Lat, c.Lon, c.HasLocation = *j.Lat, *j.Lon, true
	}
	return nil
}
