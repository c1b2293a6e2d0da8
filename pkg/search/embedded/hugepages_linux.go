package embedded

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of the pages collapse asks for.
const hugePage = 2 << 20

// collapse asks the kernel to back the whole 2 MB pages of b, a snapshot's
// data, with huge pages (madvise MADV_COLLAPSE, Linux 6.1 on). Every
// search reads records, slugs and trie nodes at random across the
// snapshot's 225 MB: with 4 KB pages nearly every such read also misses
// the TLB, with 2 MB pages the whole snapshot fits in it. The kernel copies
// the memory once (about 70 ms for the large dataset) while searches go
// on; where it cannot (an older kernel, transparent huge pages off), b
// stays as it was, and searches answer the same, only slower.
func collapse(b []byte) {
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + hugePage - 1) &^ (hugePage - 1)
	hi := (start + uintptr(len(b))) &^ (hugePage - 1)
	if hi <= lo {
		return // no whole huge page: a small dataset
	}
	_ = unix.Madvise(b[lo-start:hi-start], unix.MADV_COLLAPSE)
}
