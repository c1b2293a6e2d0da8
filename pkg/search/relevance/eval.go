package relevance

import (
	"context"
	"errors"
	"fmt"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Depth is how far down an answer the measures look: the length of the
// list a person sees by default.
const Depth = search.DefaultLimit

// Outcome is how one case fared, in Find's answer and in the baseline's.
type Outcome struct {
	Case
	// Rank is where the intended place came in Find's answer, from 1; 0
	// when it was not in the first Depth.
	Rank int
	// First is what came first, in words; "" for an empty answer.
	First string
	// Invalid is the message of a query that Find refused (too few
	// letters): to the person, an answer without their place.
	Invalid string
	// BaselineRank and BaselineFirst are Rank and First for the baseline.
	BaselineRank  int
	BaselineFirst string
}

// Report is one run of a judgments file on one dataset.
type Report struct {
	Dataset search.Dataset
	// Set names the judgments file the cases came from, for Write's
	// heading ("validation"); empty for the judged cases.
	Set string
	// Cities is how many cities the dataset holds (see search.DatasetStats).
	Cities int
	// Outcomes are those of the cases whose place the dataset has, in
	// the file's order.
	Outcomes []Outcome
	// Absent are the cases whose place the dataset lacks: judged on the
	// other datasets only.
	Absent []Case
}

// Evaluate runs cases through svc on dataset d, as a person's box would ask
// (Depth results, typos on, and for a case with a location that point with
// search.DefaultBiasScale), and through base, which must index the same
// cities.
func Evaluate(ctx context.Context, svc *search.Service, d search.Dataset, base *Baseline, cases []Case) (Report, error) {
	stats, err := svc.Stats(ctx, d)
	if err != nil {
		return Report{}, fmt.Errorf("relevance: %w", err)
	}
	r := Report{Dataset: d, Cities: stats.Cities}
	for _, c := range cases {
		if !base.Has(c.ID) {
			r.Absent = append(r.Absent, c)
			continue
		}
		o := Outcome{Case: c}
		req := search.Request{Dataset: d, Text: c.Query, Limit: Depth, Fuzzy: true}
		if c.Near != nil {
			req.Near, req.BiasScale = c.Near, search.DefaultBiasScale
		}
		res, err := svc.Find(ctx, req)
		var invalid *search.InvalidError
		switch {
		case errors.As(err, &invalid):
			o.Invalid = invalid.Message
		case err != nil:
			return Report{}, fmt.Errorf("find %q (line %d) in %s: %w", c.Query, c.Line, d, err)
		}
		cities := make([]search.City, len(res.Hits))
		for i := range res.Hits {
			cities[i] = res.Hits[i].City
		}
		o.Rank, o.First = rank(cities, c.ID)
		o.BaselineRank, o.BaselineFirst = rank(base.Top(c.Query, Depth), c.ID)
		r.Outcomes = append(r.Outcomes, o)
	}
	return r, nil
}

// rank returns where id comes in cities, from 1 (0 when it does not), and
// the first city in words.
func rank(cities []search.City, id uint32) (int, string) {
	if len(cities) == 0 {
		return 0, ""
	}
	first := Describe(&cities[0])
	for i := range cities {
		if cities[i].ID == id {
			return i + 1, first
		}
	}
	return 0, first
}

// Describe names c as a failure lists it: name, division, country and id,
// so that two places of one name can be told apart.
func Describe(c *search.City) string {
	s := c.Name
	if c.Subcountry != "" {
		s += ", " + c.Subcountry
	}
	return fmt.Sprintf("%s, %s #%d", s, c.Country, c.ID)
}

// Figures are the measures over some cases.
type Figures struct {
	Cases int `json:"cases"`
	// Hit1 and Hit5 are the shares of cases whose place came first, or
	// in the first five; MRR is the mean of 1/Rank (0 for a place not in
	// the first Depth). All three are 0..1.
	Hit1 float64 `json:"hit1"`
	Hit5 float64 `json:"hit5"`
	MRR  float64 `json:"mrr"`
}

// figures measures ranks.
func figures(ranks []int) Figures {
	f := Figures{Cases: len(ranks)}
	if f.Cases == 0 {
		return f
	}
	for _, r := range ranks {
		if r == 1 {
			f.Hit1++
		}
		if r >= 1 && r <= 5 {
			f.Hit5++
		}
		if r >= 1 {
			f.MRR += 1 / float64(r)
		}
	}
	n := float64(f.Cases)
	f.Hit1, f.Hit5, f.MRR = f.Hit1/n, f.Hit5/n, f.MRR/n
	return f
}

// AllCategories names the line of a Report's figures over every case.
const AllCategories = "all"

// CategoryFigures are the measures of one category, for Find and for the
// baseline.
type CategoryFigures struct {
	Category       string
	Find, Baseline Figures
}

// Categories returns the figures of each category, in the order the
// judgments file first names them, then those of AllCategories.
func (r *Report) Categories() []CategoryFigures {
	var order []string
	find, base := map[string][]int{}, map[string][]int{}
	for _, o := range r.Outcomes {
		if _, ok := find[o.Category]; !ok {
			order = append(order, o.Category)
		}
		find[o.Category] = append(find[o.Category], o.Rank)
		base[o.Category] = append(base[o.Category], o.BaselineRank)
		find[AllCategories] = append(find[AllCategories], o.Rank)
		base[AllCategories] = append(base[AllCategories], o.BaselineRank)
	}
	out := make([]CategoryFigures, 0, len(order)+1)
	for _, cat := range append(order, AllCategories) {
		out = append(out, CategoryFigures{Category: cat, Find: figures(find[cat]), Baseline: figures(base[cat])})
	}
	return out
}

// Failures returns the outcomes whose place Find did not put first.
func (r *Report) Failures() []Outcome {
	var out []Outcome
	for _, o := range r.Outcomes {
		if o.Rank != 1 {
			out = append(out, o)
		}
	}
	return out
}
