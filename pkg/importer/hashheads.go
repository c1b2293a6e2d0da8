package importer

import "math/bits"

// headTable maps 64-bit hashes to the int32 heads of their chains in one
// flat slice, open addressing with linear probing. An import meets
// millions of distinct keys: a Go map that size costs several cache misses
// a lookup and rehashes as it grows, this one a miss or two and a copy of
// plain words.
type headTable struct {
	slots []headSlot
	used  int
	shift uint  // 64 - log2(len(slots))
	sink  int32 // what touch read, so that its loads stay
}

// headSlot holds a hash and its head plus one; 0 marks an empty slot.
type headSlot struct {
	hash uint64
	head int32
}

// minHeadSlots is the size of a new table, a power of two.
const minHeadSlots = 1 << 12

// head returns the head of hash h, or -1 when there is none.
func (t *headTable) head(h uint64) int32 {
	if len(t.slots) == 0 {
		return -1
	}
	mask := len(t.slots) - 1
	for i := t.slot(h); ; i = (i + 1) & mask {
		switch s := &t.slots[i]; {
		case s.head == 0:
			return -1
		case s.hash == h:
			return s.head - 1
		}
	}
}

// touch reads the slot where the probe of h starts, so that a head or set
// of h soon after finds it in the cache.
func (t *headTable) touch(h uint64) {
	if len(t.slots) > 0 {
		t.sink += t.slots[t.slot(h)].head
	}
}

// set makes head (≥ 0) the head of hash h.
func (t *headTable) set(h uint64, head int32) {
	if 4*(t.used+1) > 3*len(t.slots) {
		t.grow()
	}
	if t.put(h, head+1) {
		t.used++
	}
}

// put stores v for h and reports whether h is new.
func (t *headTable) put(h uint64, v int32) bool {
	mask := len(t.slots) - 1
	for i := t.slot(h); ; i = (i + 1) & mask {
		switch s := &t.slots[i]; {
		case s.head == 0:
			*s = headSlot{h, v}
			return true
		case s.hash == h:
			s.head = v
			return false
		}
	}
}

// slot is where h's probe starts: the top bits of h scrambled, as a hash
// that callers combine from parts may be weak in some bits.
func (t *headTable) slot(h uint64) int {
	return int((h * 0x9e3779b97f4a7c15) >> t.shift)
}

// grow doubles the table (or makes its first one) and moves every slot.
func (t *headTable) grow() {
	old := t.slots
	n := max(minHeadSlots, 2*len(old))
	t.slots = make([]headSlot, n)
	t.shift = 64 - uint(bits.TrailingZeros(uint(n)))
	for _, s := range old {
		if s.head != 0 {
			t.put(s.hash, s.head)
		}
	}
}
