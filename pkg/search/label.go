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
	labels := make([]string, len(hits))
	labelInto(labels, make([]int, len(hits)), make([]bool, len(hits)), hits)
	return labels
}

// Label sets the Label of each hit to what Labels gives it. An answer of
// up to labelsOnStack hits is labelled without Labels' slices.
func Label(hits []Hit) {
	if len(hits) > labelsOnStack {
		for i, l := range Labels(hits) {
			hits[i].Label = l
		}
		return
	}
	var labels [labelsOnStack]string
	var levels [labelsOnStack]int
	var grew [labelsOnStack]bool
	n := len(hits)
	labelInto(labels[:n], levels[:n], grew[:n], hits)
	for i := range hits {
		hits[i].Label = labels[i]
	}
}

// labelsOnStack is the most hits that Label labels in arrays of its own;
// an answer has 10 by default.
const labelsOnStack = 32

// labelInto puts the labels of hits into labels, with levels and grew,
// of len(hits) each, levels all 0, to work in.
func labelInto(labels []string, levels []int, grew []bool, hits []Hit) {
	for i := range hits {
		labels[i] = hits[i].Name
	}
	// A hit whose label another shares shows one part more, until none
	// is shared or no part is left: only the hits that collide grow, each
	// told by the labels of the round before.
	for range labelLevels - 1 {
		grown := false
		for i := range hits {
			grew[i] = levels[i] < labelLevels-1 && sharesLabel(labels, i)
			grown = grown || grew[i]
		}
		if !grown {
			break
		}
		for i := range hits {
			if grew[i] {
				levels[i]++
				labels[i] = hits[i].label(levels[i])
			}
		}
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
	var buf [128]byte // one allocation, the string, for most labels
	label, last := append(buf[:0], c.Name...), c.Name
	parts := [...]string{c.Subcountry, c.Country}
	for _, part := range parts[:min(level, 2)] {
		if part != "" && part != last {
			label = append(append(label, ", "...), part...)
			last = part
		}
	}
	if level >= 3 && c.Region != "" {
		label = append(append(append(label, " ("...), c.Region...), ')')
	}
	return string(label)
}
