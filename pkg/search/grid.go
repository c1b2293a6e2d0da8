package search

import (
	"cmp"
	"math"
	"slices"
)

// Grid is a spatial index of located cities, for stores that hold their
// cities in memory (see FindNear and GridBuilder): the cities' handles
// sorted by cell, a cell being GridDegrees of latitude by
// GridDegrees of longitude, row after row from the south, so that the
// cells of one row of a box are one range. It costs four bytes a city,
// and a sort when it is built: the binary searches read an item's cell
// from its location, rather than from an array of cells as large again.
type Grid struct {
	items []uint32             // handles, sorted by cell
	rows  [gridRows + 1]uint32 // rows[r] is where row r starts in items
	loc   func(item uint32) (lat, lon float64)
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

// GridBuilder collects the items of a Grid.
type GridBuilder struct{ keys []uint64 }

// NewGridBuilder returns a builder with room for n items.
func NewGridBuilder(n int) *GridBuilder { return &GridBuilder{keys: make([]uint64, 0, n)} }

// Add adds item, located at lat, lon. Items are added in ascending order.
func (b *GridBuilder) Add(item uint32, lat, lon float64) {
	r, c := gridCell(lat, lon)
	b.keys = append(b.keys, uint64(r*gridCols+c)<<32|uint64(item))
}

// Grid returns the grid of the items added, which reads their locations
// with loc (as they were added); the builder is spent.
func (b *GridBuilder) Grid(loc func(item uint32) (lat, lon float64)) *Grid {
	keys := b.keys
	b.keys = nil
	radixSortHigh(keys)
	g := &Grid{items: make([]uint32, len(keys)), loc: loc}
	row := uint32(0)
	for i, k := range keys {
		g.items[i] = uint32(k)
		for cell := uint32(k >> 32); row <= cell/gridCols; row++ {
			g.rows[row] = uint32(i)
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
		row := g.items[g.rows[r]:g.rows[r+1]]
		col := func(item uint32, c uint32) int {
			_, ic := gridCell(g.loc(item))
			return cmp.Compare(ic, c)
		}
		i, _ := slices.BinarySearchFunc(row, c0, col)
		j, _ := slices.BinarySearchFunc(row, c1+1, col)
		for _, it := range row[i:j] {
			if !visit(it) {
				return
			}
		}
	}
}

// IDIndex finds an item by id: the handles of the items sorted by id, four
// bytes an item; the binary search reads an item's id with the accessor
// the index was built with.
type IDIndex struct {
	items []uint32
	id    func(item uint32) uint32
}

// IDIndexBuilder collects the items of an IDIndex.
type IDIndexBuilder struct{ keys []uint64 }

// NewIDIndexBuilder returns a builder with room for n items.
func NewIDIndexBuilder(n int) *IDIndexBuilder { return &IDIndexBuilder{keys: make([]uint64, 0, n)} }

// Add adds item, of id id (not 0). Items are added in ascending order: of
// items of the same id, Find returns the first added.
func (b *IDIndexBuilder) Add(item, id uint32) {
	b.keys = append(b.keys, uint64(id)<<32|uint64(item))
}

// Index returns the index of the items added, which reads their ids with
// id (as they were added); the builder is spent.
func (b *IDIndexBuilder) Index(id func(item uint32) uint32) *IDIndex {
	keys := b.keys
	b.keys = nil
	radixSortHigh(keys)
	x := &IDIndex{items: make([]uint32, len(keys)), id: id}
	for i, k := range keys {
		x.items[i] = uint32(k)
	}
	return x
}

// Find returns the item of id, ok false when there is none.
func (x *IDIndex) Find(id uint32) (item uint32, ok bool) {
	i, found := slices.BinarySearchFunc(x.items, id, func(item, id uint32) int { return cmp.Compare(x.id(item), id) })
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
