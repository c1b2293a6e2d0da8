package search

import "runtime"

// SameLine reports whether a and b are one place, or would read the same
// in a list of suggestions: the same name, subcountry and country, or the
// same Key. The Service lists each such group once (see Query.Lines).
func SameLine(a, b *City) bool { return sameLine(a, b) }

// LinesApart reports whether found holds at least n groups of cities that
// read differently (see SameLine): cities in no chain of SameLine pairs
// with one another. However found is ordered, a list that takes each city
// unless it reads the same as one it took already takes the first city of
// each group, so at least n, or every city of found when it holds fewer
// than n. It is how a store honours Query.Lines.
func LinesApart(found []Found, n int) bool {
	if len(found) < n {
		return false
	}
	// The names that sameLine compares are mostly in no cache yet (see
	// first): read together here, rather than one miss after another in
	// the loop below.
	var ahead byte
	for i := range found {
		ahead |= first(found[i].Slug) | first(found[i].Name)
	}
	runtime.KeepAlive(ahead) // so that the reads stay
	// Union-find over found, by index: groups falls by one at each union,
	// and once it is below n it stays there.
	var buf [MaxLimit]int
	parent := buf[:0]
	if len(found) > len(buf) {
		parent = make([]int, 0, len(found))
	}
	for i := range found {
		parent = append(parent, i)
	}
	root := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	groups := len(found)
	for i := range found {
		for j := i + 1; j < len(found); j++ {
			if !sameLine(&found[i].City, &found[j].City) {
				continue
			}
			if ri, rj := root(i), root(j); ri != rj {
				parent[ri] = rj
				if groups--; groups < n {
					return false
				}
			}
		}
	}
	return true
}
