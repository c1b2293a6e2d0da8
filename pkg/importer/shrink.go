package importer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// ErrShrink means an import was refused because it would shrink its
// dataset sharply; the error is a *ShrinkError that says by how much.
var ErrShrink = errors.New("import would shrink the dataset")

// The limits beyond which an import shrinks a dataset sharply: a file cut
// short, or one that a stray quote or a wrong format turned mostly into
// rejected rows, would otherwise replace a good dataset without a word.
const (
	// MinKept is the smallest share of the current dataset's cities that an
	// import may leave.
	MinKept = 0.5
	// MaxRejected is the largest share of a file's rows that may be rejected.
	MaxRejected = 0.01
)

// ShrinkError is an import refused because it would shrink a dataset
// sharply: the new content has fewer than MinKept of the current one's
// cities, or more than MaxRejected of the file's rows were rejected. The
// second rule holds for a dataset with no cities yet too: its first import
// is no likelier to be the right file. It matches ErrShrink.
type ShrinkError struct {
	Dataset search.Dataset
	// Current is how many cities the dataset holds, New how many the
	// import would leave.
	Current, New int
	// Rows is how many rows the file has, Rejected how many were malformed.
	Rows, Rejected int
}

// Error reads like "refused to replace the 33886 cities of small with 2:
// fewer than half, and 1 of the 3 rows were rejected (33.3%, more than 1%);
// small keeps its 33886 cities"; for a dataset with no cities yet, like
// "refused to import 2 cities into small: 1 of the 3 rows were rejected
// (33.3%, more than 1%); small stays empty".
func (e *ShrinkError) Error() string {
	var why []string
	if e.tooFew() {
		why = append(why, "fewer than half")
	}
	if e.tooManyRejected() {
		why = append(why, fmt.Sprintf("%d of the %d rows were rejected (%.1f%%, more than %g%%)",
			e.Rejected, e.Rows, 100*float64(e.Rejected)/float64(e.Rows), 100*MaxRejected))
	}
	if e.Current == 0 {
		return fmt.Sprintf("refused to import %d cities into %s: %s; %s stays empty",
			e.New, e.Dataset, strings.Join(why, ", and "), e.Dataset)
	}
	return fmt.Sprintf("refused to replace the %d cities of %s with %d: %s; %s keeps its %d cities",
		e.Current, e.Dataset, e.New, strings.Join(why, ", and "), e.Dataset, e.Current)
}

// Is makes the error match ErrShrink.
func (e *ShrinkError) Is(target error) bool { return target == ErrShrink }

func (e *ShrinkError) tooFew() bool { return float64(e.New) < MinKept*float64(e.Current) }

func (e *ShrinkError) tooManyRejected() bool {
	return e.Rows > 0 && float64(e.Rejected) > MaxRejected*float64(e.Rows)
}

// checkShrink is the search.LoadOptions.Check of an import that may not
// shrink its dataset: prev is the dataset now, next what the load would
// leave, read what the reader saw.
func checkShrink(d search.Dataset, prev search.DatasetStats, next search.LoadStats, read ReadStats) error {
	e := &ShrinkError{Dataset: d, Current: prev.Cities, New: next.Stored, Rows: read.Rows, Rejected: read.Rejected}
	if e.tooFew() || e.tooManyRejected() {
		return e
	}
	return nil
}
