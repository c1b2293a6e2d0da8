package embedded

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// builder turns a stream of cities into the sections of a snapshot. It
// keeps each city as a 32-byte record plus its slug and name in one arena,
// so that a dataset of millions of cities fits in a few hundred megabytes
// while it is sorted.
type builder struct {
	records  chunked
	arena    chunked
	areas    []area
	areaIdx  map[area]uint32
	lastArea area // rows come grouped by country and region: skip the map
	lastIdx  uint32
	count    int
}

func newBuilder() *builder {
	return &builder{areaIdx: make(map[area]uint32)}
}

func (b *builder) add(c *search.City) error {
	if len(c.Slug) > math.MaxUint16 || len(c.Name) > math.MaxUint16 {
		return fmt.Errorf("%w: name of %d bytes is too long", search.ErrInvalidCity, len(c.Name))
	}
	a := area{country: c.Country, code: c.CountryCode, subcountry: c.Subcountry, region: c.Region}
	ai := b.lastIdx
	if a != b.lastArea || len(b.areas) == 0 {
		var ok bool
		if ai, ok = b.areaIdx[a]; !ok {
			ai = uint32(len(b.areas))
			b.areas = append(b.areas, a)
			b.areaIdx[a] = ai
		}
		b.lastArea, b.lastIdx = a, ai
	}
	if uint64(b.arena.len())+uint64(len(c.Slug))+uint64(len(c.Name)) > math.MaxUint32 {
		return fmt.Errorf("dataset too large: more than 4 GiB of names")
	}
	var r [recordSize]byte
	binary.LittleEndian.PutUint32(r[rSlugOff:], uint32(b.arena.len()))
	binary.LittleEndian.PutUint16(r[rSlugLen:], uint16(len(c.Slug)))
	binary.LittleEndian.PutUint16(r[rNameLen:], uint16(len(c.Name)))
	binary.LittleEndian.PutUint32(r[rArea:], ai)
	binary.LittleEndian.PutUint32(r[rID:], c.ID)
	pop := c.Population
	pop = max(0, min(pop, math.MaxUint32))
	binary.LittleEndian.PutUint32(r[rPop:], uint32(pop))
	lat, lon := int32(noLocation), int32(0)
	if c.HasLocation {
		lat, lon = fixedDegrees(c.Lat), fixedDegrees(c.Lon)
	}
	binary.LittleEndian.PutUint32(r[rLat:], uint32(lat))
	binary.LittleEndian.PutUint32(r[rLon:], uint32(lon))
	b.records.write(r[:])
	b.arena.writeString(c.Slug)
	b.arena.writeString(c.Name)
	b.count++
	return nil
}

// chunked is an append-only buffer of fixed-size chunks: growing it to
// hundreds of megabytes never copies or clears what it already holds, as
// a growing slice would (and a huge copy or clear also holds up the
// garbage collector, which cannot preempt it).
type chunked struct {
	chunks [][]byte
	n      int
}

const chunkSize = 4 << 20

func (c *chunked) len() int { return c.n }

func (c *chunked) writeString(p string) {
	for len(p) > 0 {
		last := len(c.chunks) - 1
		if last < 0 || len(c.chunks[last]) == cap(c.chunks[last]) {
			c.chunks = append(c.chunks, make([]byte, 0, chunkSize))
			last++
		}
		k := min(len(p), cap(c.chunks[last])-len(c.chunks[last]))
		c.chunks[last] = append(c.chunks[last], p[:k]...)
		c.n += k
		p = p[k:]
	}
}

func (c *chunked) write(p []byte) { c.writeString(aliasString(p)) }

// bytes returns the contents as one slice and empties c.
func (c *chunked) bytes() []byte {
	out := make([]byte, 0, c.n)
	for i, ch := range c.chunks {
		out = append(out, ch...)
		c.chunks[i] = nil
	}
	*c = chunked{}
	return out
}

// unsorted views the collected records as a snapshot, so that sorting
// compares records with the very functions that queries use.
func (b *builder) unsorted() *snapshot {
	return &snapshot{records: b.records.bytes(), blob: b.arena.bytes(), areas: b.areas, count: b.count}
}

// sorted sorts the records by slug (ties in rank order), drops duplicates
// (same slug and area; the first, most populous, stays) and lays records
// and strings out again in that order, so that neighbours in a prefix range
// are neighbours in memory.
func (b *builder) sorted(ctx context.Context) (*snapshot, error) {
	src := b.unsorted()
	perm := sortBySlug(src)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst := &snapshot{
		records: make([]byte, 0, len(src.records)),
		blob:    make([]byte, 0, len(src.blob)),
		areas:   b.areas,
	}
	seen := make(map[uint32]struct{})
	for k := 0; k < len(perm); {
		run := k + 1
		for run < len(perm) && bytes.Equal(src.slug(perm[run]), src.slug(perm[k])) {
			run++
		}
		if run-k > 1 {
			clear(seen)
		}
		for _, i := range perm[k:run] {
			r := src.rec(i)
			if run-k > 1 {
				a := le32(r, rArea)
				if _, dup := seen[a]; dup {
					continue
				}
				seen[a] = struct{}{}
			}
			var nr [recordSize]byte
			copy(nr[:], r)
			binary.LittleEndian.PutUint32(nr[rSlugOff:], uint32(len(dst.blob)))
			dst.records = append(dst.records, nr[:]...)
			dst.blob = append(dst.blob, src.slug(i)...)
			dst.blob = append(dst.blob, src.name(i)...)
			dst.count++
		}
		k = run
	}
	dst.assignRanks()
	return dst, nil
}

// assignRanks numbers the records of a sorted snapshot in the base order:
// population (higher first), then slug length, then position. Position
// stands for the rest of search.Compare's order: records are sorted by slug,
// and records with the same slug by name, country, subcountry, region and id.
// Most records have no population, so they are numbered by a counting sort
// on length; only the others need a comparison sort.
func (s *snapshot) assignRanks() {
	var known []uint32
	var perLen []uint32 // records without population, counted by slug length
	for i := range uint32(s.count) {
		if s.pop(i) > 0 {
			known = append(known, i)
			continue
		}
		n := len(s.slug(i))
		if n >= len(perLen) {
			perLen = append(perLen, make([]uint32, n+1-len(perLen))...)
		}
		perLen[n]++
	}
	slices.SortFunc(known, func(a, b uint32) int {
		if pa, pb := s.pop(a), s.pop(b); pa != pb {
			if pa > pb {
				return -1
			}
			return 1
		}
		if la, lb := len(s.slug(a)), len(s.slug(b)); la != lb {
			return la - lb
		}
		return int(a) - int(b)
	})
	set := func(i, rank uint32) {
		binary.LittleEndian.PutUint32(s.records[int(i)*recordSize+rRank:], rank)
	}
	for rank, i := range known {
		set(i, uint32(rank))
	}
	// Turn the counts into each length's first rank, then number the
	// records in position order within their length.
	next := uint32(len(known))
	for n, c := range perLen {
		perLen[n] = next
		next += c
	}
	for i := range uint32(s.count) {
		if s.pop(i) == 0 {
			n := len(s.slug(i))
			set(i, perLen[n])
			perLen[n]++
		}
	}
}

// sortKey is a record index with the first 8 bytes of its slug, big-endian,
// so that most comparisons of the sort are one integer comparison with no
// trip to the record or the blob. Slugs hold no zero bytes, so zero padding
// sorts a shorter slug before its extensions, as bytes.Compare does.
type sortKey struct {
	key uint64
	idx uint32
}

// sortBySlug returns the record indexes of s ordered by slug, ties in rank
// order, sorting the two halves on two cores and merging them.
func sortBySlug(s *snapshot) []uint32 {
	keys := make([]sortKey, s.count)
	for i := range keys {
		var k [8]byte
		copy(k[:], s.slug(uint32(i)))
		keys[i] = sortKey{key: binary.BigEndian.Uint64(k[:]), idx: uint32(i)}
	}
	cmp := func(a, b sortKey) int {
		if a.key != b.key {
			if a.key < b.key {
				return -1
			}
			return 1
		}
		sa, sb := s.slug(a.idx), s.slug(b.idx)
		if c := bytes.Compare(sa, sb); c != 0 {
			return c
		}
		return s.compare(aliasString(sa), a.idx, b.idx)
	}
	half := len(keys) / 2
	done := make(chan struct{})
	go func() {
		slices.SortFunc(keys[:half], cmp)
		close(done)
	}()
	slices.SortFunc(keys[half:], cmp)
	<-done
	perm := make([]uint32, 0, len(keys))
	a, b := keys[:half], keys[half:]
	for len(a) > 0 && len(b) > 0 {
		if cmp(a[0], b[0]) <= 0 {
			perm, a = append(perm, a[0].idx), a[1:]
		} else {
			perm, b = append(perm, b[0].idx), b[1:]
		}
	}
	for _, k := range a {
		perm = append(perm, k.idx)
	}
	for _, k := range b {
		perm = append(perm, k.idx)
	}
	return perm
}

// heavyBuild is a heavy prefix found while building.
type heavyBuild struct {
	prefixOff, prefixLen uint32
	exactLo, exactHi     uint32
	list                 []uint32
}

// precompute finds every prefix whose range holds more than scanLimit
// records and ranks it ahead of time: for each it keeps the best listCap
// records of its range that are not exact matches. Those are ranked by
// population, length and so on alone, the same for every query prefix, so
// each prefix's list is a merge of its children's lists, built bottom-up.
// A query then merges the list with the prefix's exact matches (which rank
// with their boost) instead of ranking the whole range.
func (s *snapshot) precompute(scanLimit, listCap int) []heavyBuild {
	// The first letters split the work into independent subtrees, shared
	// out to two workers by size.
	type group struct{ lo, hi int }
	var groups [2][]group
	var load [2]int
	for lo := 0; lo < s.count; {
		first := s.slug(uint32(lo))[0]
		hi := lo + 1
		for hi < s.count && s.slug(uint32(hi))[0] == first {
			hi++
		}
		w := 0
		if load[1] < load[0] {
			w = 1
		}
		groups[w] = append(groups[w], group{lo, hi})
		load[w] += hi - lo
		lo = hi
	}
	var found [2][]heavyBuild
	var wg sync.WaitGroup
	for w := range groups {
		wg.Go(func() {
			p := prefixWalker{s: s, scanLimit: scanLimit, listCap: listCap}
			for _, g := range groups[w] {
				p.walk(g.lo, g.hi, 1)
			}
			found[w] = p.heavy
		})
	}
	wg.Wait()
	return append(found[0], found[1]...)
}

// prefixWalker ranks the heavy prefixes of one part of a snapshot.
type prefixWalker struct {
	s                  *snapshot
	scanLimit, listCap int
	heavy              []heavyBuild
}

// base orders records as if none were a whole-name match: by rank.
func (p *prefixWalker) base(i, j uint32) int { return int(p.s.rank(i)) - int(p.s.rank(j)) }

// walk ranks records [lo, hi), which share their first depth bytes, and
// returns their best listCap by the base order.
func (p *prefixWalker) walk(lo, hi, depth int) []uint32 {
	s := p.s
	if hi-lo <= p.scanLimit {
		idx := make([]uint32, 0, hi-lo)
		for i := lo; i < hi; i++ {
			idx = append(idx, uint32(i))
		}
		slices.SortFunc(idx, p.base)
		return idx[:min(len(idx), p.listCap)]
	}
	exactHi := lo
	for exactHi < hi && len(s.slug(uint32(exactHi))) == depth {
		exactHi++
	}
	var best []uint32
	for c := exactHi; c < hi; {
		b := s.slug(uint32(c))[depth]
		e := c + 1
		for e < hi && s.slug(uint32(e))[depth] == b {
			e++
		}
		best = mergeTop(best, p.walk(c, e, depth+1), p.listCap, p.base)
		c = e
	}
	if prefix := s.slug(uint32(lo))[:depth]; prefix[depth-1] != '-' {
		p.heavy = append(p.heavy, heavyBuild{
			prefixOff: le32(s.rec(uint32(lo)), rSlugOff), prefixLen: uint32(depth),
			exactLo: uint32(lo), exactHi: uint32(exactHi), list: best,
		})
	}
	exact := make([]uint32, 0, min(exactHi-lo, p.listCap))
	for i := lo; i < exactHi && len(exact) < p.listCap; i++ {
		exact = append(exact, uint32(i))
	}
	return mergeTop(exact, best, p.listCap, p.base)
}

// mergeTop merges two lists sorted by cmp into a new one of at most n.
func mergeTop(a, b []uint32, n int, cmp func(i, j uint32) int) []uint32 {
	out := make([]uint32, 0, min(len(a)+len(b), n))
	for len(out) < n && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || (len(a) > 0 && cmp(a[0], b[0]) <= 0) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// build is what a snapshot is built with besides its cities.
type build struct {
	// scanLimit is the longest prefix range a query ranks by scanning;
	// listCap the length of a heavy prefix's precomputed list.
	scanLimit, listCap int
	// source is the file the cities come from.
	source search.Source
	// enter hears the steps after reading (see search.LoadOptions.Phase).
	enter func(phase string)
}

// write writes the snapshot with its precomputed prefixes to w, which must
// be positioned at its start; it seeks back to fill the header last.
func (s *snapshot) write(w io.WriteSeeker, heavy []heavyBuild, trie []byte, b build) error {
	scanLimit, listCap := b.scanLimit, b.listCap
	// Area strings, then the source's name, go to the end of the blob.
	blob := s.blob
	areaRefs := make([]byte, 0, len(s.areas)*areaSize)
	for _, a := range s.areas {
		for _, f := range [4]string{a.country, a.code, a.subcountry, a.region} {
			areaRefs = binary.LittleEndian.AppendUint32(areaRefs, uint32(len(blob)))
			areaRefs = binary.LittleEndian.AppendUint32(areaRefs, uint32(len(f)))
			blob = append(blob, f...)
		}
	}
	sourceOff := len(blob)
	blob = append(blob, b.source.Name...)
	if uint64(len(blob)) > math.MaxUint32 {
		return fmt.Errorf("dataset too large: %d bytes of strings", len(blob))
	}
	heavyRefs := make([]byte, 0, len(heavy)*heavySize)
	var lists []byte
	for _, h := range heavy {
		for _, v := range [...]uint32{h.prefixOff, h.prefixLen, h.exactLo, h.exactHi, uint32(len(lists) / 4), uint32(len(h.list))} {
			heavyRefs = binary.LittleEndian.AppendUint32(heavyRefs, v)
		}
		for _, i := range h.list {
			lists = binary.LittleEndian.AppendUint32(lists, i)
		}
	}

	var hdr [headerSize]byte
	copy(hdr[:], magic)
	put32 := func(off int, v uint32) { binary.LittleEndian.PutUint32(hdr[off:], v) }
	put64 := func(off int, v uint64) { binary.LittleEndian.PutUint64(hdr[off:], v) }
	put32(hVersion, version)
	put32(hListCap, uint32(listCap))
	put32(hCount, uint32(s.count))
	put32(hAreas, uint32(len(s.areas)))
	put32(hHeavy, uint32(len(heavy)))
	put32(hScanLimit, uint32(scanLimit))
	put64(hImported, uint64(time.Now().UnixNano()))
	put64(hSourceSize, uint64(max(b.source.Size, 0)))
	put32(hSourceOff, uint32(sourceOff))
	put32(hSourceLen, uint32(len(b.source.Name)))
	off := uint64(headerSize)
	for _, sec := range []struct {
		field int
		data  []byte
	}{{hRecordsOff, s.records}, {hAreasOff, areaRefs}, {hHeavyOff, heavyRefs}, {hListsOff, lists}, {hTrieOff, trie}, {hBlobOff, blob}} {
		put64(sec.field, off)
		off += uint64(len(sec.data))
	}
	put64(hBlobLen, uint64(len(blob)))
	put64(hListsLen, uint64(len(lists)))
	put64(hTrieLen, uint64(len(trie)))

	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	for _, sec := range [][]byte{s.records, areaRefs, heavyRefs, lists, trie, blob} {
		if _, err := bw.Write(sec); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	put32(hCRC, crc.Sum32())
	if _, err := w.Seek(0, io.SeekStart); err != nil {
		return err
	}
	_, err := w.Write(hdr[:])
	return err
}

// readInto reads r into b. Reading (parsing, decoding, folding) runs on its
// own goroutine, handing batches of cities over, so that it and the copying
// into b use two cores.
func readInto(ctx context.Context, r search.CityReader, b *builder) (int, error) {
	const batchSize = 4096
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := make(chan []search.City, 4)
	free := make(chan []search.City, 5)
	for range cap(free) {
		free <- make([]search.City, 0, batchSize)
	}
	var n int
	var readErr error
	go func() {
		defer close(full)
		batch := <-free
		n, readErr = search.Each(ctx, r, func(c *search.City) error {
			batch = append(batch, *c)
			if len(batch) < batchSize {
				return nil
			}
			select {
			case full <- batch:
			case <-ctx.Done():
				return ctx.Err()
			}
			select {
			case batch = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		})
		if readErr == nil && len(batch) > 0 {
			full <- batch
		}
	}()
	var addErr error
	for batch := range full {
		for i := range batch {
			if addErr == nil {
				addErr = b.add(&batch[i])
			}
		}
		if addErr != nil {
			cancel() // stop the reader; drain until it closes full
		}
		clear(batch)
		free <- batch[:0]
	}
	if addErr != nil {
		return n, addErr
	}
	return n, readErr
}

// buildFile reads r into a snapshot file at path (which must not exist).
func buildFile(ctx context.Context, r search.CityReader, path string, b build, log *slog.Logger) (search.LoadStats, error) {
	start := time.Now()
	lap := func() time.Duration {
		now := time.Now()
		d := now.Sub(start)
		start = now
		return d
	}
	bld := newBuilder()
	n, err := readInto(ctx, r, bld)
	read := lap()
	stats := search.LoadStats{Read: n}
	if err != nil {
		return stats, err
	}
	b.enter(search.PhaseSorting)
	s, err := bld.sorted(ctx)
	if err != nil {
		return stats, err
	}
	stats.Stored = s.count
	bld = nil // let the unsorted copy go before the lists are built
	sorted := lap()
	b.enter(search.PhaseIndexing)
	// The typo trie is one pass over the keys: it runs beside the two
	// workers of precompute, which rarely keep both cores busy to the end.
	var trie []byte
	trieDone := make(chan struct{})
	go func() {
		defer close(trieDone)
		trie = buildTrie(s.count, s.keySlug, trieDepth)
	}()
	heavy := s.precompute(b.scanLimit, b.listCap)
	<-trieDone
	ranked := lap()
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	b.enter(search.PhaseWriting)
	f, err := createFile(path)
	if err != nil {
		return stats, err
	}
	if err := s.write(f, heavy, trie, b); err != nil {
		f.Close()
		return stats, fileError("write", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return stats, fileError("sync", path, err)
	}
	log.Debug("snapshot built", "cities", s.count, "heavy_prefixes", len(heavy),
		"read", read, "sort", sorted, "index", ranked, "write", lap())
	return stats, f.Close()
}

// snapshotFile is what buildFile writes a snapshot to: an *os.File, or in
// tests a file that fails as a full disk does.
type snapshotFile interface {
	io.WriteSeeker
	Sync() error
	Close() error
}

// createFile creates the new snapshot file at path, which must not exist.
var createFile = func(path string) (snapshotFile, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
}

// fileError names op and path in err, unless err is the file's own error
// (an *fs.PathError), which names them already: "write PATH: no space left
// on device", not "write PATH: write PATH: …".
func fileError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}
