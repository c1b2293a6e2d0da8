//go:build !unix

package embedded

import "os"

// lockFile is a no-op where flock is not available: concurrent imports of
// one dataset must then be avoided by the operator.
func lockFile(*os.File) error { return nil }
