package search

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
	// GeoNames' codes of the four nations: "cambridge england", "perth scotland".
	"gb": "ENG England|SCT Scotland|WLS Wales|NIR Northern Ireland",
}

// regionAbbreviations are the old abbreviations that are no prefix of the
// division's name ("fla" is Florida, while "mass", "ont" and "calif" are
// read as prefixes of Massachusetts, Ontario and California anyway).
var regionAbbreviations = map[string]string{
	"us": "FLA Florida|N-DAK North Dakota|S-DAK South Dakota|W-VA West Virginia",
	"ca": "ALTA Alberta|NFLD Newfoundland and Labrador|PEI Prince Edward Island|PQ Quebec",
}
