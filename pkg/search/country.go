package search

import (
	"fmt"
	"strings"

	"github.com/biter777/countries"
)

// CountryCode returns the lower-case ISO 3166 alpha-2 code of a country
// given by its code or by its English name in any of the common spellings
// (github.com/biter777/countries knows "Korea, Republic of", "South Korea",
// "Türkiye", "Russian Federation"…). Names of the "Venezuela, Bolivarian
// Republic of" form are also tried by their part before the comma.
func CountryCode(name string) (string, bool) {
	name = strings.TrimSpace(name)
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
