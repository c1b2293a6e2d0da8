//go:build !linux

package embedded

// collapse leaves b as it is: huge pages are asked for on Linux only (see
// hugepages_linux.go).
func collapse(b []byte) {}
