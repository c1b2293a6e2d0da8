package search

// Versioned is an optional capability of a Store: it numbers the contents
// that each dataset has had, so that what was computed from one of them (an
// encoded answer that the HTTP API keeps, see server.WithAnswerCache) can
// be told from what a newer one gives. A store that cannot tell cheaply
// when its data changed (MongoDB in query mode, where another process may
// import at any time) is not Versioned, and nothing is kept of its
// answers. A decorator is Versioned only when it passes Version on.
type Versioned interface {
	// Version returns the number of the content of dataset d that the
	// store answers from. It changes whenever that content is replaced or
	// goes away (a Load, a reload of a snapshot that another process
	// wrote, a MongoDB mirror switching generations, Close), and never
	// takes an earlier value again in the store's life. A search begun
	// after Version returned v answers from content v or a later one,
	// never an earlier one: a store makes the new content visible before
	// it reports the new number. 0 means no content read yet. Version is
	// called before every cached answer, so it must cost next to nothing:
	// no I/O, no allocation.
	Version(d Dataset) uint64
}

// Version returns the version of dataset d ("" is Small) that the store
// answers from (see Versioned), and whether it numbers them at all: when
// ok is false, an answer must not be kept for another request.
func (s *Service) Version(d Dataset) (v uint64, ok bool) {
	vs, ok := s.store.(Versioned)
	if !ok {
		return 0, false
	}
	if d == "" {
		d = Small
	}
	return vs.Version(d), true
}
