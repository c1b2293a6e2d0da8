package relevance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// KeystrokePlaces is how many places the keystroke measure types: the
// most populous ones, as issue 20 counts them.
const KeystrokePlaces = 1000

// TiedShare is the share of a place's population from which another place
// is of about its size (and its inverse, up to which), so that population order does not settle which of
// the two a person means: GeoNames' figures come from censuses and
// estimates of different years and different boundaries (Nāgpur's
// 2,228,018 and Nagoya's 2,191,279, two records of Sendai of 1,063,103
// and 1,037,562), and a tenth is a few years of a city's growth. A place
// that Find puts first later than population order only behind places of
// about its size is counted apart from one that waits behind a smaller
// place (see Typed.Tied).
const TiedShare = 0.9

// Keystrokes is how many letters a person types before the place they
// mean comes first, for the most populous places of a dataset, each typed
// letter by letter from search.MinQueryLetters on, by Find and by the
// population-order baseline. It says what the ranking costs the places
// that matter most, which a judged case at a time cannot: each departure
// from population order that makes a large place wait is counted.
type Keystrokes struct {
	Dataset search.Dataset
	// Places are the places typed, most populous first.
	Places []Typed
}

// Typed is one place of the keystroke measure: how many letters of its
// name (runes as written, spaces included) were typed before it came
// first, by Find and by the baseline; one more than the name has when it
// never did.
type Typed struct {
	City           search.City
	Find, Baseline int
	// Instead is what Find listed first when population order first put
	// City first, when Find did not (the zero City for nothing).
	Instead search.City
	// Tied is set when Find puts City first later than population order,
	// but at every letter in between listed first a place of about its
	// size (from TiedShare of its population to 1/TiedShare of it):
	// population order does not say which of the two is meant, fame
	// does. Behind a place much larger, found by a typo or a qualifier,
	// it is not tied.
	Tied bool
}

// MeasureKeystrokes types the n most populous places of base (see
// Baseline.Largest) into svc on dataset d, as Evaluate asks.
func MeasureKeystrokes(ctx context.Context, svc *search.Service, d search.Dataset, base *Baseline, n int) (Keystrokes, error) {
	k := Keystrokes{Dataset: d}
	for _, c := range base.Largest(n) {
		t := Typed{City: c}
		name := []rune(c.Name)
		t.Find, t.Baseline = len(name)+1, len(name)+1
		tied := true // so far, every place first instead is of about c's size
		for typed := search.MinQueryLetters; typed <= len(name); typed++ {
			prefix := string(name[:typed])
			if t.Baseline > len(name) {
				if top := base.Top(prefix, 1); len(top) > 0 && top[0].ID == c.ID {
					t.Baseline = typed
				}
			}
			if t.Find > len(name) {
				first, err := firstFound(ctx, svc, d, prefix)
				if err != nil {
					return Keystrokes{}, err
				}
				switch {
				case first.ID == c.ID:
					t.Find = typed
				case t.Baseline <= typed:
					if t.Baseline == typed {
						t.Instead = first
					}
					tied = tied && first.ID != 0 && aboutAsLarge(first.Population, c.Population)
				}
			}
			if t.Find <= len(name) && t.Baseline <= len(name) {
				break
			}
		}
		t.Tied = tied && t.Find > t.Baseline
		k.Places = append(k.Places, t)
	}
	return k, nil
}

// aboutAsLarge reports whether a population of pop is of about the size
// of one of size (see TiedShare).
func aboutAsLarge(pop, size int64) bool {
	p, s := float64(pop), float64(size)
	return p >= TiedShare*s && p*TiedShare <= s
}

// firstFound returns what Find lists first for text on dataset d, the
// zero City for nothing or a query it refuses.
func firstFound(ctx context.Context, svc *search.Service, d search.Dataset, text string) (search.City, error) {
	res, err := svc.Find(ctx, search.Request{Dataset: d, Text: text, Limit: Depth, Fuzzy: true})
	var invalid *search.InvalidError
	switch {
	case errors.As(err, &invalid):
		return search.City{}, nil
	case err != nil:
		return search.City{}, fmt.Errorf("find %q in %s: %w", text, d, err)
	case len(res.Hits) == 0:
		return search.City{}, nil
	}
	return res.Hits[0].City, nil
}

// KeystrokeFigures sum up a Keystrokes.
type KeystrokeFigures struct {
	Places int `json:"places"`
	// Later and Sooner count the places that Find puts first after more
	// letters, or fewer, than population order does; Later leaves out the
	// Tied ones, which wait only behind places of about their size (see
	// Typed.Tied): issue 20's target is on Later.
	Later  int `json:"later"`
	Tied   int `json:"tied"`
	Sooner int `json:"sooner"`
	// Mean and BaselineMean are the mean letters typed, by Find and by
	// population order.
	Mean         float64 `json:"mean"`
	BaselineMean float64 `json:"baseline_mean"`
}

// Figures sums k up.
func (k *Keystrokes) Figures() KeystrokeFigures {
	f := KeystrokeFigures{Places: len(k.Places)}
	if f.Places == 0 {
		return f
	}
	for _, t := range k.Places {
		switch {
		case t.Tied:
			f.Tied++
		case t.Find > t.Baseline:
			f.Later++
		case t.Find < t.Baseline:
			f.Sooner++
		}
		f.Mean += float64(t.Find)
		f.BaselineMean += float64(t.Baseline)
	}
	n := float64(f.Places)
	f.Mean, f.BaselineMean = math.Round(f.Mean/n*1e4)/1e4, math.Round(f.BaselineMean/n*1e4)/1e4
	return f
}

// Later returns the places that Find puts first after more letters than
// population order does, tied ones among them, most letters lost first.
func (k *Keystrokes) Later() []Typed {
	var out []Typed
	for _, t := range k.Places {
		if t.Find > t.Baseline {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b Typed) int { return cmp.Compare(b.Find-b.Baseline, a.Find-a.Baseline) })
	return out
}

// Write prints k for people: the figures, then every place that waits
// longer than in population order, with the letters that put it first.
func (k *Keystrokes) Write(w io.Writer) error {
	f := k.Figures()
	fmt.Fprintf(w, "%s keystrokes: the %d most populous places, typed from their %d%s letter: first after %.2f letters on average (population order %.2f); later than population order %d (and %d behind places of about their size), sooner %d\n",
		k.Dataset, f.Places, search.MinQueryLetters, ordinal(search.MinQueryLetters), f.Mean, f.BaselineMean, f.Later, f.Tied, f.Sooner)
	for _, t := range k.Later() {
		name := []rune(t.City.Name)
		tied := ""
		if t.Tied {
			tied = " (tied)"
		}
		fmt.Fprintf(w, "  %-40s %q after %d letters, %q in population order, first %s%s\n",
			Describe(&t.City), typedText(name, t.Find), t.Find, typedText(name, t.Baseline), insteadText(&t), tied)
	}
	_, err := fmt.Fprintln(w)
	return err
}

// insteadText describes what Find listed first instead of t's place,
// with its share of the place's population.
func insteadText(t *Typed) string {
	if t.Instead.ID == 0 {
		return "nothing"
	}
	if t.City.Population == 0 {
		return Describe(&t.Instead)
	}
	return fmt.Sprintf("%s (%.0f%% of its size)", Describe(&t.Instead), 100*float64(t.Instead.Population)/float64(t.City.Population))
}

// typedText is the first n runes of name, or all of it and "…" when n
// is past its end: the place never came first.
func typedText(name []rune, n int) string {
	if n > len(name) {
		return string(name) + "…"
	}
	return string(name[:n])
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "st"
	case 2:
		return "nd"
	case 3:
		return "rd"
	}
	return "th"
}

// KeystrokeFloors are the keystroke figures that each dataset must keep:
// no more places later than population order, tied or not, no higher
// mean.
type KeystrokeFloors map[search.Dataset]KeystrokeFigures

// ReadKeystrokeFloors reads the keystroke floors recorded at path.
func ReadKeystrokeFloors(path string) (KeystrokeFloors, error) {
	var f KeystrokeFloors
	return f, readJSON(path, "keystroke floors", &f)
}

// WriteKeystrokeFloors records the figures of measures at path.
func WriteKeystrokeFloors(path string, measures []Keystrokes) error {
	f := KeystrokeFloors{}
	for i := range measures {
		f[measures[i].Dataset] = measures[i].Figures()
	}
	return writeJSON(path, "keystroke floors", f)
}

// Check returns a sentence for each figure of k that is worse than its
// floor.
func (f KeystrokeFloors) Check(k *Keystrokes) []string {
	floor, ok := f[k.Dataset]
	if !ok {
		return []string{fmt.Sprintf("%s keystrokes: no floor recorded (run the test with -update)", k.Dataset)}
	}
	got := k.Figures()
	var drops []string
	if got.Places != floor.Places {
		drops = append(drops, fmt.Sprintf("%s keystrokes: %d places typed, the floor is for %d", k.Dataset, got.Places, floor.Places))
	}
	if got.Later > floor.Later {
		drops = append(drops, fmt.Sprintf("%s keystrokes: %d places later than population order, above the floor of %d", k.Dataset, got.Later, floor.Later))
	}
	if got.Later+got.Tied > floor.Later+floor.Tied {
		drops = append(drops, fmt.Sprintf("%s keystrokes: %d places later than population order, tied ones included, above the floor of %d", k.Dataset, got.Later+got.Tied, floor.Later+floor.Tied))
	}
	if got.Mean > floor.Mean {
		drops = append(drops, fmt.Sprintf("%s keystrokes: %.4f letters on average, above the floor of %.4f", k.Dataset, got.Mean, floor.Mean))
	}
	return drops
}
