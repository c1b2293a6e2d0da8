package search

// labelLevels is how many parts a label can grow to: the name; its region
// (Subcountry); its country; its region code.
const labelLevels = 4

// Labels returns, for each hit of an answer, the one line that a page can
// show for it and that no other hit of the answer shares: its Name alone
// when no other hit has that name, else the name and just as much of where
// it is as tells it apart from the hits it shares that name with: its
// region (Subcountry), then its country ("London, England", "London,
// Ontario"; "Springfield, Oregon, United States" only when another
// Springfield, Oregon is in another country). Two hits that read the same
// even then (a source that names no region, two region codes) get the
// region code as well, in brackets. So a label always starts with Name,
// and what follows, when anything does, is ", " and the details, as
// Google's main_text and secondary_text split it.
//
// Labels is a pure function of the hits' names, regions and countries:
// whatever language they are in (see Request.Languages), the labels are
// in it too.
func Labels(hits []Hit) []string {
	levels := make([]int, len(hits))
	labels := make([]string, len(hits))
	for i := range hits {
		labels[i] = hits[i].Name
	}
	// A hit whose label another shares shows one part more, until none
	// is shared or no part is left: only the hits that collide grow.
	for range labelLevels - 1 {
		grew := false
		for i := range hits {
			if levels[i] < labelLevels-1 && sharesLabel(labels, i) {
				levels[i]++
				grew = true
			}
		}
		if !grew {
			break
		}
		for i := range hits {
			labels[i] = hits[i].label(levels[i])
		}
	}
	return labels
}

// Label sets the Label of each hit to what Labels gives it.
func Label(hits []Hit) {
	for i, l := range Labels(hits) {
		hits[i].Label = l
	}
}

// sharesLabel reports whether another label is the same as labels[i].
func sharesLabel(labels []string, i int) bool {
	for j := range labels {
		if j != i && labels[j] == labels[i] {
			return true
		}
	}
	return false
}

// label returns the city's label with level parts after its name: 1 adds
// the region, 2 the country, 3 the region code. A part that is empty, or
// that repeats the part before it (Singapore, Singapore), is left out.
func (c *City) label(level int) string {
	if level == 0 {
		return c.Name
	}
	label, last := c.Name, c.Name
	for _, part := range []string{c.Subcountry, c.Country}[:min(level, 2)] {
		if part != "" && part != last {
			label += ", " + part
			last = part
		}
	}
	if level >= 3 && c.Region != "" {
		label += " (" + c.Region + ")"
	}
	return label
}
