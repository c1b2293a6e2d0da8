package relevance

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Floors are the figures of Find that each category of each dataset must
// keep: a ranking change may raise them (then record them again) but not
// lower them.
type Floors map[search.Dataset]map[string]Figures

// ReadFloors reads the floors recorded at path.
func ReadFloors(path string) (Floors, error) {
	var f Floors
	return f, readJSON(path, "floors", &f)
}

// readJSON decodes the JSON file at path into v; what names it in errors.
func readJSON(path, what string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", what, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return nil
}

// writeJSON writes v to path as indented JSON; what names it in errors.
func writeJSON(path, what string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", what, err)
	}
	return nil
}

// WriteFloors records the figures of reports at path, rounded as Check
// compares them.
func WriteFloors(path string, reports []Report) error {
	f := Floors{}
	for i := range reports {
		cats := map[string]Figures{}
		for _, c := range reports[i].Categories() {
			cats[c.Category] = rounded(c.Find)
		}
		f[reports[i].Dataset] = cats
	}
	return writeJSON(path, "floors", f)
}

// Check returns a sentence for each figure of r that fell below its
// floor, and for each category of r that has none recorded.
func (f Floors) Check(r *Report) []string {
	var drops []string
	floors := f[r.Dataset]
	for _, c := range r.Categories() {
		floor, ok := floors[c.Category]
		if !ok {
			drops = append(drops, fmt.Sprintf("%s %s: no floor recorded (run the test with -update)", r.Dataset, c.Category))
			continue
		}
		got := rounded(c.Find)
		for _, m := range []struct {
			name       string
			got, floor float64
		}{{"hit@1", got.Hit1, floor.Hit1}, {"hit@5", got.Hit5, floor.Hit5}, {"MRR", got.MRR, floor.MRR}} {
			if m.got < m.floor {
				drops = append(drops, fmt.Sprintf("%s %s: %s %.4f, below its floor %.4f", r.Dataset, c.Category, m.name, m.got, m.floor))
			}
		}
	}
	slices.Sort(drops)
	return drops
}

// rounded rounds the measures of f to 4 decimals, as floors keep them.
func rounded(f Figures) Figures {
	r := func(x float64) float64 { return math.Round(x*1e4) / 1e4 }
	f.Hit1, f.Hit5, f.MRR = r(f.Hit1), r(f.Hit5), r(f.MRR)
	return f
}
