//go:build unix

package embedded

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on f, waiting for other holders.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
}
