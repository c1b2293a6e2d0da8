package search

import "strings"

// regionCodes pairs the postal codes of the first-level divisions that
// people write after a city's name ("springfield il", "london on",
// "perth wa") with their names, for the countries where that is the
// custom. The okfn dataset names divisions, GeoNames and MaxMind give codes
// (the same codes for these countries): a qualifier of either form finds
// both.
var regionCodes = map[string]string{
	"us": "AL Alabama|AK Alaska|AZ Arizona|AR Arkansas|CA California|CO Colorado|CT Connecticut|DE Delaware|" +
		"DC District of Columbia|FL Florida|GA Georgia|HI Hawaii|ID Idaho|IL Illinois|IN Indiana|IA Iowa|KS Kansas|" +
		"KY Kentucky|LA Louisiana|ME Maine|MD Maryland|MA Massachusetts|MI Michigan|MN Minnesota|MS Mississippi|" +
		"MO Missouri|MT Montana|NE Nebraska|NV Nevada|NH New Hampshire|NJ New Jersey|NM New Mexico|NY New York|" +
		"NC North Carolina|ND North Dakota|OH Ohio|OK Oklahoma|OR Oregon|PA Pennsylvania|RI Rhode Island|" +
		"SC South Carolina|SD South Dakota|TN Tennessee|TX Texas|UT Utah|VT Vermont|VA Virginia|WA Washington|" +
		"WV West Virginia|WI Wisconsin|WY Wyoming",
	"ca": "AB Alberta|BC British Columbia|MB Manitoba|NB New Brunswick|NL Newfoundland and Labrador|" +
		"NS Nova Scotia|NT Northwest Territories|NU Nunavut|ON Ontario|PE Prince Edward Island|QC Quebec|" +
		"SK Saskatchewan|YT Yukon",
	"au": "ACT Australian Capital Territory|NSW New South Wales|NT Northern Territory|QLD Queensland|" +
		"SA South Australia|TAS Tasmania|VIC Victoria|WA Western Australia",
}

// regionAlias is one division of regionCodes, folded.
type regionAlias struct {
	country, code, name string
}

var regionAliases = func() []regionAlias {
	var out []regionAlias
	for country, list := range regionCodes {
		for _, entry := range strings.Split(list, "|") {
			code, name, _ := strings.Cut(entry, " ")
			out = append(out, regionAlias{country: country, code: Slug(code), name: Slug(name)})
		}
	}
	return out
}()

// regionFilter reads a folded qualifier as a first-level division: the
// slugs a city's Subcountry or Region may have to lie in it, and the
// countries it is in when a known code or name says (none otherwise).
// "il" gives il and illinois in the US; "a8" (a MaxMind code) gives a8.
func regionFilter(qualifier string) (regions, countries []string) {
	regions = []string{qualifier}
	for _, a := range regionAliases {
		if a.code != qualifier && a.name != qualifier {
			continue
		}
		regions = appendUnique(appendUnique(regions, a.code), a.name)
		countries = appendUnique(countries, a.country)
	}
	return regions, countries
}
