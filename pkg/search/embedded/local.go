package embedded

import (
	"encoding/binary"
	"fmt"
	"math"

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
//	            language tag, its flags, the length of its name), then
//	            the tag and the name
//
// Queries never read them: they are copied into the cities that searches
// return, as alternate names are.
const localHead = 4

// localFormer is the flag of a former name (search.LocalName.Former).
const localFormer = 1

// appendLocalNames appends names to a locals section: the only writer of
// its layout. A tag or name too long for its head is an invalid city.
func appendLocalNames(dst []byte, names []search.LocalName) ([]byte, error) {
	for _, n := range names {
		if len(n.Lang) > math.MaxUint8 || len(n.Name) > math.MaxUint16 {
			return dst, fmt.Errorf("%w: local name of %d bytes in a language of %d is too long", search.ErrInvalidCity, len(n.Name), len(n.Lang))
		}
		var flags byte
		if n.Former {
			flags |= localFormer
		}
		dst = append(dst, byte(len(n.Lang)), flags)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(n.Name)))
		dst = append(append(dst, n.Lang...), n.Name...)
	}
	return dst, nil
}

// readLocalName reads the name at the start of b, the rest of a locals
// section, and its size: the only reader of its layout. The strings alias
// b.
func readLocalName(b []byte) (search.LocalName, int, error) {
	if len(b) < localHead {
		return search.LocalName{}, 0, fmt.Errorf("%w: local name cut short", errCorrupt)
	}
	langLen, flags, nameLen := int(b[0]), b[1], int(le16(b, 2))
	size := localHead + langLen + nameLen
	if flags&^localFormer != 0 || len(b) < size {
		return search.LocalName{}, 0, fmt.Errorf("%w: local name cut short or of unknown flags", errCorrupt)
	}
	return search.LocalName{
		Lang:   aliasString(b[localHead : localHead+langLen]),
		Name:   aliasString(b[localHead+langLen : size]),
		Former: flags&localFormer != 0,
	}, size, nil
}

// localBuild is where the local names of the cities being built are, as
// read: each city's (by its index as read) are locals[span[0]:span[1]].
type localBuild struct {
	locals []byte
	spans  map[uint32][2]uint32
}

// add keeps the local names of the city read as number i.
func (lb *localBuild) add(i uint32, names []search.LocalName) error {
	if len(names) == 0 {
		return nil
	}
	start := len(lb.locals)
	var err error
	if lb.locals, err = appendLocalNames(lb.locals, names); err != nil {
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
		for off := int(first); off < int(next); {
			name, size, err := readLocalName(locals[off:next])
			if err != nil {
				return err
			}
			s.localNames = append(s.localNames, name)
			off += size
		}
		s.localAt[rec] = uint64(start)<<32 | uint64(len(s.localNames)-start)
	}
	if _, _, end := readAltIndex(index, n-1); int(end) != len(locals) {
		return fmt.Errorf("%w: local names end at %d of %d bytes", errCorrupt, end, len(locals))
	}
	return nil
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
