package embedded

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// builder turns a stream of cities into the sections of a snapshot. It
// keeps each city as a 32-byte record plus its slug and name in one arena,
// so that a dataset of millions of cities fits in a few hundred megabytes
// while it is sorted.
type builder struct {
	records []byte
	arena   []byte
	areas   []area
	areaIdx map[area]uint32
	count   int
}

func newBuilder() *builder {
	return &builder{areaIdx: make(map[area]uint32)}
}

func (b *builder) add(c *search.City) error {
	if len(c.Slug) > math.MaxUint16 || len(c.Name) > math.MaxUint16 {
		return fmt.Errorf("%w: name of %d bytes is too long", search.ErrInvalidCity, len(c.Name))
	}
	a := area{country: c.Country, code: c.CountryCode, subcountry: c.Subcountry, region: c.Region}
	ai, ok := b.areaIdx[a]
	if !ok {
		ai = uint32(len(b.areas))
		b.areas = append(b.areas, a)
		b.areaIdx[a] = ai
	}
	if uint64(len(b.arena))+uint64(len(c.Slug))+uint64(len(c.Name)) > math.MaxUint32 {
		return fmt.Errorf("dataset too large: more than 4 GiB of names")
	}
	var r [recordSize]byte
	binary.LittleEndian.PutUint32(r[rSlugOff:], uint32(len(b.arena)))
	binary.LittleEndian.PutUint16(r[rSlugLen:], uint16(len(c.Slug)))
	binary.LittleEndian.PutUint16(r[rNameLen:], uint16(len(c.Name)))
	binary.LittleEndian.PutUint32(r[rArea:], ai)
	binary.LittleEndian.PutUint32(r[rID:], c.ID)
	pop := c.Population
	pop = max(0, min(pop, math.MaxUint32))
	binary.LittleEndian.PutUint32(r[rPop:], uint32(pop))
	if c.HasLocation {
		binary.LittleEndian.PutUint32(r[rLat:], uint32(fixedDegrees(c.Lat)))
		binary.LittleEndian.PutUint32(r[rLon:], uint32(fixedDegrees(c.Lon)))
		binary.LittleEndian.PutUint32(r[rFlags:], flagLocation)
	}
	b.records = append(b.records, r[:]...)
	b.arena = append(b.arena, c.Slug...)
	b.arena = append(b.arena, c.Name...)
	b.count++
	return nil
}

// unsorted views the collected records as a snapshot, so that sorting
// compares records with the very functions that queries use.
func (b *builder) unsorted() *snapshot {
	return &snapshot{records: b.records, blob: b.arena, areas: b.areas, count: b.count}
}

// sorted sorts the records by slug (ties in rank order), drops duplicates
// (same slug and area; the first, most populous, stays) and lays records
// and strings out again in that order, so that neighbours in a prefix range
// are neighbours in memory.
func (b *builder) sorted(ctx context.Context) (*snapshot, error) {
	src := b.unsorted()
	perm := make([]uint32, src.count)
	for i := range perm {
		perm[i] = uint32(i)
	}
	slices.SortFunc(perm, func(i, j uint32) int {
		if c := bytes.Compare(src.slug(i), src.slug(j)); c != 0 {
			return c
		}
		return src.compare(aliasString(src.slug(i)), i, j)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dst := &snapshot{
		records: make([]byte, 0, len(b.records)),
		blob:    make([]byte, 0, len(b.arena)),
		areas:   b.areas,
	}
	seen := make(map[uint32]struct{})
	for k := 0; k < len(perm); {
		run := k + 1
		for run < len(perm) && bytes.Equal(src.slug(perm[run]), src.slug(perm[k])) {
			run++
		}
		clear(seen)
		for _, i := range perm[k:run] {
			r := src.rec(i)
			a := le32(r, rArea)
			if _, dup := seen[a]; dup {
				continue
			}
			seen[a] = struct{}{}
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
	return dst, nil
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
	var heavy []heavyBuild
	// base orders records with a prefix that no slug equals: no boost.
	base := func(i, j uint32) int { return s.compare("", i, j) }
	var walk func(lo, hi, depth int) []uint32
	walk = func(lo, hi, depth int) []uint32 {
		if hi-lo <= scanLimit {
			idx := make([]uint32, 0, hi-lo)
			for i := lo; i < hi; i++ {
				idx = append(idx, uint32(i))
			}
			slices.SortFunc(idx, base)
			return idx[:min(len(idx), listCap)]
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
			best = mergeTop(best, walk(c, e, depth+1), listCap, base)
			c = e
		}
		if depth > 0 {
			if p := s.slug(uint32(lo))[:depth]; p[depth-1] != '-' {
				heavy = append(heavy, heavyBuild{
					prefixOff: le32(s.rec(uint32(lo)), rSlugOff), prefixLen: uint32(depth),
					exactLo: uint32(lo), exactHi: uint32(exactHi), list: best,
				})
			}
		}
		exact := make([]uint32, 0, min(exactHi-lo, listCap))
		for i := lo; i < exactHi && len(exact) < listCap; i++ {
			exact = append(exact, uint32(i))
		}
		return mergeTop(exact, best, listCap, base)
	}
	walk(0, s.count, 0)
	return heavy
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

// write writes the snapshot with its precomputed prefixes to w, which must
// be positioned at its start; it seeks back to fill the header last.
func (s *snapshot) write(w io.WriteSeeker, heavy []heavyBuild, scanLimit, listCap int) error {
	// Area strings go to the end of the blob.
	blob := s.blob
	areaRefs := make([]byte, 0, len(s.areas)*areaSize)
	for _, a := range s.areas {
		for _, f := range [4]string{a.country, a.code, a.subcountry, a.region} {
			areaRefs = binary.LittleEndian.AppendUint32(areaRefs, uint32(len(blob)))
			areaRefs = binary.LittleEndian.AppendUint32(areaRefs, uint32(len(f)))
			blob = append(blob, f...)
		}
	}
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
	off := uint64(headerSize)
	for _, sec := range []struct {
		field int
		data  []byte
	}{{hRecordsOff, s.records}, {hAreasOff, areaRefs}, {hHeavyOff, heavyRefs}, {hListsOff, lists}, {hBlobOff, blob}} {
		put64(sec.field, off)
		off += uint64(len(sec.data))
	}
	put64(hBlobLen, uint64(len(blob)))
	put64(hListsLen, uint64(len(lists)))

	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	crc := crc32.New(crcTable)
	bw := bufio.NewWriterSize(io.MultiWriter(w, crc), 1<<20)
	for _, sec := range [][]byte{s.records, areaRefs, heavyRefs, lists, blob} {
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

// buildFile reads r into a snapshot file at path (which must not exist).
func buildFile(ctx context.Context, r search.CityReader, path string, scanLimit, listCap int) (search.LoadStats, error) {
	b := newBuilder()
	n, err := search.Each(ctx, r, b.add)
	stats := search.LoadStats{Read: n}
	if err != nil {
		return stats, err
	}
	s, err := b.sorted(ctx)
	if err != nil {
		return stats, err
	}
	stats.Stored = s.count
	b = nil // let the unsorted copy go before the lists are built
	heavy := s.precompute(scanLimit, listCap)
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return stats, err
	}
	if err := s.write(f, heavy, scanLimit, listCap); err != nil {
		f.Close()
		return stats, fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return stats, fmt.Errorf("sync %s: %w", path, err)
	}
	return stats, f.Close()
}
