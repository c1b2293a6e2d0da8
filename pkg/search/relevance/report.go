package relevance

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// Write prints r for people: a table of the figures per category, Find's
// beside the baseline's, then at most maxFailures of the cases whose
// place Find did not put first (all of them when maxFailures < 0), with
// where it came and what came first.
func (r *Report) Write(w io.Writer, maxFailures int) error {
	name := string(r.Dataset)
	if r.Set != "" {
		name += " (" + r.Set + ")"
	}
	fmt.Fprintf(w, "%s: %d cities, %d cases judged", name, r.Cities, len(r.Outcomes))
	if len(r.Absent) > 0 {
		fmt.Fprintf(w, " (%d more whose place it lacks)", len(r.Absent))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "category\tcases\thit@1\tbaseline\thit@5\tbaseline\tMRR\tbaseline\t")
	for _, c := range r.Categories() {
		f, b := c.Find, c.Baseline
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%.3f\t%.3f\t\n", c.Category, f.Cases,
			percent(f.Hit1), percent(b.Hit1), percent(f.Hit5), percent(b.Hit5), f.MRR, b.MRR)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	failures := r.Failures()
	fmt.Fprintf(w, "not first (%d): category, query, intended place, its rank (- when not in the first %d), what came first\n", len(failures), Depth)
	for i, o := range failures {
		if maxFailures >= 0 && i == maxFailures {
			fmt.Fprintf(w, "  … %d more\n", len(failures)-i)
			break
		}
		fmt.Fprintf(w, "  %-9s %-24q %s #%d: %s, first %s\n", o.Category, o.Query, o.Place, o.ID, rankText(o.Rank), firstText(o))
	}
	_, err := fmt.Fprintln(w)
	return err
}

func percent(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }

func rankText(r int) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprint(r)
}

func firstText(o Outcome) string {
	switch {
	case o.Invalid != "":
		return "refused: " + o.Invalid
	case o.First == "":
		return "nothing"
	}
	return o.First
}
