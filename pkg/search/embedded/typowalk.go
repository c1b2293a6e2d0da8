package embedded

import (
	"math"
	"math/bits"
	"slices"
	"sort"
	"sync"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// typoWalk finds the trie nodes that search.WalkTypos returns for a query:
// its corrections. It reaches the same nodes WalkTypos visits and decides
// about each one as WalkTypos does, with three differences in how.
//
// Rows as bit sets. WalkTypos keeps, for each node, the optimal string
// alignment distances between the node's path and every prefix of the
// query (a row of the dynamic programme), and goes below a node only while
// some distance is within the budget e. Only whether each distance is
// within 0, 1, … e matters, so the walk keeps a row as e+1 bit sets
// instead: bit j of set k says that the distance to the query's first j
// bytes is at most k. A child's sets follow from its parent's and
// grandparent's with a few shifts and masks (the bit-parallel automaton of
// Wu and Manber, with Hyyrö's step for transpositions).
//
// Spent nodes. Most nodes the walk reaches have spent their budget: no
// distance in their row is below e. Below such a node an alignment can
// only go on matching the query byte for byte, so the walk keeps just the
// set of positions it has reached and follows the children whose bytes the
// query has next: one shift and mask per child, and the node's word (its
// children as a bit set) tells without reading them which exist. Among the
// children of a node with budget left, those whose bytes the query has
// nowhere near the node's positions all come out alike (see plain).
//
// Levels. The walk expands all the nodes of one depth before the next, and
// reads all their words before expanding any: the reads, mostly cache
// misses in the deeper levels, then overlap instead of waiting on each
// other. Corrections come out in level order, not in WalkTypos's
// depth-first order, which decides only between two corrections of one key
// (see typoHit.before).
//
// Jumps. Most spent nodes are spent within the first letters, at depths 2
// to 4, and die within the next three; the walk does not read them, but
// registers them and, once their level is complete, finds in the
// snapshot's jump lists which of them the trie continues with the query's
// next three bytes from one of their positions, and queues those
// descendants three levels down (see typojump.go).
type typoWalk struct {
	s        *snapshot
	t        *trie
	query    string
	n, e     int
	maxDepth int
	end      uint64      // bit n: the whole query
	mask     uint64      // bits 0..n
	peq      [256]uint64 // peq[b]: bit j set when query[j-1] == b
	sym      [maxTypoQuery]uint64
	roots    uint64    // the root's children the walk may enter: typos never cross scripts (see search.AltKey)
	pop      *popNodes // when the query keeps only cities of known population: the nodes that have some

	// Every node queued, level after level: a level's nodes are appended
	// while the previous level's are expanded.
	opens  []openNode
	spents []spentNode
	trans  []uint64 // pending transpositions of spent nodes (see spentNode)
	words  []uint64 // the words of the level being expanded
	found  []foundAt
	own    foundAt // the query's own node, whose keys are prefix matches; depth 0 when no key starts with the query

	// The jumps over spent nodes near the root (see typojump.go): the
	// snapshot's lists, the nodes registered at each depth, the codes of
	// the query's jumpLen-byte strings by position, the nodes of the
	// jumps' paths that were not queued, and the nodes the jumps landed
	// on, by depth, until their level is queued.
	jx         *jumps
	jumpDepths uint64 // the depths whose spent nodes may be registered, as bits
	jumpFrom   uint64 // the positions a registered node may reach
	jd         [jumpMax + 1]jumpDepth
	gen        uint32
	gram       [maxTypoQuery]uint32
	lands      []landing
	aside      []asideNode
	pending    [jumpMax + jumpLen + 1][]spentNode

	// Buffers kept across walks: what corrections returns, and the
	// caller's typo hits (see findTypos).
	corrs []correction
	arena []byte
	hits  []typoHit
}

// A ref names a queued node: an index in opens when openRef is set, else
// in spents.
type ref uint32

const openRef ref = 1 << 31

// openNode is a node with budget left.
type openNode struct {
	rows   [maxTypoEdits + 1]uint64
	up     [maxTypoEdits]uint64 // the parent's sets below e (transpositions)
	node   uint32               // index in its trie level, or first key below the trie
	hi     uint32               // end of its keys below the trie
	parent ref
	label  byte
}

// spentNode is a node that has spent its budget. The walk queues many:
// it is kept small.
type spentNode struct {
	reach  uint64 // the positions its alignments within the budget reach
	node   uint32
	hi     uint32
	parent ref
	trans  uint16 // 1 + the index in trans of the positions a transposition with its child's byte would reach; 0 for none
	label  byte
}

// allowed returns the bytes x's children may have, over the slug
// alphabet: the query's after each position x reaches, and those that
// complete its transpositions.
func (w *typoWalk) allowed(x *spentNode) uint64 {
	set := w.bytesAfter(x.reach)
	if x.trans != 0 {
		set |= w.bytesAfter(w.trans[x.trans-1] >> 2)
	}
	return set
}

// foundAt is a correction: the child for label of node parent, whose
// index in its trie level is node, or whose keys are [node, hi) below the
// trie.
type foundAt struct {
	parent   ref
	node, hi uint32
	depth    uint16
	label    byte
	edits    uint8
}

var walkPool = sync.Pool{New: func() any { return new(typoWalk) }}

// init readies w, perhaps used before, for query within maxEdits edits,
// leaving out the nodes without cities of known population when populated.
func (w *typoWalk) init(s *snapshot, query string, maxEdits int, populated bool) {
	jd, gen, pending := w.jd, w.gen, w.pending
	*w = typoWalk{
		s: s, t: s.trie, query: query, n: len(query), e: maxEdits, maxDepth: len(query) + maxEdits,
		opens: w.opens[:0], spents: w.spents[:0], trans: w.trans[:0], words: w.words[:0], found: w.found[:0],
		corrs: w.corrs[:0], arena: w.arena[:0], hits: w.hits[:0],
		jd: jd, gen: gen, lands: w.lands[:0], aside: w.aside[:0],
	}
	for d := range pending {
		w.pending[d] = pending[d][:0]
	}
	mark, _ := trigramSymbol(search.ScriptMark)
	if populated {
		w.pop = s.popNodes.Load()
	}
	w.roots = childMask &^ (1 << mark)
	if query[0] == search.ScriptMark {
		w.roots = 1 << mark
	}
	w.end = 1 << w.n
	w.mask = w.end<<1 - 1
	for j := 1; j <= w.n; j++ {
		w.peq[query[j-1]] |= 1 << j
		if sym, ok := trigramSymbol(query[j-1]); ok {
			w.sym[j-1] = 1 << sym
		}
	}
	w.initJumps()
}

// bytesAfter returns, over the slug alphabet, the query's bytes right
// after the positions in reach.
func (w *typoWalk) bytesAfter(reach uint64) uint64 {
	var set uint64
	for reach &^= w.end; reach != 0; reach &= reach - 1 {
		set |= w.sym[bits.TrailingZeros64(reach)]
	}
	return set
}

// level is the range of a level's nodes in opens and spents.
type level struct{ open0, open1, spent0, spent1 int }

// run walks the trie level by level from the root.
func (w *typoWalk) run() {
	root := openNode{}
	for k := 0; k <= w.e; k++ {
		root.rows[k] = 1<<(k+1) - 1 // k edits from the query's first k bytes
	}
	w.opens = append(w.opens, root)
	l := level{0, 1, 0, 0}
	for d := 0; l.open0 < l.open1 || l.spent0 < l.spent1 || w.landing(d); d++ {
		if d <= w.t.depth() {
			w.expandLevel(d, l)
			if d+1 >= jumpMin && d+1 <= jumpMax && w.jx != nil {
				w.jump(d + 1)
			}
			if d+1 < len(w.pending) {
				w.spents = append(w.spents, w.pending[d+1]...)
			}
		} else {
			for i := l.open0; i < l.open1; i++ {
				x := w.opens[i]
				w.expandOpenKeys(&x, openRef|ref(i), x.node, x.hi, d, childMask)
			}
			for i := l.spent0; i < l.spent1; i++ {
				x := w.spents[i]
				w.expandSpentKeys(&x, ref(i), x.node, x.hi, d, w.allowed(&x))
			}
		}
		l = level{l.open1, len(w.opens), l.spent1, len(w.spents)}
	}
}

// landing reports whether jumps landed on nodes below depth d, which
// levels yet to be queued will hold, or on nodes registered for jumps
// yet to be taken.
func (w *typoWalk) landing(d int) bool {
	for k := d + 1; k < len(w.pending); k++ {
		if len(w.pending[k]) > 0 || k < len(w.jd) && w.jd[k].used != 0 {
			return true
		}
	}
	return false
}

// expandLevel queues the children of the nodes of level l, at depth d, a
// level of the trie. At the deepest level the children are runs of keys,
// looked up only for the bytes the node's word has.
func (w *typoWalk) expandLevel(d int, l level) {
	deepest := d == w.t.depth()
	nOpen := l.open1 - l.open0
	w.words = slices.Grow(w.words[:0], nOpen+l.spent1-l.spent0)[:nOpen+l.spent1-l.spent0]
	words := w.t.levels[d]
	for i := range nOpen {
		w.words[i] = le64(words, int(w.opens[l.open0+i].node)*wordSize)
	}
	for i := range l.spent1 - l.spent0 {
		w.words[nOpen+i] = le64(words, int(w.spents[l.spent0+i].node)*wordSize)
	}
	for i := range nOpen {
		self := openRef | ref(l.open0+i)
		x := w.opens[l.open0+i]
		word := w.words[i]
		set := word & childMask
		if d == 0 {
			set &= w.roots
		}
		if deepest {
			if set != 0 {
				lo, hi := w.keys(d, x.node)
				w.expandOpenKeys(&x, self, lo, hi, d, set)
			}
			continue
		}
		if c, ok := w.plain(&x, d+1); ok {
			plain := set &^ w.near(&x)
			set &^= plain
			if c.edits < 0 && c.descend && w.registers(d+1, c.reach) {
				// All registered for a jump, in one loop: they are
				// most of the children of the levels near the root.
				w.registerPlain(self, c.reach, d+1, word, plain)
				plain = 0
			}
			for ; plain != 0; plain &= plain - 1 {
				sym := bits.TrailingZeros64(plain)
				w.enterPlain(self, &c, search.SlugBytes[sym], d+1, child(word, sym))
			}
		}
		for ; set != 0; set &= set - 1 {
			sym := bits.TrailingZeros64(set)
			w.enter(&x, self, search.SlugBytes[sym], d+1, child(word, sym), 0)
		}
	}
	// Spent nodes come in runs of siblings alike, with the same positions
	// and no transposition: their bytes allowed are computed once a run.
	var lastReach, lastAllowed uint64
	for i := range l.spent1 - l.spent0 {
		self := ref(l.spent0 + i)
		x := w.spents[l.spent0+i]
		word := w.words[nOpen+i]
		var set uint64
		switch {
		case x.trans != 0:
			set = word & w.allowed(&x)
		case x.reach == lastReach:
			set = word & lastAllowed
		default:
			lastReach, lastAllowed = x.reach, w.bytesAfter(x.reach)
			set = word & lastAllowed
		}
		if deepest {
			if set != 0 {
				lo, hi := w.keys(d, x.node)
				w.expandSpentKeys(&x, self, lo, hi, d, set)
			}
			continue
		}
		for ; set != 0; set &= set - 1 {
			sym := bits.TrailingZeros64(set)
			w.follow(&x, self, search.SlugBytes[sym], d+1, child(word, sym), 0)
		}
	}
}

// keys returns the keys of node k of the trie's level d.
func (w *typoWalk) keys(d int, k uint32) (uint32, uint32) {
	lo, hi := w.t.keysAt(d, k)
	// Keys shorter than d may sit at the end of the range: they belong to
	// no node of the level.
	for hi > lo && w.s.slugLen(hi-1) < d {
		hi--
	}
	return lo, hi
}

// enter computes the sets of x's child for byte b, at depth d, whose index
// is node (and whose keys end at hi below the trie), records it if it is
// a correction, and queues it if the walk goes below it: the decisions of
// WalkTypos's visit. The rows of one and of two edits are each computed
// in a line of their own, the walk's budget being one or the other.
func (w *typoWalk) enter(x *openNode, self ref, b byte, d int, node, hi uint32) {
	if w.pruned(d, node) {
		return
	}
	eq := w.peq[b]
	tr := eq << 1 & w.peq[x.label] // the root's label, 0, is no query byte
	// r0, r1, r2: the new sets for 0, 1 and 2 edits; at depth k, k edits
	// reach position 0 (the child's path deleted whole).
	r0 := x.rows[0] << 1 & eq & w.mask
	r1 := (x.rows[1]<<1&eq | x.rows[0] | x.rows[0]<<1 | r0<<1 | x.up[0]<<2&tr | atDepth(d, 1)) & w.mask
	var r2 uint64
	spent, last := r0, r1 // the sets for e-1 and e edits
	if w.e == maxTypoEdits {
		r2 = (x.rows[2]<<1&eq | x.rows[1] | x.rows[1]<<1 | r1<<1 | x.up[1]<<2&tr | atDepth(d, 2)) & w.mask
		spent, last = r1, r2
	}
	if last == 0 {
		return // no extension can come within the budget
	}
	if r0&w.end != 0 {
		w.own = foundAt{node: node, hi: hi, depth: uint16(d)}
		return // the query itself: its range holds prefix matches
	}
	// A correction at its lowest distance: nothing below can need fewer
	// edits, so the walk stops there.
	switch {
	case r1&w.end != 0:
		w.found = append(w.found, foundAt{parent: self, node: node, hi: hi, depth: uint16(d), label: b, edits: 1})
		if r0 == 0 {
			return
		}
	case r2&w.end != 0:
		w.found = append(w.found, foundAt{parent: self, node: node, hi: hi, depth: uint16(d), label: b, edits: 2})
		if r0|r1 == 0 {
			return
		}
	}
	if d >= w.maxDepth {
		return
	}
	// A spent child goes to the spent queue, unless its transposition
	// would overflow the table (the open queue handles any node).
	if trans := x.rows[w.e-1] << 2 & w.peq[b] & w.mask; spent == 0 && (trans == 0 || len(w.trans) < math.MaxUint16) {
		c := spentNode{reach: last, node: node, hi: hi, parent: self, label: b}
		if trans != 0 {
			w.trans = append(w.trans, trans)
			c.trans = uint16(len(w.trans))
		}
		w.queueSpent(c, d)
		return
	}
	w.opens = append(w.opens, openNode{
		rows: [maxTypoEdits + 1]uint64{r0, r1, r2}, up: [maxTypoEdits]uint64{x.rows[0], x.rows[1]},
		node: node, hi: hi, parent: self, label: b,
	})
}

// atDepth returns position 0 as a set when a path of depth d is within k
// edits of the query's empty prefix (deleted whole), else none.
func atDepth(d, k int) uint64 {
	if d <= k {
		return 1
	}
	return 0
}

// near returns the bytes, over the slug alphabet, whose child of x may come
// out unlike the others: those after a position x reaches, and those that
// would complete or begin a transposition.
func (w *typoWalk) near(x *openNode) uint64 {
	reach := x.rows[w.e] | x.rows[w.e-1]<<1
	reach |= (x.up[w.e-1] << 2 & w.peq[x.label] & w.mask) >> 2
	return w.bytesAfter(reach)
}

// plainChild is what enter decides for every child of an open node whose
// byte is not near: such a byte matches no query byte the child's
// alignments could use, so only the edits that skip it count.
type plainChild struct {
	edits   int    // as a correction, or -1
	descend bool   // whether the walk goes below
	reach   uint64 // the positions within e edits; none within fewer
}

// plain returns what enter decides for the children of x at depth d whose
// bytes are not near, when they come out spent: d is e or past (at e, the
// set for e holds position 0: the child's path deleted whole), and no set
// below e holds a position. In a walk of one edit that is every open
// node's plain children, those of the query's own prefixes too: a byte no
// position is followed by keeps no alignment without edits. In one of
// two, x must be no exact prefix of the query.
func (w *typoWalk) plain(x *openNode, d int) (plainChild, bool) {
	if d < w.e {
		return plainChild{}, false
	}
	var r [maxTypoEdits + 1]uint64
	var below uint64
	for k := 1; k <= w.e; k++ {
		v := (x.rows[k-1] | x.rows[k-1]<<1 | below<<1) & w.mask
		r[k] = v
		below = v
	}
	if d == w.e {
		r[w.e] |= 1 // the child's whole path deleted
	}
	if r[w.e-1] != 0 {
		return plainChild{}, false
	}
	c := plainChild{edits: -1, reach: r[w.e]}
	switch {
	case c.reach == 0:
	case c.reach&w.end != 0:
		c.edits = w.e // at the lowest distance of its row: nothing below
	default:
		c.descend = d < w.maxDepth
	}
	return c, true
}

// enterPlain is enter for a child of open node self whose byte is not
// near.
func (w *typoWalk) enterPlain(self ref, c *plainChild, b byte, d int, node uint32) {
	if w.pruned(d, node) {
		return
	}
	if c.edits >= 0 {
		w.found = append(w.found, foundAt{parent: self, node: node, depth: uint16(d), label: b, edits: uint8(c.edits)})
	}
	if c.descend {
		w.queueSpent(spentNode{reach: c.reach, node: node, parent: self, label: b}, d)
	}
}

// follow is enter for the child of spent node x for byte b: the child is
// spent too, as the transposition x's parent allowed is behind it now. It
// is a correction when an alignment reaches the whole query, at the
// lowest distance of its row, so the walk stops there; and no child of a
// spent node is the query itself.
func (w *typoWalk) follow(x *spentNode, self ref, b byte, d int, node, hi uint32) {
	if w.pruned(d, node) {
		return
	}
	eq := w.peq[b]
	next := x.reach << 1 & eq
	if x.trans != 0 {
		next |= w.trans[x.trans-1] & (eq << 1)
	}
	switch {
	case next&w.end != 0:
		w.found = append(w.found, foundAt{parent: self, node: node, hi: hi, depth: uint16(d), label: b, edits: uint8(w.e)})
	case next != 0 && d < w.maxDepth:
		w.queueSpent(spentNode{reach: next, node: node, hi: hi, parent: self, label: b}, d)
	}
}

// expandOpenKeys is expandLevel for an open node at depth d at the trie's
// deepest level or below, whose keys are [lo, hi), for its children whose
// bytes are in set: a child is the run of keys with its byte at d.
func (w *typoWalk) expandOpenKeys(x *openNode, self ref, lo, hi uint32, d int, set uint64) {
	s := w.s
	for lo < hi && len(s.keySlug(lo)) == d {
		lo++ // the node's path is a whole key: it has no child there
	}
	for ; set != 0 && lo < hi; set &= set - 1 {
		b := search.SlugBytes[bits.TrailingZeros64(set)]
		i, j := run(s, lo, hi, d, b)
		if lo = j; i < j {
			w.enter(x, self, b, d+1, i, j)
		}
	}
}

// expandSpentKeys is expandOpenKeys for a spent node.
func (w *typoWalk) expandSpentKeys(x *spentNode, self ref, lo, hi uint32, d int, set uint64) {
	s := w.s
	for lo < hi && len(s.keySlug(lo)) == d {
		lo++
	}
	for ; set != 0 && lo < hi; set &= set - 1 {
		b := search.SlugBytes[bits.TrailingZeros64(set)]
		i, j := run(s, lo, hi, d, b)
		if lo = j; i < j {
			w.follow(x, self, b, d+1, i, j)
		}
	}
}

// run returns the run of keys within [lo, hi), which share their first d
// bytes and are longer than d, whose byte d is b; an empty one at the
// first key past b when there is none.
func run(s *snapshot, lo, hi uint32, d int, b byte) (i, j uint32) {
	if hi-lo <= 16 {
		i = lo
		for i < hi && s.keySlug(i)[d] < b {
			i++
		}
		j = i
		for j < hi && s.keySlug(j)[d] == b {
			j++
		}
		return i, j
	}
	i = lo + uint32(sort.Search(int(hi-lo), func(k int) bool { return s.keySlug(lo + uint32(k))[d] >= b }))
	j = i + uint32(sort.Search(int(hi-i), func(k int) bool { return s.keySlug(i + uint32(k))[d] > b }))
	return i, j
}

// keysOf returns the range of keys of node f.
func (w *typoWalk) keysOf(f *foundAt) (lo, hi uint32) {
	if int(f.depth) <= w.t.depth() {
		return w.keys(int(f.depth), f.node)
	}
	return f.node, f.hi
}

// prefixed returns the range of the keys that start with the query.
func (w *typoWalk) prefixed() (lo, hi uint32) {
	if w.own.depth == 0 {
		return 0, 0
	}
	return w.keysOf(&w.own)
}

// corrections returns what the walk found, in the order it found them,
// with their paths in arena and their ranges of keys; both are w's, valid
// until its next walk.
func (w *typoWalk) corrections() (found []correction, arena []byte) {
	found, arena = w.corrs[:0], w.arena[:0]
	defer func() { w.corrs, w.arena = found, arena }()
	for _, f := range w.found {
		off := len(arena)
		arena = append(arena, make([]byte, f.depth)...)
		p := arena[off:]
		p[f.depth-1] = f.label
		for d, r := int(f.depth)-1, f.parent; d >= 1; d-- {
			switch {
			case r&openRef != 0:
				x := &w.opens[r&^openRef]
				p[d-1], r = x.label, x.parent
			case r&asideRef != 0:
				x := &w.aside[r&^asideRef]
				p[d-1], r = x.label, x.parent
			default:
				x := &w.spents[r]
				p[d-1], r = x.label, x.parent
			}
		}
		c := correction{off: uint32(off), depth: uint32(f.depth), edits: f.edits, lo: f.node, hi: f.hi}
		if int(f.depth) <= w.t.depth() {
			c.lo, c.hi = w.t.keysAt(int(f.depth), f.node)
		}
		found = append(found, c)
	}
	// The ends of the ranges in the trie, in a pass of their own: each
	// reads a record, mostly a cache miss, and apart from the rest they
	// overlap.
	for i := range found {
		c := &found[i]
		for c.depth <= uint32(w.t.depth()) && c.hi > c.lo && w.s.slugLen(c.hi-1) < int(c.depth) {
			c.hi--
		}
	}
	return found, arena
}
