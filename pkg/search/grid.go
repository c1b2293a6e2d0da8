package search

import (
	"math"
	"math/bits"
)

// Grid is a spatial index of located cities, for stores that hold their
// cities in memory (see FindNear): the cities' handles sorted by cell, a
// cell being GridDegrees of latitude by GridDegrees of longitude, row
// after row from the south, so that the cells of one row of a box are one
// range. It costs four bytes a city and nothing more, even while it is
// built: the handles are placed by counting, and a cell is read from its
// city's location rather than kept beside it.
type Grid struct {
	items []uint32             // handles, by cell, then by handle
	rows  [gridRows + 1]uint32 // rows[r] is where row r starts in items
	loc   func(item uint32) (lat, lon float64, ok bool)
}

// GridDegrees is the side of a Grid's cells: 11 km of latitude, so that
// the first rounds of a reverse lookup (see FindNear) read a few cells.
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

// NewGrid indexes the items 0..n-1 that loc gives a location (ok), and
// reads their locations with loc from then on.
func NewGrid(n int, loc func(item uint32) (lat, lon float64, ok bool)) *Grid {
	g := &Grid{loc: loc}
	var count [gridRows + 1]uint32
	for i := range uint32(n) {
		if lat, lon, ok := loc(i); ok {
			r, _ := gridCell(lat, lon)
			count[r+1]++
		}
	}
	for r := 1; r <= gridRows; r++ {
		count[r] += count[r-1]
	}
	g.rows = count
	g.items = make([]uint32, count[gridRows])
	next := count // where the next item of each row goes
	for i := range uint32(n) {
		if lat, lon, ok := loc(i); ok {
			r, _ := gridCell(lat, lon)
			g.items[next[r]] = i
			next[r]++
		}
	}
	// Within each row, by column: a counting sort through a buffer as
	// long as the longest row.
	var cols [gridCols + 1]uint32
	var buf []uint32
	for r := range gridRows {
		row := g.items[g.rows[r]:g.rows[r+1]]
		if len(row) < 2 {
			continue
		}
		clear(cols[:])
		for _, it := range row {
			cols[g.col(it)+1]++
		}
		for c := 1; c <= gridCols; c++ {
			cols[c] += cols[c-1]
		}
		buf = append(buf[:0], row...)
		for _, it := range buf {
			c := g.col(it)
			row[cols[c]] = it
			cols[c]++
		}
	}
	return g
}

// col is the column of the cell of a located item.
func (g *Grid) col(item uint32) uint32 {
	lat, lon, _ := g.loc(item)
	_, c := gridCell(lat, lon)
	return c
}

// Visit calls visit with every item in the cells that box b touches
// (items a little outside b among them), each once, until visit returns
// false.
func (g *Grid) Visit(b Box, visit func(item uint32) bool) {
	r0, c0 := gridCell(b.MinLat, b.MinLon)
	r1, c1 := gridCell(b.MaxLat, b.MaxLon)
	for r := r0; r <= r1; r++ {
		row := g.items[g.rows[r]:g.rows[r+1]]
		i := g.firstAtCol(row, c0)
		j := i + g.firstAtCol(row[i:], c1+1)
		for _, it := range row[i:j] {
			if !visit(it) {
				return
			}
		}
	}
}

// firstAtCol returns the index of the first item of row in column c or
// after.
func (g *Grid) firstAtCol(row []uint32, c uint32) int {
	lo, hi := 0, len(row)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if g.col(row[m]) < c {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// IDIndex finds an item by id: a hash table of the items' handles, four
// to six bytes an item, that reads an item's id with the accessor it was
// built with (linear probing, at most three quarters full).
type IDIndex struct {
	slots []uint32 // handle+1 of an item, or 0 for an empty slot
	mask  uint32
	shift uint // of idSlot's product: 32 − log2(len(slots))
	id    func(item uint32) uint32
}

// NewIDIndex indexes the items 0..n-1 whose id (as id gives it) is not 0,
// and reads their ids with id from then on. Of items of the same id, Find
// returns the first.
func NewIDIndex(n int, id func(item uint32) uint32) *IDIndex {
	k := bits.Len(uint(n + n/3 + 1))
	size := uint32(1) << k
	x := &IDIndex{slots: make([]uint32, size), mask: size - 1, shift: uint(32 - k), id: id}
	for i := range uint32(n) {
		v := id(i)
		if v == 0 {
			continue
		}
		for s := x.slot(v); ; s = (s + 1) & x.mask {
			if x.slots[s] == 0 {
				x.slots[s] = i + 1
				break
			}
			if id(x.slots[s]-1) == v {
				break // a repeated id: the first stays
			}
		}
	}
	return x
}

// slot is where id's probe starts: Fibonacci hashing, the top bits of a
// product, as GeoNames ids come in dense runs.
func (x *IDIndex) slot(id uint32) uint32 { return (id * 2654435769) >> x.shift & x.mask }

// Find returns the item of id, ok false when there is none.
func (x *IDIndex) Find(id uint32) (item uint32, ok bool) {
	if id == 0 {
		return 0, false
	}
	for s := x.slot(id); ; s = (s + 1) & x.mask {
		h := x.slots[s]
		if h == 0 {
			return 0, false
		}
		if x.id(h-1) == id {
			return h - 1, true
		}
	}
}
