package embedded

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/cityfinder/cityfinder/pkg/search"
)

// Local names (search.LocalName) go in two sections of their own, which
// are empty when no city has any, so that they cost nothing then:
//
//	localIndex  altIndexSize bytes for each city with local names: its
//	            record, and the offset in locals of its first name; then
//	            a sentinel entry, of record math.MaxUint32, that ends the
//	            last city's names
//	locals      each name: its head (localHead bytes: the length of its
//	            language tag, its flags, and the length of its name or,
//	            with localRef, which of its city's names it is), then the
//	            tag and, without localRef, the name
//
// Most local names are also the city's name or one of its alternate
// names (an import adds them there, see search.City.LocalNames): those
// are a reference, not a copy. Queries never read the sections: they are
// copied into the cities that searches return, as alternate names are.
const localHead = 4

// Flags of a local name.
const (
	// localFormer marks a former name (search.LocalName.Former).
	localFormer = 1
	// localRef says that the name is its city's: Name for 0, else
	// AltNames[ref-1].
	localRef = 2
)

// appendLocalNames appends the local names of c to a locals section: the
// only writer of its layout. A tag or name too long for its head is an
// invalid city.
func appendLocalNames(dst []byte, c *search.City) ([]byte, error) {
	for _, n := range c.LocalNames {
		if len(n.Lang) > math.MaxUint8 || len(n.Name) > math.MaxUint16 {
			return dst, fmt.Errorf("%w: local name of %d bytes in a language of %d is too long", search.ErrInvalidCity, len(n.Name), len(n.Lang))
		}
		var flags byte
		if n.Former {
			flags |= localFormer
		}
		size, inline := len(n.Name), n.Name
		if ref, ok := cityNameRef(c, n.Name); ok {
			flags |= localRef
			size, inline = ref, ""
		}
		dst = append(dst, byte(len(n.Lang)), flags)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(size))
		dst = append(append(dst, n.Lang...), inline...)
	}
	return dst, nil
}

// cityNameRef returns which of c's names name is (see localRef).
func cityNameRef(c *search.City, name string) (int, bool) {
	if name == c.Name {
		return 0, true
	}
	if i := slices.Index(c.AltNames, name); i >= 0 && i < math.MaxUint16 {
		return i + 1, true
	}
	return 0, false
}

// readLocalName reads the name at the start of b, the rest of a locals
// section, of the city whose name and alternate names these are, and its
// size: the only reader of its layout. The strings alias b or the city's.
func readLocalName(b []byte, name string, alts []string) (search.LocalName, int, error) {
	if len(b) < localHead {
		return search.LocalName{}, 0, fmt.Errorf("%w: local name cut short", errCorrupt)
	}
	langLen, flags, n := int(b[0]), b[1], int(le16(b, 2))
	size := localHead + langLen
	if flags&localRef == 0 {
		size += n
	}
	if flags&^(localFormer|localRef) != 0 || len(b) < size {
		return search.LocalName{}, 0, fmt.Errorf("%w: local name cut short or of unknown flags", errCorrupt)
	}
	l := search.LocalName{Lang: aliasString(b[localHead : localHead+langLen]), Former: flags&localFormer != 0}
	switch {
	case flags&localRef == 0:
		l.Name = aliasString(b[localHead+langLen : size])
	case n == 0:
		l.Name = name
	case n <= len(alts):
		l.Name = alts[n-1]
	default:
		return search.LocalName{}, 0, fmt.Errorf("%w: local name of an alternate name its city does not have", errCorrupt)
	}
	return l, size, nil
}

// localBuild is where the local names of the cities being built are, as
// read: each city's (by its index as read) are locals[span[0]:span[1]].
type localBuild struct {
	locals []byte
	spans  map[uint32][2]uint32
}

// add keeps the local names of c, the city read as number i.
func (lb *localBuild) add(i uint32, c *search.City) error {
	if len(c.LocalNames) == 0 {
		return nil
	}
	start := len(lb.locals)
	var err error
	if lb.locals, err = appendLocalNames(lb.locals, c); err != nil {
		lb.locals = lb.locals[:start]
		return err
	}
	if uint64(len(lb.locals)) > math.MaxUint32 {
		return fmt.Errorf("dataset too large: more than 4 GiB of local names")
	}
	if lb.spans == nil {
		lb.spans = make(map[uint32][2]uint32)
	}
	lb.spans[i] = [2]uint32{uint32(start), uint32(len(lb.locals))}
	return nil
}

// lay appends the local names of the city read as number i, if any, as
// those of record rec, to the sections being written.
func (lb *localBuild) lay(out *built, i, rec uint32) {
	span, ok := lb.spans[i]
	if !ok {
		return
	}
	out.localIndex = appendAltIndex(out.localIndex, rec, uint32(len(out.locals)))
	out.locals = append(out.locals, lb.locals[span[0]:span[1]]...)
}

// end closes the localIndex section, when it has an entry.
func (lb *localBuild) end(out *built) {
	if len(out.localIndex) > 0 {
		out.localIndex = appendAltIndex(out.localIndex, math.MaxUint32, uint32(len(out.locals)))
	}
}

// parseLocalNames reads the local names of the cities that have some.
func (s *snapshot) parseLocalNames(index, locals []byte) error {
	if len(index) == 0 {
		if len(locals) != 0 {
			return fmt.Errorf("%w: local names without an index", errCorrupt)
		}
		return nil
	}
	if len(index)%altIndexSize != 0 || len(index) < 2*altIndexSize {
		return fmt.Errorf("%w: local names index of %d bytes", errCorrupt, len(index))
	}
	n := len(index)/altIndexSize - 1
	s.localAt = make(map[uint32]uint64, n)
	prev := -1
	for i := range n {
		rec, first, next := readAltIndex(index, i)
		if int(rec) <= prev || int(rec) >= s.count || s.isAlt(rec) || first >= next || int(next) > len(locals) {
			return fmt.Errorf("%w: local names of city %d", errCorrupt, i)
		}
		prev = int(rec)
		start := len(s.localNames)
		cityName, alts := aliasString(s.name(rec)), s.altNamesOf(rec)
		for off := int(first); off < int(next); {
			local, size, err := readLocalName(locals[off:next], cityName, alts)
			if err != nil {
				return err
			}
			s.localNames = append(s.localNames, local)
			off += size
		}
		s.localAt[rec] = uint64(start)<<32 | uint64(len(s.localNames)-start)
	}
	if _, _, end := readAltIndex(index, n-1); int(end) != len(locals) {
		return fmt.Errorf("%w: local names end at %d of %d bytes", errCorrupt, end, len(locals))
	}
	return nil
}

// altNamesOf returns the alternate names of record c, a city's.
func (s *snapshot) altNamesOf(c uint32) []string {
	if !s.rec(c).hasAltNames() {
		return nil
	}
	at := s.altAt[c]
	first, n := at>>32, at&math.MaxUint32
	return s.altNames[first : first+n : first+n]
}

// fillLocalNames gives f the local names of record c, if it has any.
func (s *snapshot) fillLocalNames(f *search.City, c uint32) {
	f.LocalNames = nil
	if s.localAt == nil {
		return
	}
	if at, ok := s.localAt[c]; ok {
		first, n := at>>32, at&math.MaxUint32
		f.LocalNames = s.localNames[first : first+n : first+n]
	}
}
