package search

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/biter777/countries"
)

// CountryCode returns the lower-case ISO 3166 alpha-2 code of a country
// given by its code or by its English name in any of the common spellings
// (github.com/biter777/countries knows "Korea, Republic of", "South Korea",
// "Türkiye", "Russian Federation"…). Names of the "Venezuela, Bolivarian
// Republic of" form are also tried by their part before the comma.
func CountryCode(name string) (string, bool) {
	name = strings.TrimSpace(name)
	if !countryText(name) {
		return "", false
	}
	if code, ok := byName(name); ok {
		return code, true
	}
	if code, ok := byName(strings.TrimPrefix(name, "Republic of the ")); ok {
		return code, true
	}
	// "Korea, Republic of": words after the comma qualify the name. A
	// single word there is rather the next item of a list ("cl,ar").
	head, rest, found := strings.Cut(name, ",")
	if !found {
		return "", false
	}
	for _, part := range strings.Split(rest, ",") {
		if !strings.Contains(strings.TrimSpace(part), " ") {
			return "", false
		}
	}
	return byName(head)
}

func byName(name string) (string, bool) {
	if name == "" {
		return "", false
	}
	if code, ok := commonCodes[strings.ToLower(name)]; ok {
		return code, true
	}
	c := countries.ByName(name)
	if c == countries.Unknown {
		return "", false
	}
	code := strings.ToLower(c.Alpha2())
	return code, len(code) == 2
}

// ParseCountries reads a comma-separated list of countries, each an ISO
// 3166 alpha-2 code (any case) or an English name as results show it. Names
// may themselves hold commas ("Korea, Republic of"): the longest run of
// items that names a country wins. It returns lower-case codes, or an
// *InvalidError naming the first item that is no country.
func ParseCountries(list string) ([]string, error) {
	items := strings.Split(list, ",")
	var codes []string
	for i := 0; i < len(items); {
		if strings.TrimSpace(items[i]) == "" {
			i++
			continue
		}
		found := false
		for j := len(items); j > i; j-- {
			if code, ok := CountryCode(strings.Join(items[i:j], ",")); ok {
				codes = appendUnique(codes, code)
				i, found = j, true
				break
			}
		}
		if !found {
			return nil, &InvalidError{Field: "country",
				Message: fmt.Sprintf("Unknown country %q: use ISO codes such as cl, or English names", strings.TrimSpace(items[i]))}
		}
	}
	return codes, nil
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// commonNames are the English short names people use where the ISO 3166
// and UN names are formal or qualified ("Iran (Islamic Republic of)",
// "Russian Federation"): one name per country, whatever the dataset wrote.
var commonNames = map[string]string{
	"ax": "Åland Islands", "bl": "Saint Barthélemy", "bn": "Brunei", "bo": "Bolivia", "bq": "Caribbean Netherlands",
	"cc": "Cocos Islands", "cd": "DR Congo", "cg": "Congo", "ci": "Côte d'Ivoire", "cv": "Cabo Verde",
	"cw": "Curaçao", "cz": "Czechia", "fk": "Falkland Islands", "fm": "Micronesia", "gb": "United Kingdom",
	"gs": "South Georgia and the South Sandwich Islands", "im": "Isle of Man", "ir": "Iran", "kp": "North Korea",
	"kr": "South Korea", "la": "Laos", "ly": "Libya", "md": "Moldova", "mf": "Saint Martin", "mk": "North Macedonia",
	"pn": "Pitcairn Islands", "ps": "Palestine", "re": "Réunion", "ru": "Russia", "sj": "Svalbard and Jan Mayen",
	"st": "São Tomé and Príncipe", "sx": "Sint Maarten", "sy": "Syria", "sz": "Eswatini", "tr": "Türkiye",
	"tw": "Taiwan", "tz": "Tanzania", "us": "United States", "va": "Vatican City", "ve": "Venezuela",
	"vg": "British Virgin Islands", "vi": "U.S. Virgin Islands", "vn": "Vietnam", "wf": "Wallis and Futuna",
	"xk": "Kosovo",
}

// commonCodes finds the codes of commonNames by name, in lower case.
var commonCodes = func() map[string]string {
	m := make(map[string]string, len(commonNames))
	for code, name := range commonNames {
		m[strings.ToLower(name)] = code
	}
	return m
}()

// CountryName returns the English short name of the country with this ISO
// 3166 alpha-2 code (any case), the same for every dataset: "ru" is
// Russia, "ir" Iran. It returns "" for a code it does not know, and for
// codes that are no country's alpha-2 code ("uk", "xx").
func CountryName(code string) string {
	code = strings.ToLower(code)
	if n, ok := commonNames[code]; ok {
		return n
	}
	c := countries.ByName(code)
	if c == countries.Unknown || len(code) != 2 || !strings.EqualFold(c.Alpha2(), code) {
		return ""
	}
	name := c.String()
	if i := strings.Index(name, " ("); i > 0 { // "Korea (Democratic People's Republic of)"
		name = name[:i]
	}
	return name
}

// countryText reports whether name is written as a country's code or
// name is: letters, spaces and the punctuation of names ("Côte d'Ivoire",
// "Korea, Republic of", "Guinea-Bissau"). The country table reads a name
// past any other character, so that "g\x00b" or "g.b" would be Britain: a
// code is taken as given.
func countryText(name string) bool {
	letters, dots := 0, false
	for _, r := range name {
		switch {
		case unicode.IsLetter(r) || unicode.IsMark(r):
			letters++
		case r == '.':
			dots = true
		case r == ' ' || r == ',' || r == '\'' || r == '’' || r == '-' || r == '(' || r == ')' || r == '&':
		default:
			return false
		}
	}
	return !dots || letters > 3 // "U.S. Virgin Islands", but no dotted code
}
