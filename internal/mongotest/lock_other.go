//go:build !unix

package mongotest

// lock does nothing where there is no flock: two test binaries that start
// at once may both build FerretDB, and the last rename wins.
func lock(string) (unlock func(), err error) { return func() {}, nil }
