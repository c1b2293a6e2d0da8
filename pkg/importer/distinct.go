package importer

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// distinctReader passes on the cities of another reader less the
// duplicates that the store would drop, as they arrive, so that an import
// holds about one city per distinct search.Key rather than one per row: a
// file of one row repeated a hundred million times costs one city.
//
// Of the cities with one Key, every store keeps the first in
// search.BySlug's order (see search.KeepFirst). A city is passed on when
// it is the first of its Key or ranks strictly before the best one passed
// on so far; any other is one that the store would drop, behind a city it
// already has. The store thus receives the city it would have kept, before
// every other of its Key that it receives, and keeps it: the same dataset,
// byte for byte, whatever the store does with ties. Only a file whose
// duplicates each outrank the last still costs a city a row (bounded by
// Request.MaxRows).
//
// It gives the cities without an id their derived ids, as the store would
// (see search.DerivedIDs), so that their Keys are hashed and looked up once,
// in one table for both.
type distinctReader struct {
	r     search.CityReader
	keys  keyTable
	found []keyHash // of the cities being looked up
	drops int
}

// Dropped is how many cities the reader dropped as duplicates.
func (d *distinctReader) Dropped() int { return d.drops }

// ReadBatch appends the next cities of the reader that are not duplicates
// to dst (see search.CityReader).
func (d *distinctReader) ReadBatch(dst []search.City) ([]search.City, error) {
	n := len(dst)
	for len(dst) == n {
		all, err := d.r.ReadBatch(dst)
		if err != nil {
			d.keys = keyTable{withID: d.keys.withID, derive: d.keys.derive} // the store builds next: let the keys go first
			return dst, err
		}
		kept := all[:n]
		for i := n; i < len(all); i += lookAhead {
			group := all[i:min(i+lookAhead, len(all))]
			d.keys.locateAll(group, &d.found)
			for j := range group {
				switch {
				case !d.keys.betterAt(&group[j], d.found[j]):
					d.drops++
				case len(kept) == i+j: // no drop yet: the city is in its place
					kept = kept[:len(kept)+1]
				default:
					kept = append(kept, group[j])
				}
			}
		}
		clear(all[len(kept):]) // let the dropped cities go
		dst = kept
	}
	return dst, nil
}

// lookAhead is how many cities keyTable.locateAll looks up at once: the
// slots of its table are cache misses, and misses that do not wait on each
// other overlap, as many as fit in the caches.
const lookAhead = 256

// keyTable remembers, for each search.Key met, what search.BySlug looks at
// in the best city of that Key passed on so far: its name, population and
// id. The keys are packed in large byte blocks and the rest of a Key (its
// country and region) is numbered once, as an area, so that a distinct city
// costs some 80 bytes and nothing the garbage collector has to scan.
type keyTable struct {
	// withID makes a city's id part of its Key: for cities whose region is
	// yet to be named, by their id among others (see geonamesRegions).
	withID bool
	// derive gives the cities without an id their derived ids, and holds
	// the last entry of each of their Keys' hashes with the id, not in
	// heads; it is for the last reader before the store only, the Keys
	// being final there (see search.DerivedIDs).
	derive bool
	ids    search.DerivedIDs
	heads  headTable // the last entry of a hash
	// entries are in blocks of entryBlock, so that millions of them
	// never copy as they grow.
	entries [][]keyEntry
	n       int32 // entries held
	blocks  [][]byte
	areas   search.AreaNumbers // the part of a search.Key besides its slug
}

// keyEntry is one Key: its slug and the name of its best city, each after
// its length as a uvarint, at blocks[block][off:], and what else BySlug
// compares.
type keyEntry struct {
	next       int32 // the previous entry of the same hash, or -1
	area       uint32
	block, off uint32
	id         uint32
	population int64
}

// entryBlock is how many entries a block of keyTable.entries holds.
const entryBlock = 1 << 14

// entry returns entry i.
func (t *keyTable) entry(i int32) *keyEntry { return &t.entries[i/entryBlock][i%entryBlock] }

// keyBlock is the size of a block of keys; a longer key gets a block of
// its own.
const keyBlock = 1 << 20

var keySeed = maphash.MakeSeed()

// keyHash is where a city's Key is in a keyTable: its area and its hash,
// search.KeyHash when derived is set (the city's id is derived).
type keyHash struct {
	area    uint32
	derived bool
	hash    uint64
}

// locate returns where c's Key is, numbering its area if it is new.
func (t *keyTable) locate(c *search.City) keyHash {
	area, _ := t.areas.Number(c)
	if t.derive && c.ID == 0 {
		return keyHash{area, true, search.KeyHash(c)}
	}
	h := maphash.String(keySeed, c.Slug) ^ (uint64(area)+1)*0x9e3779b97f4a7c15
	if t.withID {
		h ^= (uint64(c.ID) + 1) * 0xc2b2ae3d27d4eb4f
	}
	return keyHash{area: area, hash: h}
}

// locateAll sets *found to where the Keys of cities are, and touches the
// slots of the table they probe first, all before any is looked up, so
// that their cache misses overlap instead of following one another.
func (t *keyTable) locateAll(cities []search.City, found *[]keyHash) {
	*found = (*found)[:0]
	for i := range cities {
		*found = append(*found, t.locate(&cities[i]))
	}
	// A loop of its own: a few instructions a slot, so that the processor
	// has many loads in flight.
	for _, k := range *found {
		if k.derived {
			t.ids.Touch(k.hash)
		} else {
			t.heads.touch(k.hash)
		}
	}
}

// better reports whether c is the first city of its Key, or ranks strictly
// before the best one of its Key so far (see search.BySlug), and then
// remembers it as the best.
func (t *keyTable) better(c *search.City) bool { return t.betterAt(c, t.locate(c)) }

// betterAt is better of c, whose Key is at k (see locate), and gives c its
// derived id when k says so.
func (t *keyTable) betterAt(c *search.City, k keyHash) bool {
	area, h := k.area, k.hash
	var head int32
	var last *int32 // the head plus one, held with the derived id
	if k.derived {
		c.ID, last = t.ids.Derive(h)
		head = *last - 1
	} else {
		head = t.heads.head(h)
	}
	for i := head; i >= 0; i = t.entry(i).next {
		e := t.entry(i)
		slug, name := t.text(e)
		if e.area != area || string(slug) != c.Slug || t.withID && e.id != c.ID {
			continue
		}
		best := *c // the same Key: only the name, population and id differ
		best.Population, best.ID = e.population, e.id
		if string(name) != c.Name {
			best.Name = string(name)
		}
		if search.BySlug(c, &best) >= 0 {
			return false
		}
		e.population, e.id = c.Population, c.ID
		if string(name) != c.Name {
			t.write(e, c)
		}
		return true
	}
	if t.n%entryBlock == 0 {
		t.entries = append(t.entries, make([]keyEntry, entryBlock))
	}
	e := t.entry(t.n)
	*e = keyEntry{next: head, area: area, population: c.Population, id: c.ID}
	if last != nil {
		*last = t.n + 1
	} else {
		t.heads.set(h, t.n)
	}
	t.n++
	t.write(e, c)
	return true
}

// write stores the slug and name of c as those of entry e.
func (t *keyTable) write(e *keyEntry, c *search.City) {
	size := 2*binary.MaxVarintLen32 + len(c.Slug) + len(c.Name)
	if len(t.blocks) == 0 || len(t.blocks[len(t.blocks)-1])+size > cap(t.blocks[len(t.blocks)-1]) {
		t.blocks = append(t.blocks, make([]byte, 0, max(keyBlock, size)))
	}
	b := &t.blocks[len(t.blocks)-1]
	e.block, e.off = uint32(len(t.blocks)-1), uint32(len(*b))
	*b = append(binary.AppendUvarint(*b, uint64(len(c.Slug))), c.Slug...)
	*b = append(binary.AppendUvarint(*b, uint64(len(c.Name))), c.Name...)
}

// text returns the slug and name that entry e holds.
func (t *keyTable) text(e *keyEntry) (slug, name []byte) {
	b := t.blocks[e.block][e.off:]
	n, k := binary.Uvarint(b)
	slug, b = b[k:k+int(n)], b[k+int(n):]
	n, k = binary.Uvarint(b)
	return slug, b[k : k+int(n)]
}
