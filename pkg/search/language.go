package search

import (
	"errors"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// maxLanguages bounds a list of languages: nobody reads more than a few,
// and each costs a lookup per hit.
const maxLanguages = 10

// ParseLanguages reads a list of languages as a person or a page gives it,
// best first: BCP 47 tags separated by commas ("de,en", "pt-BR, pt"). A
// tag that is well formed but that no registry knows ("xx") is kept: it
// finds no names and the next language, or the dataset's names, answer.
// Its error, for a tag that is not one at all, matches ErrInvalidQuery.
func ParseLanguages(list string) ([]language.Tag, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	parts := strings.Split(list, ",")
	if len(parts) > maxLanguages {
		return nil, invalid("lang", "Too many languages in lang: give at most %d", maxLanguages)
	}
	tags := make([]language.Tag, 0, len(parts))
	for _, p := range parts {
		p = strings.TrimSpace(p)
		t, err := language.Parse(p)
		var unknown language.ValueError
		if err != nil && !errors.As(err, &unknown) {
			return nil, invalid("lang", "Invalid lang %q: use language tags such as de or pt-BR, comma-separated", p)
		}
		tags = append(tags, t)
	}
	return tags, nil
}

// AcceptLanguages reads an Accept-Language header (RFC 9110) into a list
// of languages, best first, leaving out "*". A header that cannot be read
// gives none: browsers send what they send, and the dataset's names are a
// fine answer to it.
func AcceptLanguages(header string) []language.Tag {
	tags, _, err := language.ParseAcceptLanguage(header)
	if err != nil {
		return nil
	}
	if len(tags) > maxLanguages {
		tags = tags[:maxLanguages]
	}
	return tags
}

// localizer shows a hit in the languages of a request: the city's local
// name (see LocalName) and its country's name (from CLDR, through
// golang.org/x/text/language/display) in the first of the languages that
// has one, its own names where none has. Region names stay the dataset's:
// CLDR has no names of first-level divisions. English stands for the
// dataset's own names, which are English already (GeoNames' main names,
// the okfn and MaxMind files' English country names): a city without an
// English local name shows them when English comes before the languages
// it has names in, so that "en,de" shows Munich, not München.
type localizer struct {
	// chains are the tags to look names up by, per language: the tag,
	// then its parents ("de-CH", "de").
	chains    [][]string
	english   []bool          // per language
	countries []display.Namer // per language, nil for English or no CLDR data
}

// newLocalizer returns the localizer of langs, nil for none.
func newLocalizer(langs []language.Tag) *localizer {
	if len(langs) == 0 {
		return nil
	}
	l := &localizer{}
	for _, t := range langs {
		if t == language.Und { // an unknown language: it names nothing
			continue
		}
		var chain []string
		for p := t; p != language.Und; p = p.Parent() {
			chain = append(chain, p.String())
		}
		l.chains = append(l.chains, chain)
		base, _ := t.Base()
		english := base.String() == "en"
		var namer display.Namer
		if !english {
			namer = display.Regions(t)
		}
		l.english, l.countries = append(l.english, english), append(l.countries, namer)
	}
	return l
}

// name returns the name of c to show: its local name in the first
// language that has one, else Name.
func (l *localizer) name(c *City) string {
	if l == nil || len(c.LocalNames) == 0 {
		return c.Name
	}
	for k, chain := range l.chains {
		for _, tag := range chain {
			for i := range c.LocalNames {
				if n := &c.LocalNames[i]; !n.Former && n.Lang == tag {
					return n.Name
				}
			}
		}
		if l.english[k] {
			break // the dataset's name, before any later language
		}
	}
	return c.Name
}

// country returns the name of the country of c to show: CLDR's in the
// first language that names it, else Country.
func (l *localizer) country(c *City) string {
	if l == nil || len(c.CountryCode) != 2 {
		return c.Country
	}
	region, err := language.ParseRegion(c.CountryCode)
	if err != nil {
		return c.Country
	}
	for k, namer := range l.countries {
		if l.english[k] {
			break // the dataset's English, before any later language
		}
		if namer == nil {
			continue
		}
		if name := namer.Name(region); name != "" {
			return name
		}
	}
	return c.Country
}

// formerName reports whether name is one that c no longer goes by.
func formerName(c *City, name string) bool {
	for i := range c.LocalNames {
		if n := &c.LocalNames[i]; n.Former && n.Name == name {
			return true
		}
	}
	return false
}

// scoreKey is the key by which Score counts a match of c through k: the
// local name that the reader's language shows counts as the city's name
// ("mün" in German weighs München as a name, not as one of Munich's
// many alternate names). k itself is left as it is: it says which name
// matched.
func (l *localizer) scoreKey(c *City, k NameKey) NameKey {
	if l == nil || k.Alt == 0 || len(c.LocalNames) == 0 {
		return k
	}
	if shown := l.name(c); shown != c.Name && c.KeyName(k) == shown {
		k.Alt = 0
	}
	return k
}

// scored returns f reached through text with edits typos, scored by the
// local name its reader's language shows (see scoreKey).
func (f *finder) scored(found *Found, text string, edits int) variantFound {
	v := scored(found, text, edits)
	if k := f.loc.scoreKey(&found.City, found.Key); k != found.Key {
		v.score = Score(text, k, found.Population, len(found.AltNames), edits)
	}
	return v
}

// Localize shows hits that no query matched (a city looked up by its id,
// the cities around a point) in langs, as Find shows its own: each hit's
// Name becomes its local name in the first of langs that has one, and its
// Country CLDR's name; nothing changes without langs. A hit that Find
// returned is in its languages already, and its match spans are of the
// names shown: Localize must not be applied to it again.
func Localize(hits []Hit, langs []language.Tag) {
	loc := newLocalizer(langs)
	if loc == nil {
		return
	}
	for i := range hits {
		c := &hits[i].City
		c.Name, c.Country = loc.name(c), loc.country(c)
	}
}
