package embedded

import (
	"math/bits"
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Jumps over the spent nodes near the root.
//
// Most nodes a two-edit walk reaches are spent (see typoWalk), and most of
// those are spent within the first letters: a node of depth 2–4 that used
// both edits on the query's first letters, such as any two letters for a
// query's first two, below which the walk can only follow the query's
// letters from one of a few positions on. There are hundreds of them a
// query, every one a word to read, and nearly all of their descents die
// within three letters. A jump list finds, for a depth t and three bytes
// g, every node of depth t whose path is followed by g in the trie: a walk
// that reaches a spent node x of depth t with position i in its reach
// needs x's descendant x+query[i:i+3] only, and the list of (t,
// query[i:i+3]) names the spent nodes of depth t that have one, without
// reading any of them or their children.
//
// So the walk registers such spent nodes instead of queueing them, and
// once a level is complete scans the lists of its positions' three bytes:
// each node of the list that was registered with that position is
// followed three levels down at once, to its descendant, which it queues
// as a spent node of that depth with the positions it reaches: exactly the
// node, with exactly the set, that following it byte by byte would have
// queued. A jump is taken only where following byte by byte could not
// stop earlier: no position of the node may reach the end of the query
// within the three bytes, and no transposition may be pending.

// Bounds of the jumps: from depths jumpMin to jumpMax, by jumpLen bytes.
const (
	jumpMin = 2
	jumpMax = 4
	jumpLen = 3
	// jumpNodes is how many nodes a level may have for a jump list of
	// that depth (see jumpDepth).
	jumpNodes = 1 << regBits
)

// jumpNarrow is how many nodes a level may have for its jump list to hold
// 16-bit indexes (a variable for the tests of the wider ones).
var jumpNarrow = 1 << 16

// jumpGrams is the number of jumpLen-byte strings of the slug alphabet.
const jumpGrams = trigramSymbols * trigramSymbols * trigramSymbols

// jumpList lists the nodes of one depth t of the trie by the three bytes
// that follow them: for the string of code c (see gramCode), nodes[starts[c]:
// starts[c+1]] are the indexes in level t, in order, of the nodes x that
// have a descendant x+s at depth t+jumpLen, and lands[starts[c]:starts[c+1]]
// the indexes of those descendants in level t+jumpLen: a jump reads no
// node of its path.
type jumpList struct {
	starts []uint32
	// The indexes, 16 bits wide where the level has at most jumpNarrow
	// nodes (nodes16), else 32 (nodes32).
	nodes16 []uint16
	nodes32 []uint32
	lands   []uint32
}

// jumps holds the jump lists of a trie, for the depths whose levels are
// small enough; nil for the others.
type jumps struct {
	lists [jumpMax + 1]*jumpList
}

// buildJumps returns the jump lists of t: two walks of its levels down to
// the deepest that the jumps land on, one to count each list's nodes and
// one to fill the lists, in path order, which is each level's order (4.8
// MB for the 3 million keys of the large dataset and 8.1 MB for the nodes
// they land on, and nothing else allocated, so that a server's heap does
// not keep it).
func buildJumps(t *trie) *jumps {
	if t == nil || t.depth() < jumpMax+jumpLen {
		return nil
	}
	j := &jumps{}
	for d := jumpMin; d <= jumpMax; d++ {
		if len(t.levels[d])/wordSize <= jumpNodes {
			j.lists[d] = &jumpList{starts: make([]uint32, jumpGrams+1)}
		}
	}
	j.visit(t, nil)
	next := make([][]uint32, jumpMax+1)
	for d, l := range j.lists {
		if l == nil {
			continue
		}
		for c := range jumpGrams {
			l.starts[c+1] += l.starts[c]
		}
		n := l.starts[jumpGrams]
		if len(t.levels[d])/wordSize <= jumpNarrow {
			l.nodes16 = make([]uint16, n)
		} else {
			l.nodes32 = make([]uint32, n)
		}
		l.lands = make([]uint32, n)
		next[d] = slices.Clone(l.starts[:jumpGrams])
	}
	j.visit(t, next)
	return j
}

// visit walks t depth first down to the deepest level that jumps land on,
// and for every node there counts its list's entry (when next is nil) or
// writes it at next, the next free entry of each string's.
func (j *jumps) visit(t *trie, next [][]uint32) {
	const bottom = jumpMax + jumpLen
	var index, syms [bottom + 1]uint32
	var sets [bottom]uint64 // the children each depth has yet to visit
	var kids [bottom]uint32 // the index of the next of them
	w := t.node(0, 0)
	sets[0], kids[0] = w&childMask, uint32(w>>indexShift)
	for d := 0; d >= 0; {
		if sets[d] == 0 {
			d--
			continue
		}
		c := d + 1
		index[c], syms[c] = kids[d], uint32(bits.TrailingZeros64(sets[d]))
		sets[d] &= sets[d] - 1
		kids[d]++
		if from := c - jumpLen; from >= jumpMin {
			if l := j.lists[from]; l != nil {
				code := (syms[from+1]*trigramSymbols+syms[from+2])*trigramSymbols + syms[from+3]
				if next == nil {
					l.starts[code+1]++
				} else {
					at := next[from][code]
					if l.nodes16 != nil {
						l.nodes16[at] = uint16(index[from])
					} else {
						l.nodes32[at] = index[from]
					}
					l.lands[at] = index[c]
					next[from][code]++
				}
			}
		}
		if c < bottom {
			w := t.node(c, index[c])
			sets[c], kids[c] = w&childMask, uint32(w>>indexShift)
			d = c
		}
	}
}

// jumpDepth is the walk's state for the jumps of one depth: for every
// node of the level, the spent node registered there in this walk, as
// gen<<24 | positions<<regBits | its index in nodes, where the positions
// are its reach from depth-maxTypoEdits on and gen is the walk's (so that
// walks need not clear the table: one whose gen differs registered
// nothing there).
type jumpDepth struct {
	regs []uint32
	// A bit per node of the level, set when regs holds this walk's entry
	// there: a scan of a list reads mostly these, which the cache holds
	// (regs is 32 times as large), and clears them once taken.
	marked []uint64
	nodes  []asideNode // the registered nodes' parents and labels
	used   uint64      // the positions some registered node reaches
}

// register records entry as the registration of node k.
func (st *jumpDepth) register(k, entry uint32) {
	st.regs[k] = entry
	st.marked[k>>6] |= 1 << (k & 63)
}

// regBits is how many bits of a jumpDepth entry index its nodes.
const regBits = 19

// landing is a jump found and not yet taken: from node x of depth d along
// the bytes of code to node, with the positions reach at the end.
type landing struct {
	reach  uint64
	parent ref // x's parent
	node   uint32
	syms   [jumpLen]uint8 // the symbols of the bytes after x
	label  byte           // x's
}

// asideNode is a node of a jump's path that the walk did not queue: what
// corrections needs to spell the paths below it.
type asideNode struct {
	parent ref
	label  byte
}

// asideRef marks a ref to aside rather than spents.
const asideRef ref = 1 << 30

// initJumps readies w's jump state for the trie of s. Only a walk of two
// edits jumps: one of one edit reaches few spent nodes near the root, and
// through Service.Find it was no faster with jumps (docs/performance.md).
func (w *typoWalk) initJumps() {
	w.jx = w.s.jumps.Load()
	if w.e < maxTypoEdits {
		w.jx = nil
	}
	if w.jx == nil {
		return
	}
	if w.gen++; w.gen == 1<<(32-24) {
		for d := range w.jd {
			clear(w.jd[d].regs)
		}
		w.gen = 1
	}
	for d := jumpMin; d <= jumpMax; d++ {
		st := &w.jd[d]
		st.used, st.nodes = 0, st.nodes[:0]
		if n := len(w.t.levels[d]) / wordSize; w.jx.lists[d] != nil && len(st.regs) != n {
			st.regs, st.marked = make([]uint32, n), make([]uint64, (n+63)/64)
		}
	}
	for d := jumpMin; d <= jumpMax; d++ {
		if w.jx.lists[d] != nil && d+jumpLen-1 < w.maxDepth {
			w.jumpDepths |= 1 << d
		}
	}
	if w.n >= jumpLen {
		w.jumpFrom = 1<<(w.n-jumpLen+1) - 1
	}
	for i := 0; i+jumpLen <= w.n; i++ {
		code := 0
		for _, c := range []byte(w.query[i : i+jumpLen]) {
			code = code*trigramSymbols + int(symbols[c])
		}
		w.gram[i] = uint32(code)
	}
}

// registers reports whether a spent node of depth d that reaches the
// positions in reach, with no transposition pending, is registered for a
// jump rather than queued: when no position can reach the end of the
// query before the jump lands, and the walk would go as deep.
func (w *typoWalk) registers(d int, reach uint64) bool {
	return w.jumpDepths>>d&1 != 0 && reach&^w.jumpFrom == 0
}

// queueSpent queues c, a spent node of depth d, or registers it for a
// jump when it may take one.
func (w *typoWalk) queueSpent(c spentNode, d int) {
	if c.trans != 0 || !w.registers(d, c.reach) {
		w.spents = append(w.spents, c)
		return
	}
	st := &w.jd[d]
	st.register(c.node, uint32(w.gen)<<24|uint32(c.reach>>(d-maxTypoEdits))<<regBits|uint32(len(st.nodes)))
	st.nodes = append(st.nodes, asideNode{parent: c.parent, label: c.label})
	st.used |= c.reach
}

// registerPlain registers the children of open node parent, at depth d,
// whose symbols are in set, all spent with the positions reach; word is
// the parent's.
func (w *typoWalk) registerPlain(parent ref, reach uint64, d int, word, set uint64) {
	st := &w.jd[d]
	st.used |= reach
	base := uint32(w.gen)<<24 | uint32(reach>>(d-maxTypoEdits))<<regBits
	for ; set != 0; set &= set - 1 {
		sym := bits.TrailingZeros64(set)
		if w.pruned(d, child(word, sym)) {
			continue
		}
		st.register(child(word, sym), base|uint32(len(st.nodes)))
		st.nodes = append(st.nodes, asideNode{parent: parent, label: search.SlugBytes[sym]})
	}
}

// jump takes the jumps of the nodes registered at depth d, once the level
// is complete: their descendants jumpLen levels down go to pending, for
// the level they belong to, or to found.
func (w *typoWalk) jump(d int) {
	st := &w.jd[d]
	if st.used == 0 {
		return
	}
	l := w.jx.lists[d]
	lands := w.lands[:0]
	for used := st.used; used != 0; {
		i := bits.TrailingZeros64(used)
		code := w.gram[i]
		// The positions with the same next bytes land on the same nodes:
		// one scan for them all.
		var same uint64
		for u := used; u != 0; u &= u - 1 {
			if k := bits.TrailingZeros64(u); w.gram[k] == code {
				same |= 1 << k
			}
		}
		used &^= same
		g := jumpGram{code: code, same: same, syms: [jumpLen]uint8{uint8(code / (trigramSymbols * trigramSymbols)), uint8(code / trigramSymbols % trigramSymbols), uint8(code % trigramSymbols)}}
		at := l.lands[l.starts[code]:l.starts[code+1]]
		if l.nodes16 != nil {
			lands = scanJumps(w, st, d, l.nodes16[l.starts[code]:l.starts[code+1]], at, &g, lands)
		} else {
			lands = scanJumps(w, st, d, l.nodes32[l.starts[code]:l.starts[code+1]], at, &g, lands)
		}
	}
	st.used = 0 // taken
	clear(st.marked)
	for i := range lands {
		w.land(d, &lands[i])
	}
	w.lands = lands
}

// jumpGram is one string of jumpLen bytes that some registered nodes'
// positions are followed by, and those positions.
type jumpGram struct {
	code uint32
	same uint64
	syms [jumpLen]uint8
}

// scanJumps appends to lands a jump for every node of list registered
// with some position of g, to the node of at beside it.
func scanJumps[T uint16 | uint32](w *typoWalk, st *jumpDepth, d int, list []T, at []uint32, g *jumpGram, lands []landing) []landing {
	at = at[:len(list)]
	gen := uint32(w.gen) << (24 - regBits)
	const genMask = 0xff << (24 - regBits)
	regs, marked := st.regs, st.marked
	if g.same&(g.same-1) == 0 {
		bit := uint32(1) << (bits.TrailingZeros64(g.same) - d + maxTypoEdits)
		reach := g.same << jumpLen
		for i, x := range list {
			if marked[x>>6]>>(x&63)&1 == 0 {
				continue
			}
			if r := regs[x]; (r>>regBits^gen)&(genMask|bit) == bit {
				n := st.nodes[r&(1<<regBits-1)]
				lands = append(lands, landing{reach: reach, parent: n.parent, node: at[i], syms: g.syms, label: n.label})
			}
		}
		return lands
	}
	for i, x := range list {
		if marked[x>>6]>>(x&63)&1 == 0 {
			continue
		}
		r := regs[x]
		if (r>>regBits^gen)&genMask != 0 {
			continue
		}
		pos := r >> regBits & 0x1f
		var reach uint64
		for s := g.same; s != 0; s &= s - 1 {
			k := bits.TrailingZeros64(s)
			reach |= uint64(pos>>(k-d+maxTypoEdits)&1) << (k + jumpLen)
		}
		if reach != 0 {
			n := st.nodes[r&(1<<regBits-1)]
			lands = append(lands, landing{reach: reach, parent: n.parent, node: at[i], syms: g.syms, label: n.label})
		}
	}
	return lands
}

// land records the node that jump l lands on as follow would, with the
// nodes of its path in aside.
func (w *typoWalk) land(d int, l *landing) {
	if w.pruned(d+jumpLen, l.node) {
		return
	}
	w.aside = append(w.aside, asideNode{parent: l.parent, label: l.label},
		asideNode{label: search.SlugBytes[l.syms[0]]}, asideNode{label: search.SlugBytes[l.syms[1]]})
	at := ref(len(w.aside) - 3)
	w.aside[at+1].parent = asideRef | at
	w.aside[at+2].parent = asideRef | (at + 1)
	parent := asideRef | (at + 2)
	label := search.SlugBytes[l.syms[2]]
	depth := d + jumpLen
	switch {
	case l.reach&w.end != 0:
		w.found = append(w.found, foundAt{parent: parent, node: l.node, depth: uint16(depth), label: label, edits: uint8(w.e)})
	case depth < w.maxDepth && w.registers(depth, l.reach):
		// A jump from there too: its level's jumps come later.
		st := &w.jd[depth]
		st.register(l.node, uint32(w.gen)<<24|uint32(l.reach>>(depth-maxTypoEdits))<<regBits|uint32(len(st.nodes)))
		st.nodes = append(st.nodes, asideNode{parent: parent, label: label})
		st.used |= l.reach
	case depth < w.maxDepth:
		w.pending[depth] = append(w.pending[depth], spentNode{reach: l.reach, node: l.node, parent: parent, label: label})
	}
}
