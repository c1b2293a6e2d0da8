package main

import (
	"io"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/width"
)

// column is one column of a table: its title, and whether its cells line
// up on the right (numbers).
type column struct {
	title string
	right bool
}

// writeTable writes rows under a header, each column as wide as its widest
// cell on a terminal: text/tabwriter counts bytes, which shifts the columns
// after "Đà Nẵng" or "東京". Columns with no cell filled are left out, and
// no line ends in spaces.
func writeTable(w io.Writer, cols []column, rows [][]string) error {
	widths := make([]int, len(cols))
	used := make([]bool, len(cols))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], displayWidth(cell))
			used[i] = used[i] || cell != ""
		}
	}
	var shown []int
	for i, c := range cols {
		if used[i] {
			widths[i] = max(widths[i], displayWidth(c.title))
			shown = append(shown, i)
		}
	}
	var b strings.Builder
	line := func(cells func(i int) string) {
		var l strings.Builder
		for n, i := range shown {
			cell := cells(i)
			pad := strings.Repeat(" ", widths[i]-displayWidth(cell))
			if n > 0 {
				l.WriteString("  ")
			}
			if cols[i].right {
				l.WriteString(pad + cell)
			} else {
				l.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteByte('\n')
	}
	line(func(i int) string { return cols[i].title })
	for _, r := range rows {
		line(func(i int) string { return r[i] })
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// displayWidth is how many terminal columns s takes: none for combining
// marks and invisible format characters, two for East Asian wide and
// fullwidth characters, one for the others.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Cc):
		return 0
	case r >= 0x1160 && r <= 0x11FF: // Hangul vowels and final consonants join the syllable before
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// truncateWidth cuts s to at most n terminal columns, ending in "..."
// when it cuts (ASCII: "…" is two columns wide on some terminals).
func truncateWidth(s string, n int) string {
	if displayWidth(s) <= n {
		return s
	}
	w := 0
	for i, r := range s {
		if w+runeWidth(r) > n-3 {
			return s[:i] + "..."
		}
		w += runeWidth(r)
	}
	return s
}

// thousands formats n with a comma between each group of three digits:
// 14804116 is "14,804,116".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	return b.String()
}
