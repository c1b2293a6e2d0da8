//go:build !unix

package embedded

import (
	"io"
	"os"
)

// mapFile reads f into memory where memory mapping is not available.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, nil, err
	}
	return data, func() error { return nil }, nil
}

// lockFile is a no-op where flock is not available: concurrent imports of
// one dataset must then be avoided by the operator.
func lockFile(*os.File) error { return nil }
