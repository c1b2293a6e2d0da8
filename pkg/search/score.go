package search

import "math"

// The terms of Score (see docs/ranking.md for how they were chosen).
const (
	// FameNames is how many alternate names count as the population once
	// more: GeoNames lists the names of a place in the languages of the
	// people who speak of it, so how many it has says how well known it is
	// (Firenze has 75, Florence, Alabama 16, Srīkākulam 3; half the places
	// have 2 or fewer). "abu " lists Abu Dhabi (603,000, 45 names kept)
	// before Abū Ghurayb (900,000, 12), which 60 would not. Fewer names
	// per step let fame undo population order among cities of a size
	// more often than it helps: at 40, "sur" listed Surabaya (2.4M, 19
	// names) before Sūrat (2.9M, 7) and "sara" Sarajevo before Saratov.
	FameNames = 50
	// KnownNames is how many alternate names make a place well known
	// enough for a match of one of them, from KnownLetters letters, to
	// count as its name; fewer count as the square of their share
	// ("geneva" lists Genève, 48 names, before Geneva, Illinois; "ulaan"
	// Ulan Bator, known as Ulaanbaatar, before Ulsan as a typo; "glasow"
	// does not list Glazov, 20 names, before Glasgow).
	KnownNames = 40
	// KnownLetters is the shortest query for which a match of an
	// alternate name can count as a name: shorter ones match names by
	// chance ("san" is how Shanghai begins in some language, "sol" is
	// Seoul's name in another; the person means San Diego and Solapur).
	KnownLetters = 5
	// KnownWholeLetters is the shortest alternate name that, matched
	// whole and counted as a name (see KnownLetters), also gets the
	// whole-name bonus (see knownAltName): "geneva" lists Genève before
	// Geneva, Illinois, "cheng" Chengdu before Zhengzhou as "Cheng".
	KnownWholeLetters = 6
	// EditCost is how much less a match counts for each typo corrected:
	// one edit on Chicago (2.7M) outranks a prefix of "Chicacole", an old
	// name of Srīkākulam (118,000), but not a town that bears the typed
	// name.
	EditCost = 30
	// ShortEditCost is EditCost for a correction of five letters or
	// fewer (see editCost).
	ShortEditCost = 100
)

// Score is the ranking score of a city of population pop and names
// alternate names, reached through key by text: the folded query, or for
// a typo match the prefix of the key it was corrected to, with edits
// edits. Higher ranks first. It blends, as factors:
//
//   - population: pop, so that between two cities matched the same way
//     the larger ranks first (a dataset without population scores every
//     city 0, and ties are broken by CompareFound);
//   - the name: a main name counts 1 + names/FameNames (fame: a place
//     known in many languages counts for more than a namesake of its
//     size), an alternate name 1/AltDivisor ("san" lists San Diego, not
//     Shanghai as "Sangaj"), but an alternate name of a well-known place,
//     typed without typos from KnownLetters letters on, counts as a name,
//     fame and all (see KnownNames: "florence" is Firenze);
//   - a whole-name match: WholeBoost of the text's length ("bath" lists
//     Bath before the larger Bathinda, "van" Vancouver before Van);
//   - typos: 1/EditCost per edit (see editCost).
//
// Where the match starts in the name (a later word ranks after the start
// of a name) and a finished word (a trailing space) are not factors but
// tiers, applied before Score by the Service; distance to the person is
// applied after it (see biasScore).
func Score(text string, key NameKey, pop int64, names, edits int) float64 {
	whole := key.Slug == text
	n := 0 // the letters of text, counted once for the terms that look at them
	if key.Alt != 0 || whole || edits > 0 {
		n = letters(text)
	}
	fame := 1 + float64(names)/FameNames
	name := fame
	if key.Alt != 0 {
		// Not fame, unless the name is one the place is known by: the
		// more names a place has, the more it matches by chance.
		name = 1.0 / AltDivisor
		if edits == 0 && n >= KnownLetters {
			known := math.Min(1, float64(names)/KnownNames)
			name = math.Max(name, known*known*fame)
		}
	}
	s := float64(pop) * name
	if whole && !knownAltName(n, key, edits) {
		s *= wholeBoost(n)
	}
	for range edits {
		s /= editCost(n)
	}
	return s
}

// knownAltName reports whether a match of a text of n letters through
// key counts as a name the place is known by but without the whole-name
// bonus: an alternate name of KnownLetters to KnownWholeLetters-1
// letters, typed right. Such a whole name is often one syllable of the
// name ("Cheng" is an old name of Zhengzhou, and "cheng" is how Chengdu,
// twice its size, begins); the bonus on top of counting as a name made
// Zhengzhou first.
func knownAltName(n int, key NameKey, edits int) bool {
	return key.Alt != 0 && edits == 0 && n >= KnownLetters && n < KnownWholeLetters
}

// editCost is what one edit costs a match corrected to a text of n
// letters: EditCost, and more on a text of five letters, the shortest
// typos are looked for in, where an edit is a fifth of what was typed and
// many more names are one edit away ("surak" lists Surakarta before Sūrat
// as a typo).
func editCost(n int) float64 {
	if n <= 5 {
		return ShortEditCost
	}
	return EditCost
}

// WholeBoost is how much more a whole-name match counts than a prefix
// match, by the length of the text: ExactBoost from five letters, less
// below, where a whole name is often a short name matched by chance: at
// three letters it only breaks near ties ("van" lists Vancouver, 1.8M,
// before Van, 372,000; "yao" Yaoundé before Yao), at four three times ("bath"
// lists Bath before Bathinda, three times its size, but "hami" Hamilton,
// 520,000, before Hami, 137,000, and "male" Mālegaon before Malé: four
// times made a four-letter name outweigh a city four times larger).
func WholeBoost(text string) float64 {
	return wholeBoost(letters(text))
}

// wholeBoost is WholeBoost for a text of n letters.
func wholeBoost(n int) float64 {
	switch {
	case n <= 3:
		return 1.5
	case n == 4:
		return 3
	}
	return ExactBoost
}

// scored returns f reached through text with edits typos, scored.
func scored(f *Found, text string, edits int) variantFound {
	return variantFound{Found: f, prefix: text, edits: edits, score: Score(text, f.Key, f.Population, len(f.AltNames), edits)}
}

// compareRanked orders two answers of one query: with ended (the query
// ends in a space: its last word is finished) a key in which the text
// ends a word first ("san " lists San Antonio before Santiago); then
// matches from the start of a name before those from a later word ("york"
// lists York before New York City; typo matches are always from the
// start); then Score, higher first; then fewer edits; then CompareFound's
// order, against each answer's own text, so that the order is total and the same in
// every store.
func compareRanked(a, b *variantFound, ended bool) int {
	if ended {
		if ae, be := endsWord(a.Key.Slug, a.prefix), endsWord(b.Key.Slug, b.prefix); ae != be {
			if ae {
				return -1
			}
			return 1
		}
	}
	if c := compareScored(a, b); c != 0 {
		return c
	}
	return compareFound(a.prefix, a.Found, b.prefix, b.Found)
}

// compareScored is compareRanked for a query that does not end in a
// space, short of its last tie-break: matches from the start of a name
// first, then Score, then fewer edits.
func compareScored(a, b *variantFound) int {
	if aw, bw := a.Key.Word(), b.Key.Word(); aw != bw {
		if bw {
			return -1
		}
		return 1
	}
	switch {
	case a.score > b.score:
		return -1
	case a.score < b.score:
		return 1
	}
	return a.edits - b.edits // of unknown populations, the typed one first
}

// endsWord reports whether key, which starts with text (or with a
// correction of it), has a word boundary right after it.
func endsWord(key, text string) bool {
	return len(key) <= len(text) || key[len(text)] == '-'
}
