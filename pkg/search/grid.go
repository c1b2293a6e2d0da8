package search

import (
	"math"
	"slices"
)

// Grid is a spatial index of the cities of a dataset that have a location,
// for stores that hold their cities in memory (see FindNear): the cities'
// handles sorted by cell, a cell being GridDegrees of latitude by
// GridDegrees of longitude, row after row from the south, so that the
// cells of one row of a box are one range. It costs four bytes a city,
// plus a sort when it is built.
type Grid struct {
	items []uint32             // handles, sorted by cell
	cells []uint32             // the cell of each of items, for the binary searches
	rows  [gridRows + 1]uint32 // rows[r] is where row r starts in items
}

// GridDegrees is the side of a Grid's cells: 11 km of latitude, a third of
// the smallest area a reverse lookup scans.
const GridDegrees = 0.1

const (
	gridRows = 1800 // 180 / GridDegrees
	gridCols = 3600
)

// gridCell returns the row and column of a point.
func gridCell(lat, lon float64) (row, col uint32) {
	r := int(math.Floor((lat + 90) / GridDegrees))
	c := int(math.Floor((lon + 180) / GridDegrees))
	return uint32(min(max(r, 0), gridRows-1)), uint32(min(max(c, 0), gridCols-1))
}

// NewGrid indexes n items: loc gives the location of item i, ok false for
// one without, which the grid leaves out.
func NewGrid(n int, loc func(i uint32) (lat, lon float64, ok bool)) *Grid {
	keys := make([]uint64, 0, n)
	for i := range uint32(n) {
		if lat, lon, ok := loc(i); ok {
			r, c := gridCell(lat, lon)
			keys = append(keys, uint64(r*gridCols+c)<<32|uint64(i))
		}
	}
	radixSortHigh(keys)
	g := &Grid{items: make([]uint32, len(keys)), cells: make([]uint32, len(keys))}
	for i, k := range keys {
		g.items[i], g.cells[i] = uint32(k), uint32(k>>32)
	}
	row := uint32(0)
	for i, cell := range g.cells {
		for row <= cell/gridCols {
			g.rows[row] = uint32(i)
			row++
		}
	}
	for ; row <= gridRows; row++ {
		g.rows[row] = uint32(len(g.items))
	}
	return g
}

// Visit calls visit with every item in the cells that box b touches
// (items a little outside b among them), each once, until visit returns
// false.
func (g *Grid) Visit(b Box, visit func(item uint32) bool) {
	r0, c0 := gridCell(b.MinLat, b.MinLon)
	r1, c1 := gridCell(b.MaxLat, b.MaxLon)
	for r := r0; r <= r1; r++ {
		lo, hi := g.rows[r], g.rows[r+1]
		cells := g.cells[lo:hi]
		i, _ := slices.BinarySearch(cells, r*gridCols+c0)
		j, _ := slices.BinarySearch(cells, r*gridCols+c1+1)
		for _, it := range g.items[lo+uint32(i) : lo+uint32(j)] {
			if !visit(it) {
				return
			}
		}
	}
}

// IDIndex finds an item by id: the handles of the items sorted by id.
type IDIndex struct {
	items []uint32
	ids   []uint32
}

// NewIDIndex indexes n items, item i having id id(i); items of id 0 are
// left out. Of items of the same id, Find returns the first by handle.
func NewIDIndex(n int, id func(i uint32) uint32) *IDIndex {
	keys := make([]uint64, 0, n)
	for i := range uint32(n) {
		if v := id(i); v != 0 {
			keys = append(keys, uint64(v)<<32|uint64(i))
		}
	}
	radixSortHigh(keys)
	x := &IDIndex{items: make([]uint32, len(keys)), ids: make([]uint32, len(keys))}
	for i, k := range keys {
		x.items[i], x.ids[i] = uint32(k), uint32(k>>32)
	}
	return x
}

// Find returns the item of id, ok false when there is none.
func (x *IDIndex) Find(id uint32) (item uint32, ok bool) {
	i, found := slices.BinarySearch(x.ids, id)
	if !found {
		return 0, false
	}
	return x.items[i], true
}

// radixSortHigh sorts keys by their high 32 bits, keeping the order of the
// low bits within each (an index in ascending order when keys were
// appended so): two passes of 16 bits, linear, where a comparison sort of
// millions of keys would slow the opening of a snapshot.
func radixSortHigh(keys []uint64) {
	tmp := make([]uint64, len(keys))
	src, dst := keys, tmp
	for shift := uint(32); shift < 64; shift += 16 {
		var count [1 << 16]int
		for _, k := range src {
			count[k>>shift&0xffff]++
		}
		pos := 0
		for i, c := range count {
			count[i], pos = pos, pos+c
		}
		for _, k := range src {
			d := k >> shift & 0xffff
			dst[count[d]] = k
			count[d]++
		}
		src, dst = dst, src
	}
	// two passes: the sorted keys are back in keys
}
