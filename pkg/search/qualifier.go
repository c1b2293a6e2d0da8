package search

import (
	"slices"
	"strings"
)

// reading is one way to take the last words of a query as a place: the
// filters to search the words before them with.
type reading struct {
	countries []string // none: any country
	regions   []string // none: the countries alone
	label     string   // as Result.Qualifier says it
}

// readings returns the ways to read the folded words of tail as a place:
// the whole of them as a country or as a division ("tex", "new-south-w",
// "costa-rica"), or a division followed by its country ("texas usa",
// "ontario canada"). A part names the countries and divisions of the place
// index (see placeIndex.lookup) and those of known, the cities that the
// words before tail match, by their country and Subcountry names and
// Region codes (see readPart): so a division of any country is found by
// the name the dataset gives it ("bavaria", "île-de-france"), through the
// same filters every store applies. A half-typed part that names several places reads as all of
// them ("aus": Australia and Austria).
func readings(tail []string, known []Found) []reading {
	var out []reading
	whole := strings.Join(tail, "-")
	countries, divisions := readPart(whole, known)
	if len(countries) > 0 {
		out = append(out, reading{countries: countries, label: "country:" + strings.Join(countries, ",")})
	}
	// A division of a country read already adds nothing but the cost of
	// a search ("austr": the Australian Capital Territory).
	r := reading{label: "region:" + whole}
	for _, d := range divisions {
		if !slices.Contains(countries, d.country) {
			r.countries = appendUnique(r.countries, d.country)
			for _, slug := range d.regions {
				r.regions = appendUnique(r.regions, slug)
			}
		}
	}
	if len(r.regions) > 0 {
		out = append(out, r)
	}
	for i := 1; i < len(tail); i++ {
		region, country := strings.Join(tail[:i], "-"), strings.Join(tail[i:], "-")
		in, _ := readPart(country, known)
		if len(in) == 0 {
			continue
		}
		_, divisions := readPart(region, known)
		r := reading{label: "region:" + region + " country:" + strings.Join(in, ",")}
		for _, d := range divisions {
			if slices.Contains(in, d.country) {
				r.countries = appendUnique(r.countries, d.country)
				r.regions = append(r.regions, d.regions...)
			}
		}
		if len(r.regions) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// readPart returns the countries (by code) and the divisions that the
// folded qualifier part names, in the place index or among the known
// cities' countries, subcountries and region codes (whole: "paris a8",
// the MaxMind code of Île-de-France). What names nothing there is no
// place: a typo rather ("san fransisco"), not worth a search of every
// match of the words before it.
func readPart(part string, known []Found) (countries []string, divisions []place) {
	found, exact := places().lookup(nil, part)
	for i := range known {
		c := &known[i].City
		if c.CountryCode == "" {
			continue
		}
		if namesPlace(part, Slug(c.Country), exact) {
			found = append(found, place{country: c.CountryCode})
		}
		if c.Subcountry != "" {
			if sub := Slug(c.Subcountry); namesPlace(part, sub, exact) {
				found = append(found, place{country: c.CountryCode, regions: []string{sub}})
			}
		}
		if c.Region != "" && Slug(c.Region) == part {
			found = append(found, place{country: c.CountryCode, regions: []string{part}})
		}
	}
	for _, p := range found {
		if len(p.regions) == 0 {
			countries = appendUnique(countries, p.country)
		} else {
			divisions = append(divisions, p)
		}
	}
	return countries, divisions
}
