//go:build !linux

package redistest

import "syscall"

// sysProcAttr is nil where the kernel cannot tie the server to the test
// binary; Main and test cleanups stop it.
func sysProcAttr() *syscall.SysProcAttr { return nil }
