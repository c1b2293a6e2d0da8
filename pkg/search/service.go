package search

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/language"
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
	// needs MinQueryLetters letters or digits, as typed in a script other
	// than Latin or once folded. A space at its end says that its last
	// word is finished: names in which that word ends rank first ("san "
	// lists San Antonio before Santiago).
	Text string
	// Limit is how many cities to return at most, 1..MaxLimit: the edges
	// fill in DefaultLimit when the person did not say.
	Limit int
	// Countries, when not empty, keeps only cities of these countries: a
	// comma-separated list of ISO codes or English names, as
	// ParseCountries reads it.
	Countries string
	// Fuzzy adds typo matches when the prefix matches do not fill half
	// the answer and none of them is a place of TypedRightScore (see
	// MaxEdits: one edit at most when something matched as typed),
	// ranked with them by Score.
	Fuzzy bool
	// Near, when not nil, is where the person is: nearby cities rank
	// higher (see DefaultBiasScale), and every hit says how far it is.
	Near *Point
	// BiasScale is how strongly Near pulls, 0..1: the edges fill in
	// DefaultBiasScale when the person did not say.
	BiasScale float64
	// Box, when not nil, keeps only the cities inside it.
	Box *Box
	// Languages, best first, are those to show names in (see
	// ParseLanguages): each hit's name is its local name in the first
	// of them that has one, and its country's name too; none shows the
	// dataset's names.
	Languages []language.Tag
}

// Result is the answer to a Request.
type Result struct {
	// Dataset is the dataset that was searched.
	Dataset Dataset
	// Prefix is the folded query that the cities matched.
	Prefix string
	// Qualifier, when not empty, says that no city matched the whole
	// query and its last words were read as a place: "country:fr" for
	// "paris france", "region:il" for "springfield il", "country:au,at"
	// for "newcastle aus", "region:texas country:us" for "paris, texas,
	// usa"; the readings that found something, separated by spaces, when
	// there are several ("country:ca region:ca" for "london ca"). The hits
	// matched the words before it, within that place. It is empty, and
	// Prefix shorter than the query, when the last words named no place
	// and the words before them were answered instead.
	Qualifier string
	// Hits are the cities found, best first; never nil.
	Hits []Hit
	// Complete reports that Hits hold every city whose names match the
	// whole query as a prefix or at a word start, for this dataset and
	// these filters: fewer than the limit were found, the query was read as
	// it is (no Qualifier, no shorter Prefix, no transliteration), so a
	// client may filter the answer itself while the query's last word
	// grows. Typo matches (Hit.Edits > 0) that fill the answer are not part
	// of it.
	Complete bool
}

// Hit is one city of a Result, with what the query matched in it.
type Hit struct {
	City
	// Label is the line a page shows for the hit, unique within its
	// answer (see Labels); the edges fill it in when they encode an
	// answer, empty until then.
	Label string
	// Match is the span of Name that the query matched, when it matched
	// Name; zero when it matched an alternate name.
	Match Span
	// Matched is the alternate name that the query matched, with the span
	// of it, when it matched one; nil when it matched Name.
	Matched *NameMatch
	// Edits is how many typos were corrected to match: 0 for a prefix
	// match. Each edit divides the match's Score (see EditCost).
	Edits int
	// Corrected is, for a typo match, the folded text the query was
	// corrected to ("zurich" for "zuirch"): what a page can show as
	// "Showing results for zurich".
	Corrected string
	// DistanceKm is how far the city is from Request.Near, when both are
	// known (HasDistance).
	DistanceKm  float64
	HasDistance bool
}

// NameMatch is an alternate name that a query matched.
type NameMatch struct {
	Name string
	Span Span
	// Former says that the place no longer goes by Name ("Bombay" for
	// Mumbai; see LocalName.Former).
	Former bool
}

// setHit makes *h, a zero Hit, the Hit of f, whose key the first n bytes
// of the query matched, with its distance to near when there is one, in
// the languages of loc (see localizer): the match span is of the name
// shown when the query matched it. It writes in place, and only the
// fields it sets: a Hit is a few hundred bytes, in memory just allocated.
func setHit(h *Hit, f *Found, n, edits int, near *Point, loc *localizer) {
	h.City, h.Edits = f.City, edits
	if edits > 0 {
		h.Corrected = f.Key.Slug[:min(n, len(f.Key.Slug))]
	}
	if near != nil && f.HasLocation {
		h.DistanceKm, h.HasDistance = DistanceKm(*near, Point{f.Lat, f.Lon}), true
	}
	slug := f.Key.Slug
	// typed is the part of the key that the query matched, to tell
	// whether it matches a local name shown instead too.
	typed := slug[:min(n, len(slug))]
	if strings.HasPrefix(slug, string(ScriptMark)) { // the mark is no letter of the name
		slug, n = slug[1:], n-1
		h.Corrected = Unmarked(h.Corrected)
	}
	matched := f.KeyName(f.Key)
	if loc != nil {
		h.Name, h.Country = loc.name(&f.City), loc.country(&f.City)
	}
	switch {
	case h.Name == f.Name && f.Key.Alt == 0:
		h.Match = MatchSpanAt(matched, f.Key.Offset, min(n, len(slug)))
	case h.Name != f.Name && f.Key.Offset == 0 && strings.HasPrefix(AltKey(h.Name), typed): // the local name shown matches too
		h.Match = MatchSpanAt(h.Name, 0, min(n, len(slug)))
	default:
		span := MatchSpanAt(matched, f.Key.Offset, min(n, len(slug)))
		h.Matched = &NameMatch{Name: matched, Span: span, Former: formerName(&f.City, matched)}
	}
}

// Service answers the questions people type: it validates and folds a
// Request once, asks the store for the prefix matches, adds typo matches
// when they are wanted and the prefix matches are too few or too weak to
// be what the person meant (see Request.Fuzzy), and fills the match
// spans. It is safe for concurrent use.
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
	return s.FindAppend(ctx, nil, req)
}

// FindAppend is Find that writes the hits where append(dst, hits...)
// would: Result.Hits is the part of the grown slice after dst, and dst's
// elements stay as they were. A caller that answers many requests passes
// a slice of its own with length 0 and keeps res.Hits[:0] for the next
// one, so that Find allocates no memory for the hits (ten Hits are 2.6
// KB, most of what a Find allocates); it must not reuse that memory while
// it still reads the hits, which hold nothing of the old ones. With dst
// nil it is Find.
func (s *Service) FindAppend(ctx context.Context, dst []Hit, req Request) (Result, error) {
	q, err := req.query()
	if err != nil {
		return Result{}, err
	}
	f := newFinder(s.store)
	defer f.release()
	f.ended, f.text, f.loc, f.dst = endsInSpace(req.Text), req.Text, newLocalizer(req.Languages), dst
	res, err := s.findAll(ctx, f, q, req)
	// An answer to fewer words than asked (see orCityPart) holds the
	// matches of those words only.
	res.Complete = res.Complete && res.Prefix == Unmarked(q.Prefix)
	return res, err
}

// findAll answers q, in its own script and, failing that, transliterated.
func (s *Service) findAll(ctx context.Context, f *finder, q Query, req Request) (Result, error) {
	if q.Prefix[0] == ScriptMark {
		res, err := s.find(ctx, f, q, req, false, false)
		if err != nil || len(res.Hits) > 0 {
			preferScript(res.Hits, req.Text, q.Prefix)
			return res, err
		}
		// No name in the query's script: its transliteration may be a
		// name in Latin letters ("москва" is Moskva), when it is as long
		// as a query in Latin letters must be, but its words are syllables
		// of one name ("東京" is dong-jing), not a city and more. Neither
		// answer is complete: a longer text may transliterate to a name,
		// and need not transliterate to a longer text.
		if q.Prefix = q.Prefix[1:]; letters(q.Prefix) < MinQueryLetters {
			res.Complete = false
			return res, nil
		}
		res, err = s.find(ctx, f, q, req, true, false)
		res.Complete = false
		return res, err
	}
	return s.find(ctx, f, q, req, true, true)
}

// find answers q: its prefix matches, else its matches within qualifiers
// when qualified, then its typo matches, and when all of these find
// nothing and cityPart is set, the answer to its words but the last.
func (s *Service) find(ctx context.Context, f *finder, q Query, req Request, qualified, cityPart bool) (Result, error) {
	b := bias{near: req.Near, scale: req.BiasScale}
	f.clipped = false
	found, err := f.ranked(ctx, q, b)
	res := Result{Dataset: q.Dataset, Prefix: Unmarked(q.Prefix)}
	res.Complete = !f.clipped && len(found) < q.Limit
	// Matches at a later word only ("santiago chile" inside "Villa
	// Presidente Frei, Ñuñoa, Santiago, Chile") do not name the city the
	// text starts with: its last words may still name where it is, and
	// the city they qualify comes before them.
	if err == nil && laterWordsOnly(found) && qualified && f.readings < maxQualifiedReadings {
		f.readings++
		var inPlace []variantFound
		var label string
		if inPlace, label, err = f.qualified(ctx, q, b); err == nil && len(inPlace) > 0 {
			found, res.Qualifier = inPlace, label
			res.Complete = false
		}
	}
	if err != nil {
		return Result{}, err
	}
	// A last word of a letter or two that is no place yet is being typed:
	// the words before it say more than typos of the whole would.
	head, headOK := withoutLastWord(q.Prefix)
	headOK = headOK && cityPart
	if len(found) == 0 && headOK && letters(q.Prefix[len(head):]) <= 2 {
		q.Prefix, f.text = head, head
		return s.find(ctx, f, q, req, true, true)
	}
	// Typos are looked for in the whole query: not once its last words
	// were read as a place. A query whose prefix matches fill half the
	// answer, or include a place of some size, was most likely typed
	// right (see typoWant), and the typo walk costs more than the prefix
	// search: it is left out.
	if want, above := typoWant(found, q.Limit); req.Fuzzy && want > 0 && res.Qualifier == "" && f.walkable(q.Prefix) {
		if edits := typoBudget(f.text, found); edits > 0 { // of what was typed, not of its folding
			f.walks++
			tq := q
			// Above prefix matches, a place of no known population scores
			// 0 and is never kept, unless a location bias lifts it.
			tq.Populated = above && !b.moves()
			typos, err := s.typos(ctx, tq, edits, want)
			if err != nil {
				return Result{}, err
			}
			found = f.withTypos(found, typos, q, edits, b, above)
		}
	}
	res.Hits = f.newHits(len(found)) // their keys and names read ahead already (see fetch and withTypos)
	for i := range found {
		setHit(&res.Hits[i], found[i].Found, len(found[i].prefix), found[i].edits, req.Near, f.loc)
	}
	return s.orCityPart(ctx, f, q, req, res, headOK, head)
}

// newHits returns n zero Hits for setHit to write: after f.dst, in its
// memory while it has room (see Service.FindAppend), or in memory of
// their own when there is no f.dst. An answer that finds nothing and
// gives way to another (see orCityPart) leaves f.dst to the next.
func (f *finder) newHits(n int) []Hit {
	if f.dst == nil {
		return make([]Hit, n)
	}
	start := len(f.dst)
	grown := slices.Grow(f.dst, n)[:start+n]
	clear(grown[start:]) // setHit writes only the fields it sets
	return grown[start:]
}

// first returns the first byte of s, or 0. Before a loop over the matches
// of a store that reads their keys and names one after the other (to
// score, compare or highlight them), a loop of first over the same
// strings reads them all at once: the embedded store maps its snapshot,
// where they are mostly in no cache yet, and reads issued together
// overlap where each match's would wait on the last.
func first(s string) byte {
	if s == "" {
		return 0
	}
	return s[0]
}

// laterWordsOnly reports whether every match found (none included) is at
// a later word of its name rather than at its start.
func laterWordsOnly(found []variantFound) bool {
	for i := range found {
		if !found[i].Key.Word() {
			return false
		}
	}
	return true
}

// orCityPart returns res, or when it found nothing and fallback is set,
// the answer to head, the query without its last word: while the start
// of a query names a city, the list never empties because of the words a
// person goes on to type ("paris atlantis" lists Paris).
func (s *Service) orCityPart(ctx context.Context, f *finder, q Query, req Request, res Result, fallback bool, head string) (Result, error) {
	if len(res.Hits) > 0 || !fallback {
		return res, nil
	}
	q.Prefix, f.text = head, head
	return s.find(ctx, f, q, req, true, true)
}

// Bounds on the work of one Find, whatever its length (issue 22): without
// them a query of MaxQueryRunes that names nothing costs a typo walk and a
// reading of qualifiers for every word that is dropped from its end (see
// orCityPart), 20-200 ms on the full-size large dataset, where a query
// that people type costs well under one. With them every query costs at
// most maxTypoWalks typo lookups (see Service.typos) of at most
// MaxTypoBytes and maxQualifiedReadings readings, besides its prefix
// searches (a few per word).
const (
	// MaxTypoBytes is the longest folded query that typos are looked for
	// in: 0.1% of the names of GeoNames' cities1000 are longer, and the
	// walk of a longer query costs more than all else a Find does.
	MaxTypoBytes = 32
	// maxTypoWalks is how many typo lookups one Find makes at most: the
	// whole query's and that of the words before its last ("chigaco
	// illinois", then "chigaco").
	maxTypoWalks = 2
	// maxQualifiedReadings is how many times one Find reads the last
	// words of a query as a place: the whole query's, and once more
	// without its last word ("paris texas usa atl" is Paris, Texas).
	maxQualifiedReadings = 2
)

// typoFreeMatches is how many prefix matches an answer of limit needs for
// no typo matches to be looked for: half of it. A correctly typed prefix
// with that many matches ("lauderhill", six) is what the person meant;
// padding it with typos changes no judged case (docs/ranking.md: with 4
// or 5 for a limit of 10 every figure stays, with 3 "bogata" loses
// Bogotá) and costs a typo walk, the most a Find does.
func typoFreeMatches(limit int) int {
	return (limit + 1) / 2
}

// walkable reports whether a typo walk for prefix is within the bounds
// of the Find: short enough, and walks left.
func (f *finder) walkable(prefix string) bool {
	return len(prefix) <= MaxTypoBytes && f.walks < maxTypoWalks
}

// withoutLastWord returns the folded query without its last word, when what
// remains has MinQueryLetters letters.
func withoutLastWord(prefix string) (string, bool) {
	i := strings.LastIndexByte(prefix, '-')
	if i < 0 || letters(prefix[:i]) < MinQueryLetters {
		return "", false
	}
	return prefix[:i], true
}

// withTypos ranks typo matches among the prefix matches found: by Score,
// and by the location bias b when it has a point (see ranked), each city
// once, the best q.Limit; with above, only the typo matches that score
// above the prefix match in the last place of the answer's first half
// and within TypoReach of the best one (see typoWant). A typo match whose
// whole key is within maxEdits of the query counts as the whole-name
// match it is, when that scores higher (see wholeTypo).
func (f *finder) withTypos(found []variantFound, typos []Typo, q Query, maxEdits int, b bias, above bool) []variantFound {
	// In the finder's memory, after the matches of every fetch, as fetch
	// appends its own (found may be some of them: they stay as they are).
	start := len(f.matches)
	f.matches = append(f.matches, found...)
	var ahead byte
	for i := range typos {
		ahead |= first(typos[i].Key.Slug) | first(typos[i].Name)
	}
	f.ahead = ahead
	for i := range typos {
		t := &typos[i]
		if listedFound(f.matches[start:], &t.City) { // also a prefix match through another name
			continue
		}
		best := f.scored(&t.Found, t.Corrected, t.Edits)
		if edits, ok := wholeTypo(q.Prefix, t.Key.Slug, maxEdits); ok && t.Key.Slug != t.Corrected {
			if whole := f.scored(&t.Found, t.Key.Slug, edits); whole.score > best.score {
				best = whole
			}
		}
		f.matches = append(f.matches, best)
	}
	all := f.matches[start:len(f.matches):len(f.matches)]
	f.sort(all, b)
	if above {
		// The score of the prefix match in the last place of the answer's
		// first half (biased as the sort left it), or TypoReach below the
		// best prefix match if that is higher: a typo match must score
		// above it.
		floor, keep, best := 0.0, typoFreeMatches(q.Limit), 0.0
		for i := 0; i < len(all) && keep > 0; i++ {
			if all[i].edits == 0 {
				best = max(best, all[i].score)
				floor, keep = all[i].score, keep-1
			}
		}
		floor = max(floor, best/TypoReach)
		all = slices.DeleteFunc(all, func(v variantFound) bool { return v.edits > 0 && v.score <= floor })
	}
	return all[:min(len(all), q.Limit)]
}

// endsInSpace reports whether a query as typed ends in a space after some
// text: its last word is finished.
func endsInSpace(text string) bool {
	trimmed := strings.TrimRightFunc(text, unicode.IsSpace)
	return trimmed != text && strings.TrimSpace(trimmed) != ""
}

// listedFound reports whether c is one of found, or looks the same to a
// person: the same name, subcountry and country (MaxMind lists Tokyo under
// five region codes that no one can tell apart).
func listedFound(found []variantFound, c *City) bool {
	for i := range found {
		if sameLine(&found[i].City, c) {
			return true
		}
	}
	return false
}

// sameLine reports whether a and b are one place, or would read the same
// in a list of suggestions.
func sameLine(a, b *City) bool {
	// The same name or the same Key, field by field: both share the
	// subcountry and the country. Of the pairs a Find compares, most
	// differ in the length of both the name and the slug; of the others,
	// the country and subcountry are compared first: a store hands them
	// out from a table (equal strings share their bytes, and compare in
	// one step), where a name's bytes are often not in the cache yet.
	if len(a.Name) != len(b.Name) && len(a.Slug) != len(b.Slug) {
		return false // most pairs, told apart without a call or a read
	}
	return a.Country == b.Country && a.Subcountry == b.Subcountry &&
		(a.Name == b.Name || a.Slug == b.Slug && a.CountryCode == b.CountryCode && a.Region == b.Region)
}

// variantFound is a city found through one variant of a query, or
// through a correction of its typos, with its Score.
type variantFound struct {
	*Found
	prefix string  // the variant, or the correction, that found it
	edits  int     // typos corrected to reach it
	score  float64 // Score of the match
}

// finder is the work of one Find: the store's answers, appended to memory
// that finders reuse (see Store.Search), so that a lookup allocates little.
type finder struct {
	store Store
	found []Found
	// matches holds the matches of every fetch, scored, appended to as
	// found is (see fetch).
	matches []variantFound
	// dst is the caller's memory for the hits (see Service.FindAppend).
	dst   []Hit
	ended bool   // the query ends in a space (see compareRanked)
	text  string // the text typed that the query being answered stands for (see typoBudget)
	loc   *localizer

	// clipped is set when a store answered as many prefix matches as it
	// was asked for, so that it may have more (see Result.Complete).
	clipped bool
	// walks and readings count the typo walks and the readings of
	// qualifiers made (see maxTypoWalks).
	walks, readings int
	// startsOnly is set while the matches at later words could not
	// reach the answer, so that fetch does not ask for them (see ranked).
	startsOnly bool
	// ahead keeps the bytes read ahead (see first), so that the reads
	// stay.
	ahead byte
}

var finders = sync.Pool{New: func() any {
	return &finder{found: make([]Found, 0, 64), matches: make([]variantFound, 0, 64)}
}}

func newFinder(store Store) *finder {
	f := finders.Get().(*finder)
	f.store = store
	return f
}

// release returns f to the pool; nothing may use what it found after.
func (f *finder) release() {
	if cap(f.found) > 4*MaxLimit || cap(f.matches) > 4*MaxLimit {
		return // a rare huge answer: let it go
	}
	clear(f.found) // no strings of an old snapshot kept alive
	clear(f.matches)
	f.found, f.matches, f.store, f.dst, f.ended, f.text, f.loc = f.found[:0], f.matches[:0], nil, nil, false, "", nil
	f.walks, f.readings = 0, 0
	finders.Put(f)
}

// search asks the store, appending to the finder's memory. The answer
// stays valid until release: a slice that grows leaves the array that
// earlier answers point into as it was.
func (f *finder) search(ctx context.Context, q Query) ([]Found, error) {
	start := len(f.found)
	grown, err := f.store.Search(ctx, f.found, q)
	if err != nil {
		return nil, err
	}
	f.found = grown
	return grown[start:len(grown):len(grown)], nil
}

// bias is where the person is and how much it counts (see Request.Near).
type bias struct {
	near  *Point
	scale float64
}

// moves reports whether b changes scores: whether it has a point and a
// scale.
func (b bias) moves() bool { return b.near != nil && b.scale != 0 }

// ranked returns the best q.Limit prefix matches of q (see prefixMatches),
// by the location bias b when it has a point: then the best of the whole
// world and the best near the point, MaxLimit each, are scored (see
// biasScore) and the best q.Limit of them kept.
func (f *finder) ranked(ctx context.Context, q Query, b bias) ([]variantFound, error) {
	if !b.moves() {
		return f.prefixMatches(ctx, q)
	}
	wide := q
	wide.Limit = MaxLimit
	found, err := f.prefixMatches(ctx, wide)
	if err != nil {
		return nil, err
	}
	if box, ok := intersect(q.Box, nearBox(*b.near, nearbyKm)); ok {
		wide.Box = box
		// A match at a later word ranks after every match from the
		// start of a name (see compareRanked): once the best of the
		// world hold q.Limit of those, no later word near the point can
		// reach the answer, and the store need not look for them (on a
		// heavy prefix, a scan of its whole range of words).
		f.startsOnly = startsFill(found, q.Limit, f.ended)
		local, err := f.prefixMatches(ctx, wide)
		f.startsOnly = false
		if err != nil {
			return nil, err
		}
		found = withLocal(found, local, box)
	}
	return f.best(found, b, q.Limit), nil
}

// withLocal appends to world, the best matches of the whole world, those
// of local, the best within box, that world does not hold: each city
// once. Each list holds a city once already (see fetch), and a store
// holds one city per Key: a city of both lies in box, as every local
// match does, and only world's matches in box are compared.
func withLocal(world, local []variantFound, box *Box) []variantFound {
	var at [MaxLimit]int
	inBox := at[:0] // world's matches in box
	for i := range world {
		if c := &world[i]; c.HasLocation && box.Contains(c.Lat, c.Lon) {
			inBox = append(inBox, i)
		}
	}
	for i := range local {
		c := &local[i]
		if !slices.ContainsFunc(inBox, func(j int) bool { return world[j].City.Key() == c.City.Key() }) {
			world = append(world, *c)
		}
	}
	return world
}

// best returns the first limit of found as sort would order them, in
// found's memory (the order of the others is lost): a selection that
// keeps the best limit seen so far, in order, and turns most others away
// with one comparison, where ranked's 200 candidates for an answer of 10
// took a stable sort of them all.
func (f *finder) best(found []variantFound, b bias, limit int) []variantFound {
	f.bias(found, b)
	// Ties keep found's order, as the stable sort does: a candidate goes
	// after those it does not beat, and all that it ties with came first.
	var at [MaxLimit]int
	top := at[:0]
	for i := range found {
		c := &found[i]
		if len(top) == limit && compareRanked(c, &found[top[limit-1]], f.ended) >= 0 {
			continue
		}
		j := len(top)
		if j < limit {
			top = top[:j+1]
		} else {
			j-- // the worst makes room
		}
		for ; j > 0 && compareRanked(c, &found[top[j-1]], f.ended) < 0; j-- {
			top[j] = top[j-1]
		}
		top[j] = i
	}
	var kept [MaxLimit]variantFound
	for j, i := range top {
		kept[j] = found[i]
	}
	return found[:copy(found, kept[:len(top)])]
}

// startsFill reports whether found holds limit matches that rank before
// any match at a later word of a name, whatever its score (see
// compareRanked): matches from the start of a name that, when the query
// ends in a space (ended), end a word where it does.
func startsFill(found []variantFound, limit int, ended bool) bool {
	n := 0
	for i := range found {
		if c := &found[i]; !c.Key.Word() && (!ended || endsWord(c.Key.Slug, c.prefix)) {
			n++
		}
	}
	return n >= limit
}

// sort orders found best first: by compareRanked, with each Score
// replaced by its biased score (see biasScore) when b has a point.
func (f *finder) sort(found []variantFound, b bias) {
	f.bias(found, b)
	slices.SortStableFunc(found, func(x, y variantFound) int { return compareRanked(&x, &y, f.ended) })
}

// bias replaces the Score of each of found by its biased score (see
// biasScore) when b has a point.
func (f *finder) bias(found []variantFound, b bias) {
	if !b.moves() {
		return
	}
	for i := range found {
		c := &found[i]
		d := math.MaxFloat32 // no location: as far as can be
		if c.HasLocation {
			d = DistanceKm(*b.near, Point{c.Lat, c.Lon})
		}
		c.score = biasScore(Score(c.prefix, f.loc.scoreKey(&c.City, c.Key), c.Population, len(c.AltNames), c.edits), d, b.scale)
	}
}

// merged returns the best limit cities of lists, each ranked already (see
// ranked), in the order ranked would give them together, each once.
func (f *finder) merged(lists [][]variantFound, limit int, b bias) []variantFound {
	if len(lists) == 1 {
		return lists[0]
	}
	all := slices.Concat(lists...)
	f.sort(all, b)
	kept := all[:0]
	for _, c := range all {
		if len(kept) == limit {
			break
		}
		if !slices.ContainsFunc(kept, func(k variantFound) bool { return sameLine(&k.City, &c.City) }) {
			kept = append(kept, c)
		}
	}
	return kept
}

// maxQualifierWords bounds the words read as a place: "san jose costa
// rica" needs two, "new south wales australia" four.
const maxQualifierWords = 4

// qualified reads the last words of a query that matched nothing as a
// place, and returns the matches of the words before them within it (see
// readings): a country by its code or name, whole or begun ("paris fr",
// "paris france", "newcastle austr", "san jose costa rica"), a first-level
// division by its code or name, whole or begun ("springfield il",
// "paris tex", "new south w", "washington dc"), or a division and its
// country ("paris, texas, usa"), the fewest words first. The matches of
// every reading of the same words are ranked together. It returns the
// readings that found something, as Result.Qualifier says them, or
// nothing.
func (f *finder) qualified(ctx context.Context, q Query, b bias) ([]variantFound, string, error) {
	words := strings.Split(q.Prefix, "-")
	for k := 1; k <= maxQualifierWords && k < len(words); k++ {
		hq := q
		hq.Prefix = strings.Join(words[:len(words)-k], "-")
		if letters(hq.Prefix) < MinQueryLetters {
			break
		}
		tail := words[len(words)-k:]
		if letters(strings.Join(tail, "")) < 2 {
			continue // a letter being typed, not a place yet
		}
		known, err := f.search(ctx, Query{Dataset: q.Dataset, Prefix: hq.Prefix, Limit: MaxLimit, Countries: q.Countries, Box: q.Box, Words: true})
		if err != nil {
			return nil, "", err
		}
		if len(known) == 0 && len(Variants(hq.Prefix)) == 1 {
			continue // no city to find within any place
		}
		var lists [][]variantFound
		var labels []string
		for _, r := range readings(tail, known) {
			rq, ok := within(hq, r.countries)
			if !ok {
				continue
			}
			rq.Regions = r.regions
			found, err := f.ranked(ctx, rq, b)
			if err != nil {
				return nil, "", err
			}
			if len(found) > 0 {
				lists, labels = append(lists, found), append(labels, r.label)
			}
		}
		if len(lists) > 0 {
			return f.merged(lists, q.Limit, b), strings.Join(labels, " "), nil
		}
	}
	return nil, "", nil
}

// within restricts q to countries as well as its own; ok is false when
// the two share none. No countries leaves q as it is.
func within(q Query, countries []string) (Query, bool) {
	if len(countries) == 0 {
		return q, true
	}
	if len(q.Countries) == 0 {
		q.Countries = countries
		return q, true
	}
	var both []string
	for _, c := range countries {
		if slices.Contains(q.Countries, c) {
			both = append(both, c)
		}
	}
	q.Countries = both
	return q, len(both) > 0
}

// prefixMatches returns the best q.Limit cities with a key that starts
// with q.Prefix or with one of its variants (see Variants), each once, in
// the order of compareRanked: one store search per variant, merged. Keys
// of later words match too (Query.Words).
func (f *finder) prefixMatches(ctx context.Context, q Query) ([]variantFound, error) {
	// Some matches may read the same as a better one (see listedFound),
	// and the stores rank by Weight, not Score: ask for more than wanted
	// (see candidates), and for more again if that was not enough.
	for fetch := candidates(q.Limit); ; fetch = min(MaxLimit, 4*fetch) {
		kept, full, err := f.fetch(ctx, q, fetch)
		if err != nil || len(kept) == q.Limit || !full || fetch == MaxLimit {
			f.clipped = f.clipped || full
			return kept, err
		}
	}
}

// candidates is how many matches to ask a store for, for an answer of
// limit: stores rank by Weight, and Score may promote a city that Weight
// ranks a little lower (an exonym such as "florence" is Firenze, fifth by
// Weight), so they are asked for more than the answer keeps. Half as many
// again is what every judged case needs (see docs/ranking.md), and what
// the answer needed already to make up for matches that read the same.
func candidates(limit int) int {
	return min(MaxLimit, limit+limit/2+2)
}

// fetch asks the store for fetch matches of each variant of q, merges them
// and keeps the best q.Limit that read differently; full reports whether
// some variant had fetch matches, so that asking for more could find more.
func (f *finder) fetch(ctx context.Context, q Query, fetch int) (kept []variantFound, full bool, err error) {
	variants := []string{q.Prefix} // on the stack: most queries have no other
	if abbreviates(q.Prefix) {
		variants = Variants(q.Prefix)
	}
	start := len(f.matches)
	for _, v := range variants {
		// After a space, the names in which the word ends come first:
		// ask for them on their own too, so that longer single words
		// that outweigh them do not crowd them out of the store's answer.
		searches := []string{v}
		if f.ended {
			searches = append(searches, v+"-")
		}
		for _, p := range searches {
			vq := q
			vq.Prefix, vq.Words, vq.Limit = p, !f.startsOnly, fetch
			if len(variants) == 1 && !f.ended {
				// One search, whose later words come after every start
				// of a name below: the store may leave them out once the
				// starts hold the answer (see Query.Lines). Not with other
				// searches, whose matches could join two groups into one,
				// nor after a space, where a later word may come first.
				vq.Lines = q.Limit
			}
			found, err := f.search(ctx, vq)
			if err != nil {
				return nil, false, err
			}
			full = full || len(found) == fetch
			for i := range found {
				f.matches = append(f.matches, f.scored(&found[i], v, 0))
			}
		}
	}
	// Later fetches append after these, as search does after its answers.
	out := f.matches[start:len(f.matches):len(f.matches)]
	// The keys and names, which the dedup below compares and setHit
	// reads, read ahead together (see first).
	var ahead byte
	for i := range out {
		ahead |= first(out[i].Key.Slug) | first(out[i].Name)
	}
	f.ahead = ahead
	if len(variants) == 1 && !f.ended {
		// One search: the store's order is CompareFound's for the text
		// scored (see Store.Search), which is how compareRanked breaks
		// ties; a stable sort that stops at the Score keeps it, without
		// comparing keys and names for every tie (most matches of a rare
		// prefix are places of unknown population, all of Score 0).
		slices.SortStableFunc(out, func(a, b variantFound) int { return compareScored(&a, &b) })
	} else {
		slices.SortStableFunc(out, func(a, b variantFound) int { return compareRanked(&a, &b, f.ended) })
	}
	kept = out[:0]
	for i := range out {
		if len(kept) == q.Limit {
			break
		}
		dup := false
		for j := range kept {
			if dup = sameLine(&kept[j].City, &out[i].City); dup {
				break
			}
		}
		if !dup {
			kept = append(kept, out[i])
		}
	}
	return kept, full, nil
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
	// Letters count as typed or once folded, whichever are more (see
	// queryLetters): "القا" is four letters though it folds to "lq", "東京"
	// (two characters) folds to "dong-jing", "a-b" is two letters.
	var folded [2 * MaxQueryRunes]byte // most queries fold in place
	if b := AppendSlug(folded[:0], text); string(b) == text {
		q.Prefix = text // typed folded already: no copy
	} else {
		q.Prefix = string(b)
	}
	if queryLetters(text, q.Prefix) < MinQueryLetters {
		return q, invalid("q", "Enter at least %d letters", MinQueryLetters)
	}
	if OtherScript(text) { // names in its script first (see AltKey)
		q.Prefix = string(ScriptMark) + q.Prefix
	}
	if q.Limit < 1 || q.Limit > MaxLimit {
		return q, invalid("limit", "Invalid limit %d: use a whole number from 1 to %d", q.Limit, MaxLimit)
	}
	if list := req.Countries; list != "" {
		codes, err := parseCountryList(list)
		if err != nil {
			return q, err
		}
		q.Countries = codes
	}
	if p := req.Near; p != nil && !p.valid() {
		return q, invalid("near", "Invalid location: latitude from -90 to 90 and longitude from -180 to 180")
	}
	if req.BiasScale < 0 || req.BiasScale > 1 || math.IsNaN(req.BiasScale) {
		return q, invalid("bias_scale", "Invalid bias scale: use a number from 0 to 1")
	}
	if b := req.Box; b != nil {
		if !b.valid() {
			return q, invalid("bbox", "Invalid bbox: use minLon,minLat,maxLon,maxLat with minLon ≤ maxLon and minLat ≤ maxLat")
		}
		q.Box = b
	}
	return q, nil
}

// parseCountryList checks and reads a request's list of countries (see
// Request.Countries).
func parseCountryList(list string) ([]string, error) {
	if !utf8.ValidString(list) || len(list) > maxCountryBytes {
		return nil, invalid("country", "Invalid country list")
	}
	return ParseCountries(list)
}

// letters counts the letters and digits of a folded text.
func letters(slug string) int {
	n := len(slug)
	for i := range len(slug) { // a loop: strings.Count's call costs more on a few bytes
		if slug[i] == '-' {
			n--
		}
	}
	return n
}
