package search

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits on the text of a Request.
const (
	// MinQueryLetters is how many letters or digits a query needs before
	// it is worth answering: fewer match too many cities to be useful.
	MinQueryLetters = 3
	// MaxQueryRunes bounds a query; no city name comes close.
	MaxQueryRunes = 100
	// maxCountryBytes bounds a country list: a few dozen names at most.
	maxCountryBytes = 1000
)

// Request is one question as a person asked it, before any checking.
type Request struct {
	// Dataset is the dataset to search; "" means Small.
	Dataset Dataset
	// Text is the query as typed: it is trimmed, checked and folded; it
	// needs MinQueryLetters letters or digits once folded.
	Text string
	// Limit is how many cities to return at most, 1..MaxLimit: the edges
	// fill in DefaultLimit when the person did not say.
	Limit int
	// Countries, when not empty, keeps only cities of these countries: a
	// comma-separated list of ISO codes or English names, as
	// ParseCountries reads it.
	Countries string
	// Fuzzy adds typo matches after the prefix matches (see MaxEdits).
	Fuzzy bool
}

// Result is the answer to a Request.
type Result struct {
	// Dataset is the dataset that was searched.
	Dataset Dataset
	// Prefix is the folded query that the cities matched.
	Prefix string
	// Hits are the cities found, best first; never nil.
	Hits []Hit
}

// Hit is one city of a Result, with what the query matched in it.
type Hit struct {
	City
	// Match is the span of Name that the query matched, when it matched
	// Name; zero when it matched an alternate name.
	Match Span
	// Matched is the alternate name that the query matched, with the span
	// of it, when it matched one; nil when it matched Name.
	Matched *NameMatch
	// Edits is how many typos were corrected to match: 0 for a prefix
	// match, which always ranks before typo matches.
	Edits int
	// Corrected is, for a typo match, the folded text the query was
	// corrected to ("zurich" for "zuirch"): what a page can show as
	// "Showing results for zurich".
	Corrected string
}

// NameMatch is an alternate name that a query matched.
type NameMatch struct {
	Name string
	Span Span
}

// hit returns the Hit of f, whose key the first n bytes of the query
// matched.
func hit(f *Found, n, edits int) Hit {
	h := Hit{City: f.City, Edits: edits}
	if edits > 0 {
		h.Corrected = f.Key.Slug[:min(n, len(f.Key.Slug))]
	}
	span := MatchSpan(f.KeyName(f.Key), min(n, len(f.Key.Slug)))
	if f.Key.Alt == 0 {
		h.Match = span
	} else {
		h.Matched = &NameMatch{Name: f.KeyName(f.Key), Span: span}
	}
	return h
}

// Service answers the questions people type: it validates and folds a
// Request once, asks the store for the prefix matches, adds typo matches
// when they are wanted and the prefix matches do not fill the answer, and
// fills the match spans. It is safe for concurrent use.
type Service struct {
	store Store
}

// NewService returns a Service over store. It panics if store is nil.
func NewService(store Store) *Service {
	if store == nil {
		panic("search.NewService: nil store")
	}
	return &Service{store: store}
}

// Find answers req. Errors: ErrInvalidQuery (an *InvalidError, whose
// Message can be shown to the person who asked) for a request that cannot
// be answered as given, ErrUnknownDataset for an unknown dataset name, and
// the store's errors (see Store.Search).
func (s *Service) Find(ctx context.Context, req Request) (Result, error) {
	q, err := req.query()
	if err != nil {
		return Result{}, err
	}
	res := Result{Dataset: q.Dataset, Prefix: q.Prefix}
	found, err := s.prefixMatches(ctx, q)
	if err != nil {
		return Result{}, err
	}
	res.Hits = make([]Hit, 0, q.Limit)
	for i := range found {
		res.Hits = append(res.Hits, hit(&found[i].Found, len(found[i].prefix), 0))
	}
	if !req.Fuzzy || MaxEdits(q.Prefix) == 0 || len(res.Hits) >= q.Limit {
		return res, nil
	}
	typos, err := s.typos(ctx, q, q.Limit-len(res.Hits))
	if err != nil {
		return Result{}, err
	}
	for i := range typos {
		if len(res.Hits) == q.Limit {
			break
		}
		if !listed(res.Hits, &typos[i].City) { // also a prefix match through another name
			res.Hits = append(res.Hits, hit(&typos[i].Found, len(typos[i].Corrected), typos[i].Edits))
		}
	}
	return res, nil
}

// listed reports whether c is one of hits.
func listed(hits []Hit, c *City) bool {
	k := c.Key()
	for i := range hits {
		if hits[i].City.Key() == k {
			return true
		}
	}
	return false
}

// variantFound is a city found through one variant of a query.
type variantFound struct {
	Found
	prefix string // the variant that found it
}

// prefixMatches returns the best q.Limit cities with a key that starts
// with q.Prefix or with one of its variants (see Variants), each once, in
// rank order: one store search per variant, merged.
func (s *Service) prefixMatches(ctx context.Context, q Query) ([]variantFound, error) {
	var out []variantFound
	for _, v := range Variants(q.Prefix) {
		vq := q
		vq.Prefix = v
		found, err := s.store.Search(ctx, vq)
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			out = append(out, variantFound{Found: f, prefix: v})
		}
	}
	slices.SortStableFunc(out, func(a, b variantFound) int { return compareFound(a.prefix, &a.Found, b.prefix, &b.Found) })
	seen := make(map[Key]bool, len(out))
	kept := out[:0]
	for _, f := range out {
		if k := f.City.Key(); !seen[k] {
			seen[k] = true
			kept = append(kept, f)
		}
	}
	return kept[:min(len(kept), q.Limit)], nil
}

// Stats describes dataset d (see Store.Stats).
func (s *Service) Stats(ctx context.Context, d Dataset) (DatasetStats, error) {
	if _, err := ParseDataset(string(d)); err != nil {
		return DatasetStats{}, err
	}
	return s.store.Stats(ctx, d)
}

// query checks req and turns it into a store query, folding the text.
func (req Request) query() (Query, error) {
	q := Query{Dataset: req.Dataset, Limit: req.Limit}
	if q.Dataset == "" {
		q.Dataset = Small
	}
	if _, err := ParseDataset(string(q.Dataset)); err != nil {
		return q, err
	}
	text := req.Text
	if !utf8.ValidString(text) {
		return q, invalid("q", "Query is not valid UTF-8")
	}
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) > MaxQueryRunes {
		return q, invalid("q", "Query is too long: use at most %d characters", MaxQueryRunes)
	}
	// Letters count once folded: "東京" (two characters) folds to
	// "dong-jing", "a-b" to two letters.
	q.Prefix = Slug(text)
	if letters(q.Prefix) < MinQueryLetters {
		return q, invalid("q", "Enter at least %d letters", MinQueryLetters)
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return q, invalid("limit", "Invalid limit %d: use a whole number from 1 to %d", q.Limit, MaxLimit)
	}
	if list := req.Countries; list != "" {
		if !utf8.ValidString(list) || len(list) > maxCountryBytes {
			return q, invalid("country", "Invalid country list")
		}
		codes, err := ParseCountries(list)
		if err != nil {
			return q, err
		}
		q.Countries = codes
	}
	return q, nil
}

// letters counts the letters and digits of a folded text.
func letters(slug string) int {
	return len(slug) - strings.Count(slug, "-")
}
