// Package relevance judges cityfinder's ranking the way a search team
// does: a file of judged queries (what a person types, and the GeoNames id
// of the place they mean), run through search.Service.Find on a real
// dataset, and scored per category with hit@1, hit@5 and MRR beside a plain
// population-order baseline computed from the same cities.
package relevance

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Case is one judged query.
type Case struct {
	// Line is the case's line in its judgments file, for messages.
	Line int
	// Category groups cases that test one behaviour ("prefix", "typo" …).
	Category string
	// Query is the text as typed, a trailing space included.
	Query string
	// ID is the GeoNames id of the intended place.
	ID uint32
	// Near, when not nil, is where the person is: Find gets it with the
	// default bias scale.
	Near *search.Point
	// Place names the intended place for people reading a failure.
	Place string
}

// judgmentColumns is how many tab-separated fields a case line has:
// category, query, id, lat, lon, place.
const judgmentColumns = 6

// ReadJudgments reads the cases of a judgments file: one case a line, as
// judgmentColumns tab-separated fields, with lines starting with '#' and
// empty lines skipped. A query is kept exactly as written, so a trailing
// space is part of it. Errors name the line at fault.
func ReadJudgments(r io.Reader) ([]Case, error) {
	var cases []Case
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		c, err := parseCase(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		c.Line = n
		cases = append(cases, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read judgments: %w", err)
	}
	return cases, nil
}

// LoadJudgments reads the judgments file at path (see ReadJudgments).
func LoadJudgments(path string) ([]Case, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open judgments: %w", err)
	}
	defer f.Close()
	cases, err := ReadJudgments(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cases, nil
}

func parseCase(line string) (Case, error) {
	f := strings.Split(line, "\t")
	if len(f) != judgmentColumns {
		return Case{}, fmt.Errorf("%d fields, want %d: category, query, id, lat, lon, place", len(f), judgmentColumns)
	}
	c := Case{Category: f[0], Query: f[1], Place: f[5]}
	if c.Category == "" || strings.TrimSpace(c.Query) == "" {
		return Case{}, fmt.Errorf("empty category or query")
	}
	if c.Category == AllCategories {
		return Case{}, fmt.Errorf("category %q names the figures over every case", AllCategories)
	}
	id, err := strconv.ParseUint(f[2], 10, 32)
	if err != nil || id == 0 {
		return Case{}, fmt.Errorf("id %q is not a GeoNames id", f[2])
	}
	c.ID = uint32(id)
	switch {
	case f[3] == "" && f[4] == "":
	case f[3] == "" || f[4] == "":
		return Case{}, fmt.Errorf("a location needs both lat and lon")
	default:
		lat, errLat := strconv.ParseFloat(f[3], 64)
		lon, errLon := strconv.ParseFloat(f[4], 64)
		if errLat != nil || errLon != nil || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			return Case{}, fmt.Errorf("invalid location %q,%q", f[3], f[4])
		}
		c.Near = &search.Point{Lat: lat, Lon: lon}
	}
	return c, nil
}
