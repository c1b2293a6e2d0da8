package search

import "strings"

// abbreviations pairs the short and long forms of the words that place
// names abbreviate: "St. Louis" and "Saint Louis", "Mt Vernon" and "Mount
// Vernon", "Ft Worth" and "Fort Worth". Only these, on names; nothing like
// street-address synonyms.
var abbreviations = [][2]string{
	{"st", "saint"},
	{"ste", "sainte"},
	{"mt", "mount"},
	{"ft", "fort"},
}

// maxVariants bounds the searches one query costs.
const maxVariants = 4

// Variants returns the folded query prefix and the spellings of it with
// its abbreviations written out or abbreviated (see abbreviations): "st-l"
// gives "st-l" and "saint-l"; "saint-louis" gives also "st-louis". A long
// form is abbreviated only as a whole word followed by another, as in
// "saint-l", so that "saint" alone does not also list every name that
// starts with "st". The prefix itself comes first; there are at most
// maxVariants.
func Variants(prefix string) []string {
	out := []string{prefix}
	if !abbreviates(prefix) {
		return out
	}
	words := strings.Split(prefix, "-")
	for i, w := range words {
		last := i == len(words)-1
		for _, pair := range abbreviations {
			var other string
			switch {
			case w == pair[0]:
				other = pair[1]
			case w == pair[1] && !last:
				other = pair[0]
			default:
				continue
			}
			for _, v := range out {
				if len(out) == maxVariants {
					return out
				}
				vw := strings.Split(v, "-")
				vw[i] = other
				out = append(out, strings.Join(vw, "-"))
			}
		}
	}
	return out
}

// abbreviates reports whether a word of prefix is a form of abbreviations,
// so that Variants has more than prefix to give: most queries have none,
// and are not split into words for nothing.
func abbreviates(prefix string) bool {
	for prefix != "" {
		w, rest, _ := strings.Cut(prefix, "-")
		for _, pair := range abbreviations {
			if w == pair[0] || w == pair[1] {
				return true
			}
		}
		prefix = rest
	}
	return false
}
